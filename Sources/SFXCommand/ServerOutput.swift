import FoundationEssentials
import Glibc
import SFXDevice

/// On a machine with no sound card, a running sound server is heard where sfx's virtual card
/// is not: `sfx play` goes to the server's ALSA PCM (`pipewire`, else `pulse`) when no device
/// is given, ALSA is not pointed elsewhere (ALSA_CONFIG_PATH) and SFX_VIRTUAL_CARD is not 1.
enum ServerOutput {
    static func choice(deviceGiven: Bool,
                       environment: [String: String] = ProcessInfo.processInfo.environment) -> (server: SoundServerKind, pcm: String)? {
        guard !deviceGiven, environment["ALSA_CONFIG_PATH"] == nil,
              environment[VirtualCardFallback.environmentKey] != "1", !DeviceList.hasSoundCard else { return nil }
        return SoundServer.preferredPCM(environment: environment)
    }
}
