import Foundation

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
        case version = 8, size = 12, xrunRequests = 16, disconnected = 20, masterSwitch = 24, masterVolume = 28
    }

    private let base: UnsafeMutableRawPointer

    /// Creates the file with the defaults (connected, Master on at full volume) unless a valid
    /// one exists, then maps it.
    init(url: URL) throws {
        let path = url.path
        if !FileManager.default.fileExists(atPath: path) {
            var bytes = [UInt8](repeating: 0, count: CardState.size)
            bytes.replaceSubrange(0..<8, with: CardState.magic)
            for (field, value) in [(Field.version, 1), (.size, CardState.size), (.masterSwitch, 1), (.masterVolume, 100)] {
                withUnsafeBytes(of: UInt32(value).littleEndian) { bytes.replaceSubrange(field.rawValue..<field.rawValue + 4, with: $0) }
            }
            do {
                try Data(bytes).write(to: url, options: .atomic)
            } catch {
                throw CardError("cannot write the card state \(path) (\(error.localizedDescription)); choose a writable directory")
            }
        }
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else {
            throw CardError("cannot open the card state \(path) (\(String(cString: strerror(errno)))); make it readable and writable")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size >= CardState.size,
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

    subscript(field: Field) -> UInt32 {
        get { UInt32(littleEndian: base.load(fromByteOffset: field.rawValue, as: UInt32.self)) }
        set { base.storeBytes(of: newValue.littleEndian, toByteOffset: field.rawValue, as: UInt32.self) }
    }
}
