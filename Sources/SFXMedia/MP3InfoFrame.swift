import FoundationEssentials
import Glibc

/// The length of an MP3 recording as it grows, kept in its first frame.
///
/// LAME begins the stream with an empty frame that libsndfile fills with the Xing/LAME tag
/// (frame count, byte count, seek table, encoder delay) when the file is closed. Until then
/// readers find no frame count and estimate the length from the file's size and that first
/// frame's bit rate (128 kb/s), which for a variable bit rate is far off: a recording killed
/// after 2.5 s read as 1.47 s, and libsndfile, which stops at the length it was given, decoded
/// no more. So at each checkpoint the frames complete on disk are counted (only those added
/// since the last count are read) and the empty first frame gets a Xing tag with that count and
/// the byte count; libsndfile's own tag replaces it at a normal close. After a failed write the
/// count is written over libsndfile's tag too, which counted frames that never reached the disk.
final class MP3InfoFrame {
    private let fd: Int32
    /// Where the first frame (the tag's) begins, its length and where its tag goes; nil until found.
    private var first: (offset: Int64, length: Int, tag: Int)?
    /// The end of the last complete frame counted, and the frames counted after the first.
    private var scanned: Int64 = 0
    private var frames: UInt32 = 0
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)

    init(descriptor fd: Int32) { self.fd = fd }

    /// Where the last complete frame counted ends (nil before the first count): after a failed
    /// write the file is cut there, so no torn frame follows.
    var completeLength: Int64? { first == nil ? nil : scanned }

    /// Counts the complete frames now on disk and writes the count into the first frame: a Xing
    /// tag in LAME's empty frame, or the counts of the tag already there. Returns false when the
    /// file does not begin with a frame whose tag can be kept (nothing is written then).
    @discardableResult
    func update(replacingTag: Bool = false) -> Bool {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return false }
        let size = Int64(st.st_size)
        if first == nil {
            guard let found = findFirstFrame(size: size) else { return false }
            first = found
            scanned = found.offset + Int64(found.length)
        }
        guard let first else { return false }
        countFrames(upTo: size)
        var frame = [UInt8](repeating: 0, count: first.length)
        guard pread(fd, &frame, first.length, off_t(first.offset)) == first.length else { return false }
        let tag = first.tag
        let name = String(decoding: frame[tag..<tag + 4], as: UTF8.self)
        let bytes = UInt32(clamping: scanned - first.offset)
        if name == "Xing" || name == "Info", !replacingTag {
            let flags = Self.number(frame, at: tag + 4)
            var at = tag + 8
            if flags & 1 != 0 { Self.put(frames, into: &frame, at: at); at += 4 }
            if flags & 2 != 0 { Self.put(bytes, into: &frame, at: at) }
        } else if name == "Xing" || name == "Info" || frame[tag...].allSatisfy({ $0 == 0 }) {
            // An empty frame (or, after a failure, a tag whose counts, seek table and gapless
            // figures all describe frames that are not there): frames and bytes alone.
            for i in tag..<frame.count { frame[i] = 0 }
            frame.replaceSubrange(tag..<tag + 4, with: Array("Xing".utf8))
            Self.put(3, into: &frame, at: tag + 4)
            Self.put(frames, into: &frame, at: tag + 8)
            Self.put(bytes, into: &frame, at: tag + 12)
        } else {
            return false
        }
        return pwrite(fd, frame, first.length, off_t(first.offset)) == first.length
    }

    /// The first frame: after an ID3v2 tag if there is one; its tag follows the side information.
    private func findFirstFrame(size: Int64) -> (offset: Int64, length: Int, tag: Int)? {
        var head = [UInt8](repeating: 0, count: 10)
        guard pread(fd, &head, 10, 0) == 10 else { return nil }
        var offset: Int64 = 0
        if head[0] == 0x49, head[1] == 0x44, head[2] == 0x33 {     // "ID3", a syncsafe size
            offset = 10 + (Int64(head[6]) << 21 | Int64(head[7]) << 14 | Int64(head[8]) << 7 | Int64(head[9]))
            guard pread(fd, &head, 4, off_t(offset)) == 4 else { return nil }
        }
        guard let frame = Self.frame(head[0], head[1], head[2], head[3]), offset + Int64(frame.length) <= size,
              frame.tag + 16 <= frame.length else { return nil }
        return (offset, frame.length, frame.tag)
    }

    /// Counts the whole frames between `scanned` and `size`, stopping at anything that is not a
    /// frame (the ID3v1 tag at the end) or a frame cut short.
    private func countFrames(upTo size: Int64) {
        while scanned + 4 <= size {
            let n = pread(fd, &buffer, min(buffer.count, Int(size - scanned)), off_t(scanned))
            guard n >= 4 else { return }
            var at = 0
            while at + 4 <= n {
                guard let frame = Self.frame(buffer[at], buffer[at + 1], buffer[at + 2], buffer[at + 3]) else { return }
                guard scanned + Int64(at + frame.length) <= size else { scanned += Int64(at); return }
                at += frame.length
                frames += 1
            }
            scanned += Int64(at)
            if at == 0 { return }
        }
    }

    /// The samples (a channel) of an MP3 whose first frame carries no frame count (no Xing,
    /// Info or VBRI tag with one), by walking its frame headers: readers then estimate the
    /// length from the first frame's bit rate, which for a variable bit rate is far off (an
    /// MP3 from before the checkpoints' count, killed after 2.5 s, read as 0.68 s). Nil when
    /// the first frame gives a count (readers take it), or the file does not begin with frames.
    static func samplesWhenUncounted(descriptor fd: Int32) -> Int64? {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        let scanner = MP3InfoFrame(descriptor: fd)
        guard let first = scanner.findFirstFrame(size: Int64(st.st_size)) else { return nil }
        var frame = [UInt8](repeating: 0, count: first.length)
        guard pread(fd, &frame, first.length, off_t(first.offset)) == first.length else { return nil }
        let name = String(decoding: frame[first.tag..<first.tag + 4], as: UTF8.self)
        if (name == "Xing" || name == "Info"), number(frame, at: first.tag + 4) & 1 != 0 { return nil }
        if frame.count >= 36 + 4, String(decoding: frame[36..<40], as: UTF8.self) == "VBRI" { return nil }
        guard let header = Self.frame(frame[0], frame[1], frame[2], frame[3]) else { return nil }
        scanner.first = first
        scanner.scanned = first.offset
        scanner.countFrames(upTo: Int64(st.st_size))
        return scanner.frames == 0 ? nil : Int64(scanner.frames) * Int64(header.samples)
    }

    /// An MPEG audio Layer III frame header: its length in bytes, its samples a channel, and
    /// where a Xing tag would begin.
    static func frame(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8) -> (length: Int, samples: Int, tag: Int)? {
        guard b0 == 0xFF, b1 & 0xE0 == 0xE0 else { return nil }
        let version = (b1 >> 3) & 3              // 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
        let layer = (b1 >> 1) & 3                // 1: Layer III
        let bitrateIndex = Int(b2 >> 4), rateIndex = Int((b2 >> 2) & 3), padding = Int((b2 >> 1) & 1)
        guard version != 1, layer == 1, (1...14).contains(bitrateIndex), rateIndex < 3 else { return nil }
        let mpeg1 = version == 3
        let bitrates = mpeg1 ? [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
                             : [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
        let rates = [44_100, 48_000, 32_000][rateIndex] >> (version == 3 ? 0 : version == 2 ? 1 : 2)
        let length = (mpeg1 ? 144_000 : 72_000) * bitrates[bitrateIndex] / rates + padding
        let mono = (b3 >> 6) == 3
        let sideInformation = mpeg1 ? (mono ? 17 : 32) : (mono ? 9 : 17)
        let crc = b1 & 1 == 0 ? 2 : 0
        return (length, mpeg1 ? 1_152 : 576, 4 + crc + sideInformation)
    }

    private static func number(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    private static func put(_ value: UInt32, into bytes: inout [UInt8], at offset: Int) {
        for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32(i))) }
    }
}
