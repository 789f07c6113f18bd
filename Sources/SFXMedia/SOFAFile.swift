import CSFXMySofa
import FoundationEssentials
import Glibc
import SFXCore

/// Why a SOFA file could not become an `HRTFTable`, as one line that names the file and the fix:
///
/// ```
/// /tmp/notes.txt: not a SOFA file (libmysofa: not a SOFA (HDF5) file (libmysofa error 10000)); give an AES69 SOFA HRTF set, such as /usr/share/libmysofa/default.sofa
/// /usr/share/libmysofa: is a directory, not a SOFA file; name a .sofa file in it
/// ```
public struct SOFAError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Sendable, Equatable {
        /// Nothing exists at the path.
        case missingFile
        /// The path names a directory.
        case isDirectory
        /// The path names a FIFO, a device or a socket.
        case notRegularFile
        /// The file has zero bytes.
        case emptyFile
        /// The file could not be read (permission, I/O): the system's words.
        case unreadable(detail: String)
        /// Not a SOFA (HDF5) file libmysofa can read: libmysofa's words.
        case notSOFA(detail: String)
        /// A SOFA file, but not HRIRs for two ears (another SOFA convention, or another shape).
        case wrongShape(detail: String)
        /// libmysofa cannot be loaded: its one line, which names libmysofa1 and the fix.
        case libraryMissing(line: String)
        /// A sample rate outside `SOFAFile.sampleRates`.
        case unsupportedSampleRate(Int)
    }

    /// The file concerned, as given.
    public let path: String
    public let reason: Reason

    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    /// One line: the file, what is wrong, and what to do.
    public var description: String {
        let example = SOFAFile.defaultURL.map { ", such as \($0.path)" } ?? " (Debian's libmysofa1 installs /usr/share/libmysofa/default.sofa)"
        switch reason {
        case .missingFile: return "\(path): no such file; check the path, or give an AES69 SOFA HRTF set\(example)"
        case .isDirectory: return "\(path): is a directory, not a SOFA file; name a .sofa file in it"
        case .notRegularFile: return "\(path): is not a regular file; give an AES69 SOFA HRTF set\(example)"
        case .emptyFile: return "\(path): is empty (0 bytes), not a SOFA file; give an AES69 SOFA HRTF set\(example)"
        case .unreadable(let detail): return "\(path): cannot be read (\(detail)); check its permissions"
        case .notSOFA(let detail): return "\(path): not a SOFA file (libmysofa: \(detail)); give an AES69 SOFA HRTF set\(example)"
        case .wrongShape(let detail): return "\(path): a SOFA file sfx cannot use as an HRTF set (\(detail)); give a SimpleFreeFieldHRIR file with two ears\(example)"
        case .libraryMissing(let line): return "\(path): \(line)"
        case .unsupportedSampleRate(let rate):
            return "\(path): cannot be resampled to \(rate) Hz; choose a rate in \(SOFAFile.sampleRates.lowerBound)…\(SOFAFile.sampleRates.upperBound) Hz"
        }
    }
}

/// HRTF sets in AES69 SOFA files, read with libmysofa (loaded on first use: Debian's libmysofa1)
/// into the `HRTFTable` the mixer's binaural voices read.
///
/// ## What `load` does
/// libmysofa opens the file, resamples it to `sampleRate` and normalises it (the frontal
/// direction's loudness to 1). The table's grid is every `azimuthStep` (5°) of azimuth and every
/// `elevationStep` (10°) of elevation within the file's measured elevations; at each grid
/// direction, libmysofa's filter (interpolated between the nearest measurements) is trimmed at
/// each ear's onset (`HRTFTable.trimAtOnset`) to `irLength(sampleRate:)` taps, and the onset,
/// plus the file's Data.Delay, becomes that ear's delay.
///
/// ## Coordinates
/// SOFA's are x forward, y left, z up (azimuth counter-clockwise); the table's (head
/// coordinates) are x right, y up, z forward. `sofaDirection(_:)` is the one conversion.
public enum SOFAFile {
    /// /usr/share/libmysofa/default.sofa (nil if absent): MIT's KEMAR with normal pinnae, 44.1 kHz,
    /// as Debian's libmysofa1 ships it.
    public static var defaultURL: URL? {
        let path = "/usr/share/libmysofa/default.sofa"
        return FileManager.default.fileExists(atPath: path) ? URL(filePath: path) : nil
    }

    /// The rates `load` resamples to, in Hz.
    public static let sampleRates: ClosedRange<Int> = 8_000...384_000

    /// Degrees between the table's azimuths and between its elevations.
    public static let azimuthStep: Float = 5
    public static let elevationStep: Float = 10

    /// Taps per ear at a rate by default: 48 at 48 kHz, the same 1 ms at other rates (a multiple
    /// of 8, at least 32). For the default file (MIT KEMAR) at 48 kHz, 48 taps after the onset
    /// keep the interaural level difference at 90° within 0.14 dB of the file's and the
    /// time difference unchanged (SOFAFileTests); 32 would be 1.2 dB off. `load(_:sampleRate:irLength:)`
    /// takes longer filters (128 taps keep 99.5 % of the energy) for about 2.6× the filters' work.
    public static func irLength(sampleRate: Int) -> Int {
        max(32, (48 * sampleRate / 48_000 + 7) / 8 * 8)
    }

