import FoundationEssentials
import Glibc

/// The card's shared state file (layout in Sources/SFXCard/include/sfxcard.h), mapped
/// MAP_SHARED so that reads and writes meet the plugin's own mapping in every process.
///
/// Fields are aligned 32-bit words, loaded and stored whole; the xrun counter's increment is a
/// load and a store, so it expects one writer at a time (the test that owns the card).
final class CardState: @unchecked Sendable {
    static let size = 64
    static let magic = Array("SFXCARD1".utf8)

    /// Byte offsets of the 32-bit fields.
    enum Field: Int {
        case version = 8, size = 12, xrunRequests = 16, disconnected = 20, masterSwitch = 24, masterVolume = 28,
             underrunRequests = 32, refuseOpen = 36, cardIndex = 40
    }

    /// Where the card's id (16 bytes, NUL-padded) is.
    static let cardIDOffset = 44
    static let cardIDSize = 16

    private let base: UnsafeMutableRawPointer

    /// Creates the file with the defaults (connected, Master on at full volume, 0600) unless one
    /// is there, then maps it. Only a regular file of the user's that no one else can write, at
    /// least `size` bytes long, is mapped (a mapping past a file's end is SIGBUS); a symbolic
    /// link is refused.
    init(url: URL) throws {
        let path = url.path
        var bytes = [UInt8](repeating: 0, count: CardState.size)
        bytes.replaceSubrange(0..<8, with: CardState.magic)
        for (field, value) in [(Field.version, 1), (.size, CardState.size), (.masterSwitch, 1), (.masterVolume, 100)] {
            withUnsafeBytes(of: UInt32(value).littleEndian) { bytes.replaceSubrange(field.rawValue..<field.rawValue + 4, with: $0) }
        }
        var fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 && errno == ENOENT {
            try PrivateFile.createIfMissing(url, with: Data(bytes))
            fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        }
        guard fd >= 0 else {
            if errno == ELOOP {
                throw CardError("the card state \(path) is a symbolic link; delete it and the card writes a new one")
            }
            throw CardError("cannot open the card state \(path) (\(errnoName())); make it readable and writable")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw CardError("cannot examine the card state \(path) (\(errnoName())); delete it and the card writes a new one")
        }
        if let problem = CardDirectory.problem(with: info, type: S_IFREG) {
            throw CardError("the card state \(path) \(problem); delete it and the card writes a new one")
        }
        guard info.st_size >= CardState.size,
              let map = mmap(nil, CardState.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), map != MAP_FAILED
        else {
            throw CardError("\(path) is not a card state file; delete it and the card writes a new one")
        }
        guard memcmp(map, CardState.magic, 8) == 0 else {
            munmap(map, CardState.size)
            throw CardError("\(path) is not a card state file; delete it and the card writes a new one")
        }
        base = map
    }

    deinit {
        munmap(base, CardState.size)
    }

    /// The card's id as the state holds it ("" when it names none).
    var cardID: String {
        get {
            let bytes = (0..<CardState.cardIDSize).map { base.load(fromByteOffset: CardState.cardIDOffset + $0, as: UInt8.self) }
            return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        set {
            let bytes = Array(newValue.utf8.prefix(CardState.cardIDSize - 1))
            for offset in 0..<CardState.cardIDSize {
                base.storeBytes(of: offset < bytes.count ? bytes[offset] : 0, toByteOffset: CardState.cardIDOffset + offset, as: UInt8.self)
            }
        }
    }

    subscript(field: Field) -> UInt32 {
        get { UInt32(littleEndian: base.load(fromByteOffset: field.rawValue, as: UInt32.self)) }
        set { base.storeBytes(of: newValue.littleEndian, toByteOffset: field.rawValue, as: UInt32.self) }
    }
}
