import CSFXHaptics
import Foundation
import Glibc
import SFXHaptics
import XCTest

/// A `HapticSyscalls` that records every call with the exact bytes passed and the time it was
/// made, fails chosen calls with a chosen errno, and plays the kernel's part for evdev nodes and
/// GPIO lines that do not exist here. With `passThroughFiles`, open/write/close reach the real
/// file system (for the sysfs backends against a temporary directory) and are still recorded.
final class TracingSyscalls: HapticSyscalls, @unchecked Sendable {
    enum Call: Equatable {
        case open(path: String)
        case close(fd: Int32)
        case write(fd: Int32, bytes: [UInt8])
        case ioctl(fd: Int32, request: UInt, bytes: [UInt8])
        case ioctlInteger(fd: Int32, request: UInt, value: Int)
        case gpioRequest(chip: String, offset: UInt32, activeLow: Bool, value: Int32)
        case gpioSet(value: Int32)
        case gpioRelease
    }

    /// Operations that can be made to fail.
    enum Operation: Hashable { case open, write, uploadEffect, gpioRequest, gpioSet }

    private let lock = NSLock()
    private let start = Date()
    private var calls: [(call: Call, seconds: Double)] = []
    private var paths: [Int32: String] = [:]
    private var nextFD: Int32 = 100

    /// Nodes (full paths) that report FF_RUMBLE, and those that also report FF_GAIN.
    var rumbleDevices: Set<String> = []
    var gainDevices: Set<String> = []
    /// The id the "kernel" assigns to a new effect.
    var assignedEffectID: Int16 = 7
    /// errno to fail an operation with.
    var failures: [Operation: Int32] = [:]
    var passThroughFiles = false

    private var fileWrites: [(path: String, text: String, seconds: Double)] = []

    var trace: [Call] { lock.withLock { calls.map(\.call) } }
    /// Each write as the text it put into which file, and when.
    var writtenFiles: [(path: String, text: String, seconds: Double)] { lock.withLock { fileWrites } }

    /// The path a traced descriptor was opened with.
    func path(of fd: Int32) -> String? { lock.withLock { paths[fd] } }

    private func record(_ call: Call) {
        lock.withLock { calls.append((call, Date().timeIntervalSince(start))) }
    }

    private func failure(_ operation: Operation) -> Int32? {
        lock.withLock { failures[operation] }
    }

    func open(_ path: String, _ flags: Int32) -> Int32 {
        record(.open(path: path))
        if let errno = failure(.open) { return -errno }
        let fd: Int32
        if passThroughFiles {
            fd = Glibc.open(path, flags)
            if fd < 0 { return -errno }
        } else {
            fd = lock.withLock { defer { nextFD += 1 }; return nextFD }
        }
        lock.withLock { paths[fd] = path }
        return fd
    }

    func close(_ fd: Int32) -> Int32 {
        record(.close(fd: fd))
        return passThroughFiles ? Glibc.close(fd) : 0
    }

    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        record(.write(fd: fd, bytes: Array(bytes)))
        lock.withLock {
            fileWrites.append((paths[fd] ?? "", String(decoding: bytes, as: UTF8.self), Date().timeIntervalSince(start)))
        }
        if let errno = failure(.write) { return -Int(errno) }
        return passThroughFiles ? Glibc.write(fd, bytes.baseAddress, bytes.count) : bytes.count
    }

    func ioctl(_ fd: Int32, _ request: UInt, _ argument: IoctlArgument) -> Int32 {
        switch argument {
        case .integer(let value):
            record(.ioctlInteger(fd: fd, request: request, value: value))
            return 0
        case .buffer(let buffer):
            record(.ioctl(fd: fd, request: request, bytes: Array(buffer)))
            let path = self.path(of: fd) ?? ""
            if request == UInt(sfxh_eviocgbit(sfxh_ev_ff(), UInt32(buffer.count))) {
                if rumbleDevices.contains(path) { setBit(Int(sfxh_ff_rumble()), in: buffer) }
                if gainDevices.contains(path) { setBit(Int(sfxh_ff_gain()), in: buffer) }
            } else if request == UInt(sfxh_eviocsff()) {
                if let errno = failure(.uploadEffect) { return -errno }
                let idOffset = sfxh_ff_effect_id_offset()
                if buffer.load(fromByteOffset: idOffset, as: Int16.self) == -1 {
                    buffer.storeBytes(of: assignedEffectID, toByteOffset: idOffset, as: Int16.self)
                }
            }
            return 0
        }
    }

    /// Sets bit `index` as the kernel fills EVIOCGBIT's array of longs on a little-endian machine.
    private func setBit(_ index: Int, in buffer: UnsafeMutableRawBufferPointer) {
        buffer[index / 8] |= UInt8(1 << (index % 8))
    }

    func gpioRequestOutput(chip: String, offset: UInt32, activeLow: Bool, consumer: String, value: Int32) -> Result<GPIOLineHandle, GPIOFailure> {
        record(.gpioRequest(chip: chip, offset: offset, activeLow: activeLow, value: value))
        if let errno = failure(.gpioRequest) { return .failure(GPIOFailure(.request, errno: errno)) }
        return .success(GPIOLineHandle(chip: 1, line: 2))
    }

    func gpioSetValue(_ line: GPIOLineHandle, _ value: Int32) -> Int32 {
        record(.gpioSet(value: value))
        if let errno = failure(.gpioSet) { return -errno }
        return 0
    }

    func gpioRelease(_ line: GPIOLineHandle) {
        record(.gpioRelease)
    }
}

/// A private temporary directory (mkdtemp: an unpredictable name, mode 0700) removed when the
/// test that made it ends. XCTest keeps every test case object until the whole run is over, so
/// removal cannot wait for deinit: it is a teardown block of the test.
final class TemporaryDirectory {
    let path: String

    init(removedAfter test: XCTestCase) throws {
        var template = Array((NSTemporaryDirectory() + "sfx-haptics-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        path = String(cString: made)
        test.addTeardownBlock { [path] in try? FileManager.default.removeItem(atPath: path) }
    }

    /// Creates `relativePath` (and its directories) holding `contents`; returns the full path.
    @discardableResult
    func file(_ relativePath: String, _ contents: String = "") throws -> String {
        let full = "\(path)/\(relativePath)"
        try FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try contents.write(toFile: full, atomically: false, encoding: .utf8)
        return full
    }

    func contents(_ relativePath: String) -> String? {
        try? String(contentsOfFile: "\(path)/\(relativePath)", encoding: .utf8)
    }
}

/// Collects a callback backend's events with the time each arrived.
final class EventRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private let start = Date()
    private var recorded: [(event: HapticEvent, seconds: Double)] = []

    func record(_ event: HapticEvent) {
        lock.withLock { recorded.append((event, Date().timeIntervalSince(start))) }
    }

    var events: [HapticEvent] { lock.withLock { recorded.map(\.event) } }
    var timed: [(event: HapticEvent, seconds: Double)] { lock.withLock { recorded } }
}