    /// The SOFA direction (x forward, y left, z up) of a head-coordinate one (x right, y up, z forward).
    public static func sofaDirection(_ head: SIMD3<Float>) -> SIMD3<Float> {
        SIMD3(head.z, -head.x, head.y)
    }

    /// Reads a SOFA file with libmysofa, resampled to `sampleRate`, into an HRTFTable. Throws a
    /// `SOFAError` (one line naming the file) for a missing file, a directory, an empty file, one
    /// that is not SOFA or not an HRTF set, or when libmysofa cannot be loaded.
    /// `irLength` taps per ear (nil: `irLength(sampleRate:)`; at least 1).
    public static func load(_ url: URL, sampleRate: Int, irLength: Int? = nil) throws -> HRTFTable {
        try loadMeasuringEnergy(url, sampleRate: sampleRate, irLength: irLength).table
    }

    /// `load`, and the fraction of the filters' energy (Σ h² over every grid direction and both
    /// ears) the trimmed taps keep.
    static func loadMeasuringEnergy(_ url: URL, sampleRate: Int, irLength taps: Int? = nil) throws -> (table: HRTFTable, energyKept: Double) {
        let path = url.path
        guard sampleRates.contains(sampleRate) else { throw SOFAError(path: path, reason: .unsupportedSampleRate(sampleRate)) }
        try checkFile(path)
        var status: Int32 = 0
        var message = [CChar](repeating: 0, count: 512)
        guard let sofa = sfx_mysofa_open(path, Int32(sampleRate), &status, &message, message.count) else {
            let detail = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            switch Int(status) {
            case SFX_MYSOFA_LIBRARY_MISSING: throw SOFAError(path: path, reason: .libraryMissing(line: detail))
            case SFX_MYSOFA_WRONG_SHAPE: throw SOFAError(path: path, reason: .wrongShape(detail: detail))
            case SFX_MYSOFA_READ_ERROR: throw SOFAError(path: path, reason: .unreadable(detail: detail))
            default: throw SOFAError(path: path, reason: .notSOFA(detail: detail))
            }
        }
        defer { sfx_mysofa_close(sofa) }
        let length = Int(sfx_mysofa_filter_length(sofa))
        var lowest: Float = 0, highest: Float = 0
        sfx_mysofa_elevation_range(sofa, &lowest, &highest)
        // Rows on the step's multiples within the measured elevations (or the one row measured).
        // (A hundredth of a degree of slack: 90° comes back from the cartesian positions as 89.99…)
        var low = ((lowest - 0.01) / elevationStep).rounded(.up) * elevationStep
        var high = ((highest + 0.01) / elevationStep).rounded(.down) * elevationStep
        if low > high { low = (lowest + highest) / 2; high = low }

        let full = UnsafeMutablePointer<Float>.allocate(capacity: 2 * length)
        defer { full.deallocate() }
        var kept = 0.0, total = 0.0
        let table = HRTFTable(name: url.lastPathComponent, sampleRate: sampleRate, irLength: max(1, taps ?? irLength(sampleRate: sampleRate)),
                              azimuthStep: azimuthStep, elevations: low...high, elevationStep: elevationStep) { direction, left, right in
            let s = sofaDirection(direction)
            var leftDelay: Float = 0, rightDelay: Float = 0
            sfx_mysofa_filter(sofa, s.x, s.y, s.z, full, full + length, &leftDelay, &rightDelay)
            var delays = (leftDelay, rightDelay)
            for ear in 0..<2 {
                let response = UnsafeBufferPointer(start: full + ear * length, count: length)
                var energy = 0.0
                for x in response { energy += Double(x) * Double(x) }
                let (onset, fraction) = HRTFTable.trimAtOnset(response, into: ear == 0 ? left : right)
                kept += fraction * energy
                total += energy
                if ear == 0 { delays.0 += Float(onset) } else { delays.1 += Float(onset) }
            }
            return delays
        }
        return (table, total > 0 ? kept / total : 1)
    }

    /// What the path is before libmysofa opens it (which says "invalid format" alike for a
    /// directory, an empty file and a text file).
    private static func checkFile(_ path: String) throws {
        var st = stat()
        guard stat(path, &st) == 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { throw SOFAError(path: path, reason: .missingFile) }
            throw SOFAError(path: path, reason: .unreadable(detail: String(cString: strerror(code))))
        }
        switch st.st_mode & S_IFMT {
        case S_IFDIR: throw SOFAError(path: path, reason: .isDirectory)
        case S_IFREG: break
        default: throw SOFAError(path: path, reason: .notRegularFile)
        }
        if st.st_size == 0 { throw SOFAError(path: path, reason: .emptyFile) }
        guard access(path, R_OK) == 0 else {
            throw SOFAError(path: path, reason: .unreadable(detail: String(cString: strerror(errno))))
        }
    }
}
