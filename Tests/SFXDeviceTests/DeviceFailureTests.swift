// Each way an open fails gives its own line with the fix, from a real open through alsa-lib: the
// pipewire and pulse plugins with no server (and a "server" that turns the client away), an
// unknown PCM name, a card that is not there, the virtual card unplugged, busy and forbidden.
import Foundation
import Glibc
import XCTest
import SFXCardSupport
import SFXDevice

final class DeviceFailureTests: XCTestCase {
    private var scratch: URL!
    private var saved: [String: String?] = [:]

    /// Environment variables a test sets, put back afterwards.
    private static let keys = ["ALSA_CONFIG_PATH", "XDG_RUNTIME_DIR", "PULSE_SERVER", "PULSE_RUNTIME_PATH",
                               "PIPEWIRE_RUNTIME_DIR", "PIPEWIRE_REMOTE"]

    override func setUpWithError() throws {
        scratch = try CardDirectory.makeTemporary(prefix: "sfx-failure-")
        for key in Self.keys { saved[key] = getenv(key).map { String(cString: $0) } }
    }

    override func tearDownWithError() throws {
        for (key, value) in saved {
            if let value { setenv(key, value, 1) } else { unsetenv(key) }
        }
        try? FileManager.default.removeItem(at: scratch)
    }

