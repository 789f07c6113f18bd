import SFXCore

/// What the real-time thread sends back, beside the mixer's own events.
enum OutputNotice: Sendable, BitwiseCopyable {
    case mixer(MixerEvent)
    case xrun
    /// The device's negative errno.
    case deviceLost(Int32)
    case deviceRestored
    case closedWhenIdle
}
