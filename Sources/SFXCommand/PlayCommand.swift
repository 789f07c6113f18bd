import Foundation
import SFX
import SFXCore
import SFXMedia

enum PlayCommand: Subcommand {
    static let spec = CommandSpec(
        name: "play", abstract: "Play sounds and exit when they are done.",
        discussion: """
        The sounds start together. Ctrl-C fades them out and exits. On a machine with no sound \
        card, and no --device given, sfx plays through its virtual card and says where the \
        card's recording is.
        """,
        positionals: [PositionalSpec(name: "NAME|FILE", help: "System sound names or sound files.", min: 1, max: nil)],
        options: [.option("volume", value: "GAIN", help: "Gain, 0 to 1 (default 1)."),
                  .option("pan", value: "PAN", help: "Pan, -1 (left) to 1 (right) (default 0)."),
                  .option("loops", value: "N", help: "Extra repeats; -1 repeats until Ctrl-C (default 0)."),
                  .flag("normalize", help: "Bring sound files to one loudness (-23 LUFS, true peak at most -1 dBTP) before playing."),
                  .option("normalize-to", value: "LUFS", help: "Like --normalize, to this loudness (-70 to 0).")]
            + EngineSession.options)

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let volume = Float(try arguments.number("volume", in: 0...1) ?? 1)
        let pan = Float(try arguments.number("pan", in: -1...1) ?? 0)
        let loops = try arguments.integer("loops", in: -1...1_000_000) ?? 0
        let normalize = try normalization(arguments)
        let session = try EngineSession(arguments)
        let sounds = try arguments.positionals.map {
            try SoundArgument($0).load(into: session.engine.library, normalize: normalize)
        }
        let interrupted = Interruption()
        interrupted.onInterrupt { try? session.engine.stopAll(fade: .milliseconds(30)) }
        for sound in sounds {
            session.engine.play(sound, volume: volume, pan: pan, loops: loops)
        }
        session.finish()
        return interrupted.happened ? 130 : 0
    }

    /// `--normalize` or `--normalize-to LUFS`; nil when neither is given.
    static func normalization(_ arguments: ParsedArguments) throws -> LoudnessNormalization? {
        if let target = try arguments.number("normalize-to", in: -70...0) {
            return LoudnessNormalization(target: target)
        }
        return arguments.flag("normalize") ? .standard : nil
    }
}
