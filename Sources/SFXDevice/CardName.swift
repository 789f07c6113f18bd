import FoundationEssentials
import SFXSystem
import Glibc

/// A device name that names a card, resolved against the cards there are now: which card it is
/// (index and stable id) and the name that follows the card by its id whatever index the kernel
/// gives it when it is plugged in again.
///
///     CardName.resolve("hw:1,0")       // card 1, id "Speaker": stableName "hw:CARD=Speaker,DEV=0"
///     CardName.resolve("plughw:1")     // "plughw:CARD=Speaker,DEV=0"
///     CardName.resolve("default")      // nil: no card in the name
///
/// Names are read as alsa-lib's `hw`-style definitions take their arguments: `PREFIX:CARD[,DEV[,SUBDEV]]`
/// positionally or `PREFIX:CARD=…,DEV=…,SUBDEV=…` by key (hw, plughw, front, sysdefault and
/// the like); CARD is an index or an id. The cards are read from an asound tree laid out like
/// /proc/asound (`cardN/id`), given as a parameter so that tests use a tree of their own.
public struct CardName: Sendable, Equatable {
    /// The PCM definition the name opens ("hw", "plughw", …).
    public var prefix: String
    /// The card's index now (/proc/asound/cardN).
    public var cardIndex: Int
    /// The card's stable name (/proc/asound/cardN/id).
    public var cardID: String
    /// The device on the card (DEV; 0 when the name gives none).
    public var device: Int
    /// SUBDEV when the name gives one.
    public var subdevice: Int?
    /// Whether the name gave DEV (hw and plughw get DEV=0 in `stableName` either way).
    private var namesDevice: Bool

    /// The same device by the card's id: "hw:CARD=Speaker,DEV=0".
    public var stableName: String {
        var name = "\(prefix):CARD=\(cardID)"
        if namesDevice || prefix == "hw" || prefix == "plughw" { name += ",DEV=\(device)" }
        if let subdevice { name += ",SUBDEV=\(subdevice)" }
        return name
    }

    /// The card `name` names and its stable form, or nil when the name names no card (no
    /// arguments, no CARD) or the card is not in `asoundRoot` now.
    public static func resolve(_ name: String, asoundRoot: String = "/proc/asound") -> CardName? {
        guard let parsed = parse(name) else { return nil }
        let card: (index: Int, id: String)?
        if let index = Int(parsed.card) {
            card = cardID(index: index, asoundRoot: asoundRoot).map { (index, $0) }
        } else {
            card = cardIndex(id: parsed.card, asoundRoot: asoundRoot).map { ($0, parsed.card) }
        }
        guard let card else { return nil }
        return CardName(prefix: parsed.prefix, cardIndex: card.index, cardID: card.id, device: parsed.device ?? 0,
                        subdevice: parsed.subdevice, namesDevice: parsed.device != nil)
    }

    /// The pieces of a `PREFIX:ARGS` name (CARD as written: an index or an id), or nil when it
    /// has no CARD argument or an argument that is not a whole number where one is needed.
    public static func parse(_ name: String) -> (prefix: String, card: String, device: Int?, subdevice: Int?)? {
        guard let colon = name.firstIndex(of: ":") else { return nil }
        let prefix = String(name[..<colon])
        let arguments = name[name.index(after: colon)...].split(separator: ",", omittingEmptySubsequences: false)
        guard !prefix.isEmpty, !arguments.isEmpty else { return nil }
        var card: String?, device: Int?, subdevice: Int?
        for (position, argument) in arguments.enumerated() {
            let pair = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = pair.count == 2 ? pair[0].uppercased() : ["CARD", "DEV", "SUBDEV"][safe: position] ?? ""
            var value = String(pair.count == 2 ? pair[1] : pair[0])
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            switch key {
            case "CARD": card = value
            case "DEV": guard let number = Int(value) else { return nil }; device = number
            case "SUBDEV": guard let number = Int(value) else { return nil }; subdevice = number
            default: return nil
            }
        }
        guard let card, !card.isEmpty else { return nil }
        return (prefix, card, device, subdevice)
    }

    /// The id of card `index` (`<root>/card<index>/id`), or nil when there is no such card.
    public static func cardID(index: Int, asoundRoot: String = "/proc/asound") -> String? {
        guard index >= 0, let text = try? String(contentsOfFile: "\(asoundRoot)/card\(index)/id", encoding: .utf8) else { return nil }
        let id = text.trimmed
        return id.isEmpty ? nil : id
    }

    /// The index of the card whose id is `id` now, or nil when no card has it.
    public static func cardIndex(id: String, asoundRoot: String = "/proc/asound") -> Int? {
        cards(asoundRoot: asoundRoot).first { $0.id == id }?.index
    }

    /// The cards in `asoundRoot` now, by index: each `cardN` directory with its id.
    public static func cards(asoundRoot: String = "/proc/asound") -> [(index: Int, id: String)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: asoundRoot)) ?? []
        return names.compactMap { name -> (index: Int, id: String)? in
            guard name.hasPrefix("card"), let index = Int(name.dropFirst(4)), let id = cardID(index: index, asoundRoot: asoundRoot) else { return nil }
            return (index, id)
        }.sorted { $0.index < $1.index }
    }

    /// The program that holds the device `name` names for playback: the first substream of its
    /// `<root>/cardN/pcmDp/subS/status` with an `owner_pid` (alsa-lib's own status file of an open
    /// hw device), with its command from `<procRoot>/PID/comm`; nil when the name names no card
    /// or no substream says who holds it.
    public static func playbackOwner(of name: String, asoundRoot: String = "/proc/asound",
                                     procRoot: String = "/proc") -> (pid: Int32, command: String?)? {
        guard let card = resolve(name, asoundRoot: asoundRoot) else { return nil }
        let pcm = "\(asoundRoot)/card\(card.cardIndex)/pcm\(card.device)p"
        let subdevices = card.subdevice.map { ["sub\($0)"] }
            ?? ((try? FileManager.default.contentsOfDirectory(atPath: pcm)) ?? []).filter { $0.hasPrefix("sub") }.sorted()
        for sub in subdevices {
            guard let status = try? String(contentsOfFile: "\(pcm)/\(sub)/status", encoding: .utf8) else { continue }
            for line in status.split(separator: "\n") where line.hasPrefix("owner_pid") {
                guard let value = line.split(separator: ":").last.flatMap({ Int32($0.trimmed) }) else { continue }
                let command = (try? String(contentsOfFile: "\(procRoot)/\(value)/comm", encoding: .utf8))?
                    .trimmed
                return (value, command.flatMap { $0.isEmpty ? nil : $0 })
            }
        }
        return nil
    }
}

private extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
