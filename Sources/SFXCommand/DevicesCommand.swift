import FoundationEssentials
import SFXSystem
import Glibc
import SFXDevice

enum DevicesCommand: Subcommand {
    static let spec = CommandSpec(
        name: "devices", abstract: "List the ALSA devices sfx can play to, and the sound cards with their PCMs.",
        discussion: "Pass a NAME to --device of `sfx play`. The cards and PCMs are the kernel's, as `aplay -l` lists them; hw:CARD,DEVICE plays to one directly.",
        examples: ["sfx devices", "sfx devices --json", "sfx play bell --device hw:0,0"],
        positionals: [],
        options: [json])

    static let json = OptionSpec.flag("json", help: "Print JSON: devices (name, description) and cards (index, id, name, pcms).")

    struct Listing: Encodable {
        let devices: [PCMDevice]
        let cards: [SoundCard]
    }

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let devices = DeviceList.playbackDevices()
        let cards = SoundCard.all()
        if arguments.flag(json) {
            try printJSON(Listing(devices: devices, cards: cards))
            return 0
        }
        if let note = DeviceList.availabilityNote(devices: devices) { print(note) }
        let width = max(4, devices.map(\.name.count).max() ?? 0)
        print("NAME".padded(to: width + 2) + "DESCRIPTION")
        for device in devices {
            print(device.name.padded(to: width + 2) + device.description)
        }
        print("\nSOUND CARDS (as aplay -l):")
        if cards.isEmpty { print("  none: the kernel lists no sound card (/proc/asound/cards)") }
        for card in cards {
            if card.pcms.isEmpty { print("card \(card.index): \(card.id) [\(card.name)], no PCM devices") }
            for pcm in card.pcms {
                let directions = [pcm.playback ? "playback" : nil, pcm.capture ? "capture" : nil].compactMap { $0 }.joined(separator: ", ")
                print("card \(card.index): \(card.id) [\(card.name)], device \(pcm.device): \(pcm.id) [\(pcm.name)] — \(pcm.alsaName), \(directions)")
            }
        }
        return 0
    }
}
