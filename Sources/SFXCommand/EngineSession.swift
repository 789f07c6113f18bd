import Foundation
import SFX
import SFXCardSupport

/// A sound engine for one command (`play`, `alert`): the output options, the user's settings,
/// and sfx's virtual card on a machine with no sound card.
struct EngineSession {
    static let options: [OptionSpec] = [
        .option("device", short: "D", value: "PCM", help: "The ALSA device (default: default); see `sfx devices`."),
        .option("rate", value: "HZ", help: "Sample rate to ask for (default 48000)."),
        .option("period", value: "FRAMES", help: "Period size to ask for (default 128)."),
        .option("periods", value: "N", help: "Periods in the buffer (default 3)."),
    ]

    let engine: SoundEngine
    let card: VirtualCard?

    init(_ arguments: ParsedArguments, settings: UserSettings? = nil) throws {
        var configuration = SoundEngine.Configuration()
        let settings = try settings ?? UserSettings.load()
        settings.apply(to: &configuration)
        if let device = arguments.value("device") { configuration.output.device = device }
        configuration.output.sampleRate = try arguments.integer("rate", in: 8000...192_000) ?? 48_000
        configuration.output.periodFrames = try arguments.integer("period", in: 16...16_384) ?? 128
        configuration.output.periodCount = try arguments.integer("periods", in: 2...64) ?? 3
        let fallback = try VirtualCardFallback.engage(deviceGiven: arguments.value("device") != nil || settings.device != nil)
        card = fallback?.card
        if let fallback {
            configuration.output.device = fallback.card.pcmName
            printError("\(fallback.reason): playing through sfx's virtual card (\(fallback.card.directory.path))")
        }
        do {
            engine = try SoundEngine(configuration: configuration)
        } catch let error as ALSAError {
            throw Failure("\(error)")
        }
    }

    /// Waits for every sound to end, closes the engine, and says where the virtual card's
    /// recording is.
    func finish() {
        while !engine.waitUntilIdle(timeout: .seconds(1)) {}
        engine.close()
        if let card, let recording = card.recordingURLs().last {
            print("the virtual card recorded what it played to \(recording.path)")
        }
    }
}
