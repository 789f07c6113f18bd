import SFXCore

/// The number that names a loaded sound, as a SystemSoundID does on iOS and a sound id in
/// Android's SoundPool.
///
/// - 1000–1999: sfx's bundled system sounds (the ids in `Sounds/sfx/index.theme`).
/// - 2000–9999: the other names of the freedesktop Sound Naming Specification, found in an
///   installed theme.
/// - 10000–65535: names of an installed theme outside the specification, numbered in the order
///   a library first meets them (stable within a process only).
/// - 65536 and up: custom sounds, loaded from a file or a buffer; never reused in a process.
///
/// System sounds are never disposed; custom sounds are disposed with `dispose(_:)`.
public struct SoundID: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    static let firstUncatalogued: UInt32 = 10_000
    static let firstCustom: UInt32 = 65_536

    /// Whether the id names a system sound (bundled or from an installed theme).
    public var isSystem: Bool { rawValue < Self.firstCustom }

    public var description: String { String(rawValue) }

    public static func < (a: SoundID, b: SoundID) -> Bool { a.rawValue < b.rawValue }
}
