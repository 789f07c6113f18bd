import FoundationEssentials
import SFXSystem
import Glibc

/// The sound cards and their PCM devices as the kernel lists them (`/proc/asound/cards` and
/// `/proc/asound/pcm`), which is what `aplay -l` shows.
struct SoundCard: Encodable, Equatable {
    struct PCM: Encodable, Equatable {
        let device: Int
        let id: String
        let name: String
        let playback: Bool
        let capture: Bool
        /// What to pass to --device: `hw:CARD,DEVICE`.
        let alsaName: String
    }

    let index: Int
    let id: String
    let name: String
    let pcms: [PCM]

    /// The cards under `directory` (normally /proc/asound); empty when there is none.
    static func all(in directory: String = "/proc/asound") -> [SoundCard] {
        let cards = (try? String(contentsOfFile: directory + "/cards", encoding: .utf8)) ?? ""
        let pcms = (try? String(contentsOfFile: directory + "/pcm", encoding: .utf8)) ?? ""
        return parse(cards: cards, pcms: pcms)
    }

    /// `cards`: lines ` 0 [PCH            ]: HDA-Intel - HDA Intel PCH` (each followed by an
    /// indented line); `pcms`: lines `00-00: ALC887 Analog : ALC887 Analog : playback 1 : capture 1`.
    static func parse(cards: String, pcms: String) -> [SoundCard] {
        var devices: [Int: [PCM]] = [:]
        for line in pcms.split(separator: "\n") {
            let fields = line.components(separatedBy: ": ")
            let numbers = fields[0].split(separator: "-")
            guard fields.count >= 3, numbers.count == 2, let card = Int(numbers[0]), let device = Int(numbers[1]) else { continue }
            let rest = fields.dropFirst(3)
            devices[card, default: []].append(PCM(
                device: device, id: fields[1].trimmed, name: fields[2].trimmed,
                playback: rest.contains { $0.hasPrefix("playback") }, capture: rest.contains { $0.hasPrefix("capture") },
                alsaName: "hw:\(card),\(device)"))
        }
        var result: [SoundCard] = []
        for line in cards.split(separator: "\n") {
            let text = line.trimmed
            guard let open = text.firstIndex(of: "["), let close = text.firstIndex(of: "]"), open < close,
                  let index = Int(text[..<open].trimmed) else { continue }
            let id = text[text.index(after: open)..<close].trimmed
            let after = text[text.index(after: close)...]
            let name = after.firstRange(of: " - ").map { String(after[$0.upperBound...]) } ?? after.trimmed(of: ": ")
            result.append(SoundCard(index: index, id: id, name: name, pcms: devices[index] ?? []))
        }
        return result
    }
}
