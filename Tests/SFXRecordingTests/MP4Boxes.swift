// A small MPEG-4 box reader for the tests, written from ISO/IEC 14496-12's box layout (size,
// type, 64-bit size when size is 1, "to the end" when 0; full boxes with a version byte): the
// top-level order, a box by path, and the few fields the recorder's files are checked for.
import Foundation

struct MP4Boxes {
    struct Box {
        var type: String
        /// The whole box, header included.
        var range: Range<Int>
        /// What follows the header.
        var payload: Range<Int>
    }

    let bytes: [UInt8]
    /// The top-level boxes, in file order.
    let top: [Box]

    init(_ url: URL) throws {
        bytes = [UInt8](try Data(contentsOf: url))
        top = Self.boxes(bytes, in: 0..<bytes.count)
    }

    /// The types of the top-level boxes, in order ("ftyp", "moov", "mdat", …).
    var order: [String] { top.map(\.type) }

    /// The boxes inside `range` (a box's payload, or the file); stops at the first that does not fit.
    static func boxes(_ bytes: [UInt8], in range: Range<Int>) -> [Box] {
        var found: [Box] = []
        var offset = range.lowerBound
        while offset + 8 <= range.upperBound {
            var size = Int(number(bytes, offset, 4))
            var header = 8
            if size == 1 {
                guard offset + 16 <= range.upperBound else { break }
                size = Int(number(bytes, offset + 8, 8))
                header = 16
            } else if size == 0 {
                size = range.upperBound - offset
            }
            guard size >= header, offset + size <= range.upperBound else { break }
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            found.append(Box(type: type, range: offset..<(offset + size), payload: (offset + header)..<(offset + size)))
            offset += size
        }
        return found
    }

    /// The first box at `path` from the top ("moov", "trak", "mdia", "mdhd").
    func box(_ path: String...) -> Box? {
        var level = top
        var current: Box?
        for (i, type) in path.enumerated() {
            guard let next = level.first(where: { $0.type == type }) else { return nil }
            current = next
            if i < path.count - 1 { level = Self.boxes(bytes, in: next.payload) }
        }
        return current
    }

    /// The payloads of every top-level `mdat`, joined: the coded audio, whatever the layout.
    var mediaData: [UInt8] {
        top.filter { $0.type == "mdat" }.flatMap { bytes[$0.payload] }
    }

    /// (timescale, duration) of an `mvhd` or `mdhd` full box (version 0 or 1).
    func timing(_ box: Box) -> (timescale: Int64, duration: Int64) {
        let p = box.payload.lowerBound
        if bytes[p] == 1 { return (Int64(number(bytes, p + 20, 4)), Int64(number(bytes, p + 24, 8))) }
        return (Int64(number(bytes, p + 12, 4)), Int64(number(bytes, p + 16, 4)))
    }

    /// The entries of an `elst`: (segment duration in the movie's timescale, media time in the track's).
    func edits(_ box: Box) -> [(duration: Int64, mediaTime: Int64)] {
        let p = box.payload.lowerBound
        let version = bytes[p]
        let count = Int(number(bytes, p + 4, 4))
        var entries: [(Int64, Int64)] = []
        var offset = p + 8
        for _ in 0..<count {
            if version == 1 {
                entries.append((Int64(number(bytes, offset, 8)), Int64(bitPattern: number(bytes, offset + 8, 8))))
                offset += 20
            } else {
                entries.append((Int64(number(bytes, offset, 4)), Int64(Int32(bitPattern: UInt32(number(bytes, offset + 4, 4))))))
                offset += 12
            }
        }
        return entries
    }

    /// A big-endian number of `count` bytes at `offset`.
    static func number(_ bytes: [UInt8], _ offset: Int, _ count: Int) -> UInt64 {
        bytes[offset..<(offset + count)].reduce(0) { $0 << 8 | UInt64($1) }
    }

    private func number(_ bytes: [UInt8], _ offset: Int, _ count: Int) -> UInt64 { Self.number(bytes, offset, count) }
}

/// The length mutagen (Debian's python3-mutagen, run by /usr/bin/python3) reads from an MPEG-4
/// file: its `mdhd` duration (the media, the encoder's priming included) over its timescale.
func mutagenLength(_ url: URL) throws -> Double {
    let script = "import sys, mutagen.mp4; print(mutagen.mp4.MP4(sys.argv[1]).info.length)"
    let process = Process()
    process.executableURL = URL(filePath: "/usr/bin/python3")
    process.arguments = ["-c", script, url.path]
    let output = Pipe(), errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let problem = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0, let length = Double(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
        throw MutagenMissing(description: "mutagen cannot read \(url.path): \(problem.isEmpty ? text : problem) "
                             + "(install Debian's python3-mutagen: script/common.sh lists it)")
    }
    return length
}

struct MutagenMissing: Error, CustomStringConvertible {
    var description: String
}
