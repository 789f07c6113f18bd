import Foundation
import SFXDevice

enum DevicesCommand: Subcommand {
    static let spec = CommandSpec(
        name: "devices", abstract: "List the ALSA devices sfx can play to.",
        discussion: "Pass a NAME to --device of `sfx play`.",
        positionals: [],
        options: [.flag("json", help: "Print JSON.")])

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let devices = DeviceList.playbackDevices()
        if arguments.flag("json") {
            try printJSON(devices)
            return 0
        }
        if let note = DeviceList.availabilityNote(devices: devices) { print(note) }
        let width = max(4, devices.map(\.name.count).max() ?? 0)
        print("NAME".padding(toLength: width + 2, withPad: " ", startingAt: 0) + "DESCRIPTION")
        for device in devices {
            print(device.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + device.description)
        }
        return 0
    }
}