    /// An ALSA configuration of the test's own where `default` is `definition`, and an empty
    /// private runtime directory: no server's socket anywhere.
    private func useConfiguration(_ definition: String) throws -> URL {
        let runtime = scratch.appending(path: "runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let config = scratch.appending(path: "asound.conf")
        try Data(definition.utf8).write(to: config)
        setenv("ALSA_CONFIG_PATH", config.path, 1)
        setenv("XDG_RUNTIME_DIR", runtime.path, 1)
        for key in ["PULSE_SERVER", "PULSE_RUNTIME_PATH", "PIPEWIRE_RUNTIME_DIR", "PIPEWIRE_REMOTE"] { unsetenv(key) }
        return runtime
    }

    private func openError(_ device: String, file: StaticString = #filePath, line: UInt = #line) -> ALSAError? {
        do {
            let opened = try PCMPlayback(PlaybackRequest(device: device, periodFrames: 480, periodCount: 3))
            opened.close()
            XCTFail("\(device) opened", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    func testPipeWireWithNoServerNamesTheServerAndTheFix() throws {
        _ = try useConfiguration("pcm.!default { type pipewire }\nctl.!default { type pipewire }\n")
        let error = try XCTUnwrap(openError("default"))
        XCTAssertEqual(error.code, EHOSTDOWN, "the pipewire plugin's errno with no server")
        XCTAssertEqual(error.description,
                       "audio device 'default': ALSA \"default\" goes to PipeWire and no PipeWire server is running for this user: "
                       + "start it (systemctl --user start pipewire pipewire-pulse wireplumber) or choose a card with -D / output.device")
        XCTAssertEqual(error.failure.kind, .serverNotRunning(.pipewire))
        XCTAssertEqual(error.failure.route, ["pipewire"])
        XCTAssertTrue(error.isTransient, "the server may start later")
    }

    /// Through plug (as a desktop's `default` may be), the chain is followed to the plugin.
    func testAServerBehindPlugIsFound() throws {
        _ = try useConfiguration("pcm.pw { type pipewire }\npcm.!default { type plug slave.pcm \"pw\" }\n"
                                 + "pcm.both { type asym playback.pcm { type plug slave { pcm \"pw\" } } capture.pcm \"pw\" }\n")
        let error = try XCTUnwrap(openError("default"))
        XCTAssertEqual(error.failure.route, ["plug", "pipewire"])
        XCTAssertEqual(error.failure.kind, .serverNotRunning(.pipewire))
        XCTAssertTrue(error.description.hasPrefix("audio device 'default': ALSA \"default\" goes to PipeWire and no PipeWire server"), error.description)
        XCTAssertEqual(PCMRoute.plugins(of: "both"), ["asym", "plug", "pipewire"])
        XCTAssertEqual(PCMRoute.plugins(of: "nosuchpcm"), [])
    }

    func testPulseWithNoServerNamesPulseAudioAndTheFix() throws {
        _ = try useConfiguration("pcm.!default { type pulse }\nctl.!default { type pulse }\n")
        let error = try XCTUnwrap(openError("default"))
        XCTAssertEqual(error.code, ECONNREFUSED, "the pulse plugin's errno with no server")
        XCTAssertEqual(error.description,
                       "audio device 'default': ALSA \"default\" goes to PulseAudio and no PulseAudio server is running for this user: "
                       + "start it (systemctl --user start pulseaudio, or pipewire-pulse where PipeWire serves PulseAudio's clients) "
                       + "or choose a card with -D / output.device")
        XCTAssertTrue(error.isTransient)
    }

    /// A server that accepts the connection and closes it, as one of another user's or one
    /// wanting a cookie does: the pulse plugin says ECONNREFUSED as for no server, but the socket
    /// answers, so the line says the server refused this client.
    func testAPulseServerThatRefusesTheClientHasItsOwnLine() throws {
        let runtime = try useConfiguration("pcm.!default { type pulse }\n")
        let socketPath = runtime.appending(path: "pulse/native").path
        try FileManager.default.createDirectory(atPath: runtime.appending(path: "pulse").path, withIntermediateDirectories: true)
        let server = try RefusingServer(path: socketPath)
        defer { server.stop() }
        let error = try XCTUnwrap(openError("default"))
        XCTAssertEqual(error.code, ECONNREFUSED)
        XCTAssertEqual(error.failure.kind, .serverRefused(.pulseaudio, socket: socketPath))
        XCTAssertEqual(error.description,
                       "audio device 'default': ALSA \"default\" goes to PulseAudio and the server at \(socketPath) refused this client "
                       + "(ECONNREFUSED: access denied, as for a server of another user's): run sfx as the server's user, give it the "
                       + "server's cookie (~/.config/pulse/cookie) or start this user's own server, or choose a card with -D / output.device")
        XCTAssertFalse(error.isTransient, "waiting does not change who may connect")
        XCTAssertGreaterThan(server.refused, 0, "the plugin reached the server")
    }

    func testAnUnknownNameIsNotWorthWaitingFor() throws {
        let card = try VirtualCard(directory: scratch.appending(path: "card"))
        card.makeCurrent()
        let error = try XCTUnwrap(openError("nosuchpcm"))
        XCTAssertEqual(error.code, ENOENT)
        XCTAssertEqual(error.description,
                       "audio device 'nosuchpcm': open for playback failed: ALSA knows no device of that name (ENOENT); "
                       + "`sfx devices` lists the devices there are: choose one with -D / output.device")
        XCTAssertFalse(error.isTransient)
    }

    /// hw:9 names a card ALSA's configuration defines (hw takes any index up to 31) that is not
    /// there (ENOENT: no control device); by an id no card has, ENODEV. Either may come later.
    func testACardThatIsNotThereMayComeLater() throws {
        let card = try VirtualCard(directory: scratch.appending(path: "card"))
        card.makeCurrent()
        let byIndex = try XCTUnwrap(openError("hw:9,0"))
        XCTAssertEqual(byIndex.code, ENOENT)
        XCTAssertEqual(byIndex.failure.kind, .noSuchDevice)
        XCTAssertEqual(byIndex.description,
                       "audio device 'hw:9,0': open for playback failed: no such card or device (ENOENT); plug the card in, "
                       + "or choose another with -D / output.device (`sfx devices` lists the devices there are)")
        XCTAssertTrue(byIndex.isTransient)
        let byName = try XCTUnwrap(openError("hw:CARD=Speaker,DEV=0"))
        XCTAssertEqual(byName.code, ENODEV)
        XCTAssertEqual(byName.failure.kind, .unplugged)
        XCTAssertTrue(byName.isTransient)
        XCTAssertTrue(byName.description.contains("it is reopened when it comes back"), byName.description)
    }

    func testAnUnpluggedCardIsReopenedWhenItComesBack() throws {
        let card = try VirtualCard(directory: scratch.appending(path: "card"))
        card.makeCurrent()
        card.disconnect()
        let error = try XCTUnwrap(openError(card.pcmName))
        XCTAssertEqual(error.code, ENODEV)
        XCTAssertEqual(error.description,
                       "audio device 'sfxcard': open for playback failed: the card is gone (ENODEV: unplugged or switched off); "
                       + "it is reopened when it comes back: plug it in again, or choose another with -D / output.device "
                       + "(`sfx devices` lists the devices there are)")
        XCTAssertTrue(error.isTransient)
        XCTAssertTrue(error.isDisconnect)
        card.reconnect()
        let device = try PCMPlayback(PlaybackRequest(device: card.pcmName, periodFrames: 480, periodCount: 3))
        device.close()
    }

    func testABusyCardSaysAnotherProgramHoldsIt() throws {
        let card = try VirtualCard(directory: scratch.appending(path: "card"))
        card.makeCurrent()
        card.refusesOpen = EBUSY
        let error = try XCTUnwrap(openError(card.pcmName))
        XCTAssertEqual(error, .busy(device: "sfxcard", operation: "open for playback"))
        XCTAssertEqual(error.description,
                       "audio device 'sfxcard': open for playback failed: the device is busy (EBUSY); another program holds it: "
                       + "close the other program, or use a shared device such as 'default' or 'dmix'")
        XCTAssertTrue(error.isTransient)
        card.refusesOpen = nil
        let device = try PCMPlayback(PlaybackRequest(device: card.pcmName, periodFrames: 480, periodCount: 3))
        device.close()
    }

    /// The holder of a hw device is named from /proc/asound's status file (a tree of the test's
    /// own: this machine has no card, and so no substream to hold).
    func testABusyHardwareDeviceNamesItsHolder() throws {
        let root = scratch.appending(path: "asound")
        let sub = root.appending(path: "card1/pcm0p/sub0")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        try Data("Speaker\n".utf8).write(to: root.appending(path: "card1/id"))
        try Data("state: RUNNING\nowner_pid   : 4242\ntrigger_time: 1.0\n".utf8).write(to: sub.appending(path: "status"))
        let proc = scratch.appending(path: "proc")
        try FileManager.default.createDirectory(at: proc.appending(path: "4242"), withIntermediateDirectories: true)
        try Data("aplay\n".utf8).write(to: proc.appending(path: "4242/comm"))

        let error = ALSAError(device: "hw:CARD=Speaker,DEV=0", operation: "open for playback", code: -EBUSY)
        let failure = DeviceFailure(error, asoundRoot: root.path, procRoot: proc.path)
        XCTAssertEqual(failure.kind, .busy(owner: DeviceFailure.Owner(pid: 4242, command: "aplay")))
        XCTAssertEqual(failure.line,
                       "audio device 'hw:CARD=Speaker,DEV=0': open for playback failed: the device is busy (EBUSY); "
                       + "aplay (pid 4242) holds it: close it, or use a shared device such as 'default' or 'dmix'")
        XCTAssertTrue(failure.isTransient)
        XCTAssertEqual(DeviceFailure(ALSAError(device: "plughw:1", operation: "open for playback", code: -EBUSY),
                                     asoundRoot: root.path, procRoot: scratch.path).kind,
                       .busy(owner: DeviceFailure.Owner(pid: 4242, command: nil)), "by index; no comm to read")
    }

    func testAForbiddenCardNamesTheAudioGroup() throws {
        let card = try VirtualCard(directory: scratch.appending(path: "card"))
        card.makeCurrent()
        card.refusesOpen = EACCES
        let error = try XCTUnwrap(openError(card.pcmName))
        XCTAssertEqual(error.code, EACCES)
        XCTAssertEqual(error.description,
                       "audio device 'sfxcard': open for playback failed: permission denied (EACCES); add the user to the 'audio' group "
                       + "(sudo usermod -aG audio $USER) and log in again")
        XCTAssertFalse(error.isTransient)
    }

    func testAFormatTheDeviceLacksIsAConfigurationError() throws {
        let card = try VirtualCard(directory: scratch.appending(path: "card"))
        card.makeCurrent()
        var request = PlaybackRequest(device: card.hardwarePCMName, periodFrames: 480, periodCount: 3)
        request.formats = []
        XCTAssertThrowsError(try PCMPlayback(request)) { error in
            guard let error = error as? ALSAError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.code, EINVAL)
            XCTAssertFalse(error.isTransient)
        }
    }
}

/// A Unix socket that accepts each connection and closes it at once.
private final class RefusingServer: @unchecked Sendable {
    private let fd: Int32
    private let done = DispatchSemaphore(value: 0)
    private var count = 0
    private let lock = NSLock()

    var refused: Int { lock.withLock { count } }

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else { throw NSError(domain: "RefusingServer", code: Int(errno)) }
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 { break }
                lock.withLock { count += 1 }
                close(client)
            }
            done.signal()
        }
    }

    func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        _ = done.wait(timeout: .now() + 2)
    }
}
