import CSFXHaptics

/// Byte images of the kernel's `struct ff_effect` and `struct input_event`.
///
/// Sizes and offsets come from the C shim, which takes them from <linux/input.h> with `sizeof` and
/// `offsetof`; fields are stored in the machine's byte order, as the kernel reads them. Fields not
/// written (direction, trigger, replay delay, the event's time stamp) stay zero.
enum InputLayout {
    static let eventTypeForceFeedback = UInt16(sfxh_ev_ff())
    static let eventTypeCount = Int(sfxh_ev_max()) + 1
    static let rumble = UInt16(sfxh_ff_rumble())
    static let gain = UInt16(sfxh_ff_gain())
    static let forceFeedbackCodeCount = Int(sfxh_ff_max()) + 1

    static let uploadEffect = UInt(sfxh_eviocsff())
    static let removeEffect = UInt(sfxh_eviocrmff())

    /// EVIOCGBIT for `type`, filling `length` bytes of bits.
    static func eventBitsRequest(type: UInt16, length: Int) -> UInt {
        UInt(sfxh_eviocgbit(UInt32(type), UInt32(length)))
    }

    /// An FF_RUMBLE `ff_effect`: `id` −1 asks the kernel for a new id, an existing id updates that
    /// effect; it plays for `milliseconds` once started.
    static func rumbleEffect(id: Int16, milliseconds: UInt16, strongMagnitude: UInt16, weakMagnitude: UInt16) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: sfxh_ff_effect_size())
        bytes.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: rumble, toByteOffset: sfxh_ff_effect_type_offset(), as: UInt16.self)
            raw.storeBytes(of: id, toByteOffset: sfxh_ff_effect_id_offset(), as: Int16.self)
            raw.storeBytes(of: milliseconds, toByteOffset: sfxh_ff_effect_replay_length_offset(), as: UInt16.self)
            raw.storeBytes(of: strongMagnitude, toByteOffset: sfxh_ff_effect_rumble_strong_offset(), as: UInt16.self)
            raw.storeBytes(of: weakMagnitude, toByteOffset: sfxh_ff_effect_rumble_weak_offset(), as: UInt16.self)
        }
        return bytes
    }

    /// The effect id in an `ff_effect` image (the kernel writes the one it assigned there).
    static func effectID(in effect: [UInt8]) -> Int16 {
        effect.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: sfxh_ff_effect_id_offset(), as: Int16.self) }
    }

    /// An `input_event` with a zero time stamp (the kernel ignores it on write).
    static func event(type: UInt16, code: UInt16, value: Int32) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: sfxh_input_event_size())
        bytes.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: type, toByteOffset: sfxh_input_event_type_offset(), as: UInt16.self)
            raw.storeBytes(of: code, toByteOffset: sfxh_input_event_code_offset(), as: UInt16.self)
            raw.storeBytes(of: value, toByteOffset: sfxh_input_event_value_offset(), as: Int32.self)
        }
        return bytes
    }

    /// Whether bit `index` is set in a bit array as EVIOCGBIT fills it (longs, lowest bit first;
    /// on a little-endian machine that is byte `index / 8`, bit `index % 8`).
    static func isSet(_ index: Int, in bits: [UInt8]) -> Bool {
        let word = MemoryLayout<UInt>.size
        let words = bits.withUnsafeBytes { raw in
            (0..<(bits.count / word)).map { raw.loadUnaligned(fromByteOffset: $0 * word, as: UInt.self) }
        }
        let bitsPerWord = word * 8
        guard index / bitsPerWord < words.count else { return false }
        return words[index / bitsPerWord] & (1 << UInt(index % bitsPerWord)) != 0
    }

    /// Bytes needed for a bit array of `count` bits, rounded up to whole longs as the kernel writes them.
    static func bitArrayLength(_ count: Int) -> Int {
        let bitsPerWord = MemoryLayout<UInt>.size * 8
        return (count + bitsPerWord - 1) / bitsPerWord * MemoryLayout<UInt>.size
    }
}
