/// The output options of `play` and `alert`, declared once: each option's spec and its typed
/// value. nil means "not given": the library's default then holds (or, for the period, the
/// output kind's: `OutputKind`), so no default is restated here.
struct OutputOptions {
    static let device = OptionSpec.option("device", short: "D", value: "PCM", help: "The ALSA device (default: the settings file, else default); see `sfx devices`.")
    static let rate = OptionSpec.option("rate", value: "HZ", help: "Sample rate to ask for, 8000 to 192000 (default 48000).")
    static let period = OptionSpec.option("period", value: "FRAMES", help: "Period size to ask for, 16 to 16384 (default 128 on a card, 512 through a sound server).")
    static let periods = OptionSpec.option("periods", value: "N", help: "Periods in the buffer, 2 to 64 (default 3).")
    static let verbose = OptionSpec.flag("verbose", short: "v", help: "Print the device setup as negotiated (format, period, buffer, latency, SCHED_FIFO), and the xruns at the end.")
    static let quiet = OptionSpec.flag("quiet", short: "q", help: "Print no notices (where the virtual card recorded, settings warnings); errors still go to stderr.")

    static let specs = [device, rate, period, periods, verbose, quiet]

    var device: String?
    var sampleRate: Int?
    var periodFrames: Int?
    var periodCount: Int?
    var verbose = false
    var quiet = false

    init() {}

    init(_ arguments: ParsedArguments) throws(UsageError) {
        device = arguments.value(Self.device.name)
        sampleRate = try arguments.integer(Self.rate.name, in: 8000...192_000)
        periodFrames = try arguments.integer(Self.period.name, in: 16...16_384)
        periodCount = try arguments.integer(Self.periods.name, in: 2...64)
        verbose = arguments.flag(Self.verbose.name)
        quiet = arguments.flag(Self.quiet.name)
        if verbose, quiet {
            throw UsageError(message: "give --verbose or --quiet, not both", command: arguments.spec)
        }
    }
}
