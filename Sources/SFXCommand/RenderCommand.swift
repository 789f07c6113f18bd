import Foundation
import SFX
import SFXCore
import SFXMedia

enum RenderCommand: Subcommand {
    static let spec = CommandSpec(
        name: "render", abstract: "Mix sounds offline into a WAV file (a debugging aid).",
        discussion: """
        Each sound starts at the time the --at of the same position gives (0 when absent), mixed \
        by the same mixer that plays in real time, so the file is what the device would get.
        """,
        positionals: [PositionalSpec(name: "NAME|FILE", help: "System sound names or sound files.", min: 1, max: nil)],
        options: [.option("output", short: "o", value: "FILE", help: "The WAV file to write (required)."),
                  .option("at", value: "SECONDS", repeatable: true, help: "When the sound of the same position starts (0 to \(OfflineMix.maximumSeconds); it must end by then)."),
                  .option("volume", value: "GAIN", help: "Gain of every sound, 0 to 1 (default 1)."),
                  .option("pan", value: "PAN", help: "Pan of every sound, -1 (left) to 1 (right) (default 0)."),
                  .option("rate", value: "HZ", help: "Sample rate (default 48000).")])

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        guard let output = arguments.value("output") else {
            throw UsageError(message: "missing '--output FILE'", command: spec)
        }
        // The mix stops at OfflineMix.maximumSeconds: a start at or after it would be lost.
        let longest = Double(OfflineMix.maximumSeconds)
        let starts = try arguments.values("at").map {
            try ParsedArguments.number($0, option: "at", in: 0...longest, spec: spec)
        }
        guard starts.count <= arguments.positionals.count else {
            throw UsageError(message: "more --at times (\(starts.count)) than sounds (\(arguments.positionals.count))", command: spec)
        }
        var configuration = SoundLibrary.Configuration()
        if let rate = try arguments.integer("rate", in: 8000...192_000) {
            configuration.format = AudioFormat(sampleRate: rate, channels: 2)
        }
        let library = try SoundLibrary(configuration: configuration)
        let volume = Float(try arguments.number("volume", in: 0...1) ?? 1)
        let pan = Float(try arguments.number("pan", in: -1...1) ?? 0)
        var plays: [OfflineMix.Play] = []
        for (i, text) in arguments.positionals.enumerated() {
            let id = try SoundArgument(text).load(into: library)
            let at = i < starts.count ? starts[i] : 0
            // A sound that would run past the end of the mix is refused rather than cut short.
            if let cue = library.cue(for: id), at + cue.duration > longest {
                throw Failure("render: \(text) starts at \(seconds(at)) and lasts \(seconds(cue.duration)), past the "
                              + "\(OfflineMix.maximumSeconds) s a render may last; start it by \(seconds(max(0, longest - cue.duration)))")
            }
            plays.append(OfflineMix.Play(sound: id, at: at, volume: volume, pan: pan))
        }
        let frames = try OfflineMix.render(plays, library: library, to: URL(filePath: output))
        print("wrote \(output): \(frames) frames, \(seconds(Double(frames) / Double(configuration.format.sampleRate))) at \(configuration.format)")
        return 0
    }
}
