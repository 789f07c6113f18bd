import CALSA
import Glibc

/// An ALSA PCM that can play, as `sfx devices` lists it.
public struct PCMDevice: Sendable, Codable, Equatable {
    /// The name to pass as `--device` (e.g. "default", "hw:CARD=PCH,DEV=0", "sfxcard").
    public let name: String
    /// ALSA's description, first line.
    public let description: String
}

public enum DeviceList {
    /// The playback PCMs alsa-lib knows from its configuration and the cards present
    /// (`snd_device_name_hint`), "default" first.
    public static func playbackDevices() -> [PCMDevice] {
        ALSALibrary.ready
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        guard snd_device_name_hint(-1, "pcm", &hints) == 0, let hints else { return [] }
        defer { snd_device_name_free_hint(hints) }
        var devices: [PCMDevice] = []
        var cursor = hints
        while let hint = cursor.pointee {
            defer { cursor += 1 }
            let name = take(snd_device_name_get_hint(hint, "NAME"))
            let direction = take(snd_device_name_get_hint(hint, "IOID"))
            guard let name, direction == nil || direction == "Output" else { continue }
            let description = take(snd_device_name_get_hint(hint, "DESC"))?
                .split(separator: "\n").joined(separator: ", ") ?? ""
            devices.append(PCMDevice(name: name, description: description))
        }
        return devices.sorted { ($0.name == "default" ? 0 : 1, $0.name) < ($1.name == "default" ? 0 : 1, $1.name) }
    }

    /// Whether any sound card exists (`/proc/asound/cards` lists one, or alsa-lib finds a card).
    public static var hasSoundCard: Bool {
        var card: Int32 = -1
        return snd_card_next(&card) == 0 && card >= 0
    }

    private static func take(_ string: UnsafeMutablePointer<CChar>?) -> String? {
        guard let string else { return nil }
        defer { free(string) }
        return String(cString: string)
    }
}
