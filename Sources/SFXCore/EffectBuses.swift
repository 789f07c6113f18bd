/// One effect bus of the mixer: the processor on it (unretained: see
/// `MixerCommand.setEffect`), the key it is released under, and the group its output returns
/// into. Plain data, copied by snapshots; the processor's own small state is saved beside.
struct EffectBus {
    var processor: Unmanaged<EffectProcessor>?
    var key: UInt32 = 0
    var returnGroup = 0
}

/// A voice's send levels to the effect buses, each gliding as gains do. Plain data.
struct VoiceSends {
    var bus0 = Ramp(0), bus1 = Ramp(0), bus2 = Ramp(0), bus3 = Ramp(0)

    init(_ levels: SIMD4<Float> = .zero) {
        bus0 = Ramp(levels[0])
        bus1 = Ramp(levels[1])
        bus2 = Ramp(levels[2])
        bus3 = Ramp(levels[3])
    }

    subscript(bus: Int) -> Ramp {
        get {
            switch bus {
            case 0: bus0
            case 1: bus1
            case 2: bus2
            default: bus3
            }
        }
        set {
            switch bus {
            case 0: bus0 = newValue
            case 1: bus1 = newValue
            case 2: bus2 = newValue
            default: bus3 = newValue
            }
        }
    }

    /// Whether bus `bus` gets anything now or later in its glide.
    @inline(__always)
    func sends(to bus: Int) -> Bool {
        let ramp = self[bus]
        return ramp.target != 0 || !ramp.isSettled
    }

    /// Whether any of the first `count` buses gets anything.
    @inline(__always)
    func any(_ count: Int) -> Bool {
        for bus in 0..<count where sends(to: bus) { return true }
        return false
    }

    /// A send level in range: 0…1, NaN as 0.
    static func clamped(_ level: Float) -> Float { level.isNaN ? 0 : min(max(level, 0), 1) }
}
