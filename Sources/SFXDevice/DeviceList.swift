import CALSA
import FoundationEssentials
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

    /// A line on what can play here, for `sfx devices`; nil when there is a sound card. Without
    /// a card, the PCMs that lead to a running sound server still play; card devices need one.
    public static func availabilityNote(devices: [PCMDevice],
                                        environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        guard !hasSoundCard else { return nil }
        let running = SoundServer.reachable(environment: environment)
        let reaching = devices.map(\.name).filter { name in
            SoundServer.server(behind: name).map(running.contains) ?? false
        }
        guard let chosen = SoundServer.preferredPCM(environment: environment) else {
            return "(no sound card and no sound server running: `sfx play` uses sfx's virtual card; the devices below need a card or a server)"
        }
        return "(no sound card: `sfx play` plays through the \(chosen.server.rawValue) server with `\(chosen.pcm)`; "
            + "\(reaching.map { "`\($0)`" }.joined(separator: ", ")) reach a running server, the other devices need a card)"
    }

    private static func take(_ string: UnsafeMutablePointer<CChar>?) -> String? {
        guard let string else { return nil }
        defer { free(string) }
        return String(cString: string)
    }
}
