import CALSA
import Glibc

/// The playback switch and volume of an output's mixer ("Master", else "PCM"), read and set
/// through the ordinary snd_mixer API: how sfx tells that the output is muted.
public struct MasterState: Sendable, Equatable, Codable {
    /// The simple control used: "Master" or "PCM".
    public var control: String
    /// The playback switch (all channels on), or nil when the control has none.
    public var switchOn: Bool?
    /// The volume from 0 (minimum) to 1 (maximum), or nil when the control has none.
    public var volume: Double?

    /// The switch is off or the volume is at its minimum.
    public var isMuted: Bool { switchOn == false || volume == 0 }
}

/// The mixer of the card behind a PCM name. Plugin devices without a control interface have no
/// mixer: `init` throws, and mute detection from the mixer is unavailable for them.
public final class MixerControl: @unchecked Sendable {
    /// The control-interface name attached ("default", "hw:0", "sfxcard", …).
    public let name: String
    private var mixer: OpaquePointer?
    private let element: OpaquePointer
    private let control: String

    /// Attaches to the control interface of `device` (a PCM name: "hw:0,0" → "hw:0",
    /// "plughw:1,0" → "hw:1", others as they are) and finds its Master or PCM control.
    public init(device: String) throws(ALSAError) {
        ALSALibrary.ready
        name = Self.controlName(forPCM: device)
        var handle: OpaquePointer?
        try check(snd_mixer_open(&handle, 0), name, "open mixer")
        do {
            try check(snd_mixer_attach(handle, name), name, "attach mixer")
            try check(snd_mixer_selem_register(handle, nil, nil), name, "register mixer elements")
            try check(snd_mixer_load(handle), name, "load mixer")
        } catch {
            snd_mixer_close(handle)
            throw error
        }
        var found: (OpaquePointer, String)?
        for candidate in ["Master", "PCM"] where found == nil {
            var id: OpaquePointer?
            snd_mixer_selem_id_malloc(&id)
            snd_mixer_selem_id_set_name(id, candidate)
            snd_mixer_selem_id_set_index(id, 0)
            if let element = snd_mixer_find_selem(handle, id) { found = (element, candidate) }
            snd_mixer_selem_id_free(id)
        }
        guard let found else {
            snd_mixer_close(handle)
            throw ALSAError(device: name, operation: "find a Master or PCM playback control", code: -ENOENT)
        }
        mixer = handle
        (element, control) = found
    }

    deinit {
        if let mixer { snd_mixer_close(mixer) }
    }

    static func controlName(forPCM device: String) -> String {
        for prefix in ["plughw:", "hw:"] where device.hasPrefix(prefix) {
            let card = device.dropFirst(prefix.count).split(separator: ",").first ?? "0"
            return "hw:\(card)"
        }
        return device
    }

    /// The control's state now (pending events are handled first, so changes made by other
    /// programs, such as amixer, are seen).
    public func read() -> MasterState {
        snd_mixer_handle_events(mixer)
        var state = MasterState(control: control)
        if snd_mixer_selem_has_playback_switch(element) != 0 {
            var on = true
            for channel in channels() {
                var value: Int32 = 0
                snd_mixer_selem_get_playback_switch(element, channel, &value)
                on = on && value != 0
            }
            state.switchOn = on
        }
        if snd_mixer_selem_has_playback_volume(element) != 0 {
            var low = 0, high = 0, value = 0
            snd_mixer_selem_get_playback_volume_range(element, &low, &high)
            snd_mixer_selem_get_playback_volume(element, SND_MIXER_SCHN_FRONT_LEFT, &value)
            state.volume = high > low ? Double(value - low) / Double(high - low) : nil
        }
        return state
    }

    /// Sets the playback switch of every channel.
    public func setSwitch(_ on: Bool) throws(ALSAError) {
        try check(snd_mixer_selem_set_playback_switch_all(element, on ? 1 : 0), name, "set \(control) switch")
    }

    /// Sets the volume of every channel, 0 (minimum) to 1 (maximum).
    public func setVolume(_ volume: Double) throws(ALSAError) {
        var low = 0, high = 0
        snd_mixer_selem_get_playback_volume_range(element, &low, &high)
        let value = low + Int((Double(high - low) * min(max(volume, 0), 1)).rounded())
        try check(snd_mixer_selem_set_playback_volume_all(element, value), name, "set \(control) volume")
    }

    private func channels() -> [snd_mixer_selem_channel_id_t] {
        if snd_mixer_selem_is_playback_mono(element) != 0 { return [SND_MIXER_SCHN_MONO] }
        return [SND_MIXER_SCHN_FRONT_LEFT, SND_MIXER_SCHN_FRONT_RIGHT].filter {
            snd_mixer_selem_has_playback_channel(element, $0) != 0
        }
    }
}
