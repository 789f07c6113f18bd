import CSFXHaptics
import Glibc
import XCTest

@testable import SFXHaptics

final class EvdevRumbleTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private var syscalls: TracingSyscalls!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory(removedAfter: self)
        for name in ["event0", "event1", "event10", "mice"] { try directory.file(name) }
        syscalls = TracingSyscalls()
    }

    private var rumblePath: String { "\(directory.path)/event1" }

    private func backend() -> EvdevRumbleBackend {
        EvdevRumbleBackend(inputDirectory: directory.path, syscalls: syscalls)
    }

    private func field<T>(_ bytes: [UInt8], _ offset: Int, as type: T.Type) -> T {
        bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: T.self) }
    }

    private var uploads: [[UInt8]] {
        syscalls.trace.compactMap {
            if case .ioctl(_, UInt(sfxh_eviocsff()), let bytes) = $0 { bytes } else { nil }
        }
    }

    private var writes: [[UInt8]] {
        syscalls.trace.compactMap { if case .write(_, let bytes) = $0 { bytes } else { nil } }
    }

    func testScansInNumericOrderAndPicksTheFirstRumbleDevice() {
        syscalls.rumbleDevices = [rumblePath, "\(directory.path)/event10"]
        XCTAssertEqual(backend().availability(), .available(rumblePath))
        let opened = syscalls.trace.compactMap { if case .open(let path) = $0 { path } else { nil } }
        XCTAssertEqual(opened, ["\(directory.path)/event0", rumblePath])
        // Probing leaves nothing open.
        XCTAssertEqual(syscalls.trace.filter { if case .close = $0 { true } else { false } }.count, 2)
    }

    func testUploadedEffectHasTheKernelLayout() throws {
        syscalls.rumbleDevices = [rumblePath]
        let rumble = backend()
        try rumble.open()
        try rumble.switchOn(amplitude: 0.5, milliseconds: 300)
        try rumble.switchOn(amplitude: 1, milliseconds: 40)

        XCTAssertEqual(uploads.count, 2)
        let first = uploads[0]
        XCTAssertEqual(first.count, sfxh_ff_effect_size())
        XCTAssertEqual(field(first, sfxh_ff_effect_type_offset(), as: UInt16.self), UInt16(sfxh_ff_rumble()))
        XCTAssertEqual(field(first, sfxh_ff_effect_id_offset(), as: Int16.self), -1, "a new effect asks the kernel for an id")
        XCTAssertEqual(field(first, sfxh_ff_effect_replay_length_offset(), as: UInt16.self), 300)
        XCTAssertEqual(field(first, sfxh_ff_effect_replay_delay_offset(), as: UInt16.self), 0)
        XCTAssertEqual(field(first, sfxh_ff_effect_rumble_strong_offset(), as: UInt16.self), 32768)
        XCTAssertEqual(field(first, sfxh_ff_effect_rumble_weak_offset(), as: UInt16.self), 32768)
        // Every other byte stays zero.
        let written: Set<Int> = [
            sfxh_ff_effect_type_offset(), sfxh_ff_effect_id_offset(), sfxh_ff_effect_replay_length_offset(),
            sfxh_ff_effect_rumble_strong_offset(), sfxh_ff_effect_rumble_weak_offset(),
        ].reduce(into: []) { $0.formUnion([$1, $1 + 1]) }
        for index in first.indices where !written.contains(index) {
            XCTAssertEqual(first[index], 0, "byte \(index)")
        }

        let second = uploads[1]
        XCTAssertEqual(field(second, sfxh_ff_effect_id_offset(), as: Int16.self), 7, "the assigned id updates the effect in place")
        XCTAssertEqual(field(second, sfxh_ff_effect_replay_length_offset(), as: UInt16.self), 40)
        XCTAssertEqual(field(second, sfxh_ff_effect_rumble_strong_offset(), as: UInt16.self), 0xFFFF)

        XCTAssertEqual(writes.count, 2)
        for play in writes {
            XCTAssertEqual(play.count, sfxh_input_event_size())
            XCTAssertEqual(field(play, sfxh_input_event_type_offset(), as: UInt16.self), UInt16(sfxh_ev_ff()))
            XCTAssertEqual(field(play, sfxh_input_event_code_offset(), as: UInt16.self), 7)
            XCTAssertEqual(field(play, sfxh_input_event_value_offset(), as: Int32.self), 1)
            XCTAssertTrue(play[0..<sfxh_input_event_type_offset()].allSatisfy { $0 == 0 }, "the time stamp stays zero")
        }
    }

    func testIoctlNumbersMatchTheKernelEncoding() {
        // _IOC(dir, 'E', nr, size) = dir << 30 | size << 16 | 'E' << 8 | nr on this machine.
        func ioc(_ direction: UInt, _ number: UInt, _ size: Int) -> UInt {
            direction << 30 | UInt(size) << 16 | UInt(UInt8(ascii: "E")) << 8 | number
        }
        let write: UInt = 1, read: UInt = 2
        XCTAssertEqual(InputLayout.uploadEffect, ioc(write, 0x80, sfxh_ff_effect_size()))
        XCTAssertEqual(InputLayout.uploadEffect, UInt(sfxh_eviocsff()))
        XCTAssertEqual(InputLayout.removeEffect, ioc(write, 0x81, MemoryLayout<Int32>.size))
        XCTAssertEqual(InputLayout.removeEffect, UInt(sfxh_eviocrmff()))
        let length = InputLayout.bitArrayLength(InputLayout.forceFeedbackCodeCount)
        XCTAssertEqual(length % MemoryLayout<UInt>.size, 0)
        XCTAssertGreaterThan(length * 8, Int(sfxh_ff_gain()))
        XCTAssertEqual(InputLayout.eventBitsRequest(type: InputLayout.eventTypeForceFeedback, length: length),
                       ioc(read, 0x20 + UInt(sfxh_ev_ff()), length))
        XCTAssertEqual(InputLayout.eventBitsRequest(type: InputLayout.eventTypeForceFeedback, length: length),
                       UInt(sfxh_eviocgbit(sfxh_ev_ff(), UInt32(length))))
    }

    func testGainIsSetToFullWhenTheDeviceReportsIt() throws {
        syscalls.rumbleDevices = [rumblePath]
        syscalls.gainDevices = [rumblePath]
        try backend().open()
        XCTAssertEqual(writes.count, 1)
        XCTAssertEqual(field(writes[0], sfxh_input_event_type_offset(), as: UInt16.self), UInt16(sfxh_ev_ff()))
        XCTAssertEqual(field(writes[0], sfxh_input_event_code_offset(), as: UInt16.self), UInt16(sfxh_ff_gain()))
        XCTAssertEqual(field(writes[0], sfxh_input_event_value_offset(), as: Int32.self), 0xFFFF)
    }

    func testCancelWritesStopAndCloseRemovesTheEffect() throws {
        syscalls.rumbleDevices = [rumblePath]
        let vibrator = try Vibrator(backend: backend())
        vibrator.vibrate(try .waveform([5000]))
        let deadline = Date(timeIntervalSinceNow: 5)
        while writes.isEmpty && Date() < deadline { usleep(1000) }
        vibrator.cancel()
        vibrator.waitUntilIdle()
        XCTAssertEqual(writes.map { field($0, sfxh_input_event_value_offset(), as: Int32.self) }, [1, 0])
        XCTAssertEqual(field(writes[1], sfxh_input_event_code_offset(), as: UInt16.self), 7)

        vibrator.close()
        let tail = syscalls.trace.suffix(2)
        guard case .ioctlInteger(let fd, let request, let value) = tail.first, case .close(let closed) = tail.last else {
            return XCTFail("expected EVIOCRMFF then close, got \(Array(tail))")
        }
        XCTAssertEqual(request, UInt(sfxh_eviocrmff()))
        XCTAssertEqual(value, 7)
        XCTAssertEqual(closed, fd)
        XCTAssertEqual(syscalls.path(of: fd), rumblePath)
    }

    func testPermissionDeniedNamesTheNodeAndTheFix() {
        syscalls.failures[.open] = EACCES
        XCTAssertEqual(backend().availability(), .unavailable(reason:
            "\(directory.path)/event0: permission denied (EACCES) — add the user to the 'input' group or add a udev rule"))
    }

    func testUnpluggedPadIsReportedInOneLine() throws {
        syscalls.rumbleDevices = [rumblePath]
        let vibrator = try Vibrator(backend: backend())
        syscalls.failures[.write] = ENODEV
        vibrator.vibrate()
        vibrator.waitUntilIdle()
        XCTAssertEqual(vibrator.lastError?.description,
                       "\(rumblePath): device is gone (ENODEV) — reconnect it; `sfx haptics` lists what is present")
        XCTAssertEqual(vibrator.lastError?.errno, ENODEV)
    }

    func testBusyDeviceOnUpload() throws {
        syscalls.rumbleDevices = [rumblePath]
        let rumble = backend()
        try rumble.open()
        syscalls.failures[.uploadEffect] = EBUSY
        XCTAssertThrowsError(try rumble.switchOn(amplitude: 1, milliseconds: 100)) { error in
            XCTAssertEqual((error as? HapticError)?.description,
                           "\(rumblePath): busy (EBUSY) — another program holds the device; close it or pick another")
        }
    }

    func testNoRumbleDevice() {
        XCTAssertEqual(backend().availability(), .unavailable(reason:
            "no \(directory.path)/event* reports FF_RUMBLE — connect a game pad or vibrator with force feedback, or pick another backend"))
    }
}
