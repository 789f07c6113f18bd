import CSFXProtocol
import Foundation
import Glibc
import XCTest

/// Malformed frames of every kind, each answered with an error reply naming the problem, and
/// the daemon serving on afterwards.
final class ProtocolFuzzTests: DaemonTestCase {
    func testEveryMalformedFrameGetsAnErrorAndTheDaemonKeepsServing() throws {
        try startDaemon()
        let fd = try connect()
        defer { close(fd) }
        var generator = SystemRandomNumberGenerator()
        var sent = 0
        var kinds: [String: Int] = [:]
        func send(_ bytes: [UInt8], _ kind: String) throws {
            let result = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            XCTAssertEqual(result, bytes.count, "\(kind): \(String(cString: strerror(errno)))")
            sent += 1
            kinds[kind, default: 0] += 1
            let answer = try reply(fd)
            XCTAssertEqual(answer.type, 0x82, "\(kind) \(bytes.prefix(16)) got \(answer)")
            XCTAssertFalse(answer.text.isEmpty, kind)
        }
        func header(version: UInt8 = 1, type: UInt8 = 1, id: UInt32 = 7, length: UInt32) -> [UInt8] {
            [0x53, 0x58, version, type] + withUnsafeBytes(of: id.littleEndian, Array.init) + withUnsafeBytes(of: length.littleEndian, Array.init)
        }
        for round in 0..<500 {
            // Random bytes (never a valid frame by chance: the magic is forced wrong).
            var random = (0..<Int.random(in: 1...300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            random[0] = 0
            try send(random, "random bytes")
            // Truncated: the length says more than follows.
            let body = Array("name=tock\n".utf8)
            try send(header(length: UInt32(body.count + 1 + round % 50)) + body, "truncated")
            // Shorter than a header.
            try send(Array(header(length: 0).prefix(round % 12 + 1)), "short")
            // A huge length prefix.
            try send(header(length: UInt32.random(in: 65_525...UInt32.max, using: &generator)) + body, "huge length")
            // Wrong versions.
            try send(header(version: UInt8.random(in: 2...255, using: &generator), length: UInt32(body.count)) + body, "wrong version")
            // Unknown types (requests are 1–10 since the notices request).
            try send(header(type: UInt8.random(in: 11...255, using: &generator), length: UInt32(body.count)) + body, "unknown type")
            // A filter or an effect request with a play's fields: no filter, no bus, an error too.
            try send(header(type: UInt8.random(in: 8...9, using: &generator), length: UInt32(body.count)) + body, "filter or effect without its fields")
            // A valid frame whose payload is not key=value text.
            let junk: [UInt8] = [0xff, 0xfe, 0x00, 0x41]
            try send(header(length: UInt32(junk.count)) + junk, "bad payload")
        }
        // Larger than any frame: the rest is cut off and the frame refused.
        try send([UInt8](repeating: 0x53, count: 70_000), "oversized")
        print("fuzz: \(sent) frames sent, every one answered with an error: \(kinds.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))")
        // Still serving, this connection and a new one.
        XCTAssertEqual(try request(fd, 1, id: 99, "name=tock\n").type, 0x81)
        let other = try connect()
        defer { close(other) }
        XCTAssertEqual(try request(other, 7, id: 1, "").type, 0x80)
        XCTAssertEqual(stopDaemon(), 0)
    }

    func testUnknownSoundsAndBadNumbersAreErrorsNamingThem() throws {
        try startDaemon()
        let fd = try connect()
        defer { close(fd) }
        let unknown = try request(fd, 1, id: 5, "name=no-such-sound\n")
        XCTAssertEqual(unknown.type, 0x82)
        XCTAssertEqual(unknown.id, 5)
        XCTAssertTrue(unknown.text.contains("no-such-sound"), unknown.text)
        let loud = try request(fd, 1, id: 6, "name=tock\nvolume=99\n")
        XCTAssertEqual(loud.type, 0x82)
        XCTAssertTrue(loud.text.contains("volume"), loud.text)
        let orphan = try request(fd, 1, id: 7, "file=1\n")
        XCTAssertEqual(orphan.type, 0x82)
        XCTAssertTrue(orphan.text.contains("descriptor"), orphan.text)
        XCTAssertEqual(stopDaemon(), 0)
    }
}

/// Hostile descriptors and floods: the daemon refuses or bounds each, and a good client is
/// served throughout (its latency printed: p50 and p99 of connect, play and reply).
final class DaemonAttackTests: DaemonTestCase {
    /// A good client in a loop of its own: connect, play a near-silent tock, read the reply.
    final class GoodClient: @unchecked Sendable {
        let path: String
        let lock = NSLock()
        var milliseconds: [Double] = []
        var failures: [String] = []
        /// Told `busy:` at connect (the daemon at a limit): such a client plays in-process.
        var busy = 0
        private let running = NSCondition()
        private var stopped = false
        private var thread: Thread?

        init(path: String) { self.path = path }

        func start() {
            let thread = Thread { [self] in
                while !running.withLock({ stopped }) {
                    let start = DaemonStatusClock.now()
                    var problem: String?
                    let fd = sfx_client_connect(path, 0)
                    if fd < 0 {
                        problem = "connect: \(String(cString: strerror(-fd)))"
                    } else {
                        let payload = Array("name=tock\nvolume=0.001\n".utf8)
                        let sent = payload.withUnsafeBytes { sfx_send_frame(fd, 1, 1, $0.baseAddress, payload.count, -1) }
                        var header = sfx_frame_header()
                        var buffer = [CChar](repeating: 0, count: 1024)
                        let got = sent == 0 ? sfx_receive_reply(fd, 10_000, &header, &buffer, buffer.count) : sent
                        if got != 0 { problem = "reply: \(String(cString: strerror(-got)))" }
                        else if header.type == 0x82, String(cString: buffer).hasPrefix("busy:") { problem = "busy" }
                        else if header.type != 0x81 { problem = "reply of type \(header.type): \(String(cString: buffer))" }
                        close(fd)
                    }
                    let elapsed = (DaemonStatusClock.now() - start) * 1000
                    lock.withLock {
                        if problem == "busy" { busy += 1 } else if let problem { failures.append(problem) } else { milliseconds.append(elapsed) }
                    }
                    usleep(5_000)
                }
            }
            self.thread = thread
            thread.start()
        }

        /// Stops the loop; returns "p50 X ms, p99 Y ms over N requests".
        func finish(_ label: String) -> (p50: Double, p99: Double, count: Int, failures: [String]) {
            running.withLock { stopped = true }
            while thread?.isFinished == false { usleep(10_000) }
            return lock.withLock {
                let sorted = milliseconds.sorted()
                func at(_ q: Double) -> Double { sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] }
                let result = (at(0.5), at(0.99), sorted.count, failures)
                print(String(format: "good client during %@: p50 %.2f ms, p99 %.2f ms over %d requests, %d told busy (then in-process), %d failed", label, result.0, result.1, result.2, busy, failures.count))
                if !failures.isEmpty { print("good client failures: \(Set(failures).sorted())") }
                return result
            }
        }
    }

    enum DaemonStatusClock {
        static func now() -> Double {
            var t = timespec()
            clock_gettime(CLOCK_MONOTONIC, &t)
            return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
        }
    }

    /// The daemon's open descriptors and resident memory (kB), from /proc.
    func descriptors(of process: Process) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/fd").count) ?? -1
    }

    func residentKilobytes(of process: Process) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return -1 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
    }

    static func raiseDescriptorLimit() {
        var files = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &files) == 0, files.rlim_cur < files.rlim_max {
            files.rlim_cur = files.rlim_max
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &files)
        }
    }

    /// A load whose descriptor is a pipe, a socketpair, an eventfd or a FIFO — none of which ever
    /// ends — is refused at once, naming what it is; the daemon serves everyone meanwhile, and a
    /// file truncated while it is read gets a reply too.
    func testHostileDescriptorsAreRefusedWhileOthersAreServed() throws {
        let daemon = try startDaemon()
        let good = GoodClient(path: socketPath)
        good.start()
        let fd = try connect()
        defer { close(fd) }
        var kept: [Int32] = []
        defer { for k in kept { close(k) } }
        func hostile() throws -> [(String, Int32)] {
            var ends: [Int32] = [0, 0]
            XCTAssertEqual(pipe(&ends), 0)
            kept.append(ends[1])
            var pair: [Int32] = [0, 0]
            XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
            kept.append(pair[1])
            let event = sfx_wake_descriptor()   // an eventfd, made blocking: a read of it never ends
            _ = fcntl(event, F_SETFL, fcntl(event, F_GETFL) & ~O_NONBLOCK)
            let fifo = scratch.appending(path: "fifo-\(kept.count)").path
            XCTAssertEqual(mkfifo(fifo, 0o600), 0)
            let fifoFD = open(fifo, O_RDWR | O_CLOEXEC)
            return [("pipe", ends[0]), ("socket", pair[0]), ("eventfd", event), ("FIFO", fifoFD)]
        }
        for round in 0..<5 {
            for (kind, descriptor) in try hostile() {
                XCTAssertGreaterThanOrEqual(descriptor, 0, kind)
                let answer = try request(fd, 6, id: UInt32(round + 1), "name=\(kind)\nfile=1\n", pass: descriptor)
                close(descriptor)
                XCTAssertEqual(answer.type, 0x82, "\(kind): \(answer.text)")
                XCTAssertTrue(answer.text.contains("not a regular file"), "\(kind): \(answer.text)")
                // Status still answers (it runs on the worker a wedged load would hold).
                let other = try connect()
                XCTAssertEqual(try request(other, 7, id: 1, "").type, 0x80, "status after a \(kind)")
                close(other)
            }
        }
        // A file truncated while the daemon reads it: a reply (error or sound), never a crash.
        let big = try writeTone("big.wav", seconds: 20)
        for id in 0..<10 {
            let file = open(big.path, O_RDONLY | O_CLOEXEC)
            let cutter = Thread { truncate(big.path, off_t(1000 * id)) }
            let bytes = Array("name=cut\nfile=1\n".utf8)
            XCTAssertEqual(bytes.withUnsafeBytes { sfx_send_frame(fd, 6, UInt32(100 + id), $0.baseAddress, bytes.count, file) }, 0)
            cutter.start()
            close(file)
            let answer = try reply(fd)
            XCTAssertEqual(answer.id, UInt32(100 + id))
            _ = try writeTone("big.wav", seconds: 20)
        }
        let latency = good.finish("hostile descriptors")
        XCTAssertEqual(latency.failures, [])
        XCTAssertGreaterThan(latency.count, 0)
        XCTAssertLessThan(descriptors(of: daemon), 100, "the daemon keeps no descriptor it was passed")
        XCTAssertEqual(stopDaemon(), 0, "SIGTERM still ends the daemon")
    }

    /// One client queues thousands of loads without reading a reply: the daemon takes a few at a
    /// time (the rest, and their descriptors, wait in the kernel), so its descriptors stay few.
    func testQueuedLoadsOfOneClientAreCapped() throws {
        let daemon = try startDaemon()
        let tone = try writeTone("small.wav", seconds: 0.05)
        let greedy = try connect()
        defer { close(greedy) }
        _ = fcntl(greedy, F_SETFL, fcntl(greedy, F_GETFL) | O_NONBLOCK)
        let file = open(tone.path, O_RDONLY | O_CLOEXEC)
        defer { close(file) }
        var sent = 0
        for id in 1...3_000 {
            let bytes = Array("name=n\(id % 10)\nfile=1\n".utf8)
            if bytes.withUnsafeBytes({ sfx_send_frame(greedy, 6, UInt32(id), $0.baseAddress, bytes.count, file) }) != 0 { break }
            sent += 1
        }
        usleep(500_000)
        let held = descriptors(of: daemon)
        print("queued loads: \(sent) sent unread, the daemon holds \(held) descriptors")
        XCTAssertLessThan(held, 200, "\(sent) loads queued")
        // Forty clients at once, each with as many loads as it may have in hand and more: the
        // daemon takes 64 files in all, and says busy to the rest.
        let long = try writeTone("long.wav", seconds: 5)
        let longFile = open(long.path, O_RDONLY | O_CLOEXEC)
        defer { close(longFile) }
        var many: [Int32] = []
        defer { for fd in many { close(fd) } }
        for _ in 0..<40 {
            let fd = try connect()
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            many.append(fd)
        }
        for round in 0..<12 {
            for fd in many {
                let bytes = Array("name=long\(round)\nfile=1\n".utf8)
                _ = bytes.withUnsafeBytes { sfx_send_frame(fd, 6, UInt32(round + 1), $0.baseAddress, bytes.count, longFile) }
            }
        }
        var most = 0
        for _ in 0..<20 {
            most = max(most, descriptors(of: daemon))
            usleep(50_000)
        }
        print("queued loads: 40 clients × 12 loads of a 5 s file: the daemon held at most \(most) descriptors")
        XCTAssertLessThan(most, 200)
        let other = try connect()
        defer { close(other) }
        XCTAssertEqual(try request(other, 7, id: 1, "").type, 0x80)
        XCTAssertEqual(stopDaemon(), 0)
    }

    /// 1,300 connections held open and idle: the C front and a good client still play through
    /// the daemon, or in-process, at once — never waiting on the flood.
    func testConnectionFloodLeavesClientsServed() throws {
        Self.raiseDescriptorLimit()
        let daemon = try startDaemon()
        var flood: [Int32] = []
        defer { for fd in flood { close(fd) } }
        for _ in 0..<1_300 {
            // Blocking, as a client's connect is, but given up after 5 s of a full backlog.
            let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var bound = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &bound, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                let bytes = Array(socketPath.utf8)
                raw.copyBytes(from: bytes)
                raw[bytes.count] = 0
            }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            if connected == 0 { flood.append(fd) } else {
                print("connection flood: connect \(flood.count + 1) failed: \(String(cString: strerror(errno)))")
                close(fd)
                break
            }
        }
        print("connection flood: \(flood.count) connections open")
        let good = GoodClient(path: socketPath)
        good.start()
        var durations: [Double] = []
        for _ in 0..<5 {
            let start = DaemonStatusClock.now()
            // Bounded: a client that waits on the flood would wait for ever.
            let play = try run(["play", "tock"], program: Self.front, prefix: ["/usr/bin/timeout", "20"], environment: ["SFX_DAEMON_TIMEOUT": nil])
            durations.append(DaemonStatusClock.now() - start)
            XCTAssertEqual(play.status, 0, play.stderr)
            let status = try run(["status", "--json"], prefix: ["/usr/bin/timeout", "20"], environment: ["SFX_DAEMON_TIMEOUT": nil])
            XCTAssertEqual(status.status, 0, status.stderr)
        }
        print("connection flood: sfx play tock took \(durations.map { String(format: "%.0f ms", $0 * 1000) }.joined(separator: ", "))")
        XCTAssertLessThan(durations.max() ?? 0, 8, "sfx play tock waited on the flood")
        let latency = good.finish("a connection flood")
        XCTAssertGreaterThan(latency.count, 0)
        XCTAssertLessThan(descriptors(of: daemon), 1_200)
        XCTAssertEqual(stopDaemon(), 0)
    }

    /// Clients that send status requests and never read: the daemon keeps a bounded amount of
    /// replies for each, and closes those that will not read.
    func testUnreadRepliesAreBounded() throws {
        let daemon = try startDaemon()
        let before = residentKilobytes(of: daemon)
        var greedy: [Int32] = []
        defer { for fd in greedy { close(fd) } }
        for _ in 0..<100 {
            let fd = try connect()
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            for id in 1...80 {
                if sfx_send_frame(fd, 7, UInt32(id), nil, 0, -1) != 0 { break }
            }
            greedy.append(fd)
        }
        // Let the worker answer what it took.
        let other = try connect()
        defer { close(other) }
        XCTAssertEqual(try request(other, 7, id: 1, "").type, 0x80)
        usleep(500_000)
        let after = residentKilobytes(of: daemon)
        print("unread replies: resident \(before / 1024) MB before, \(after / 1024) MB with 100 clients × 80 unread status replies")
        XCTAssertLessThan(after - before, 150 * 1024)
        // Those that will not read are closed (10 s unread), which frees what the kernel holds for them.
        let start = DaemonStatusClock.now()
        var open = greedy.count
        while open > 0, DaemonStatusClock.now() - start < 40 {
            open = greedy.filter { fd in
                var p = pollfd(fd: fd, events: Int16(POLLIN) | 0x2000, revents: 0)   // POLLRDHUP
                return poll(&p, 1, 0) == 0 || p.revents & (Int16(POLLHUP) | 0x2000) == 0
            }.count
            if open > 0 { usleep(200_000) }
        }
        print(String(format: "unread replies: the daemon closed the %d clients that did not read after %.1f s", greedy.count - open, DaemonStatusClock.now() - start))
        XCTAssertEqual(open, 0, "clients that never read are closed")
        XCTAssertEqual(try request(other, 7, id: 2, "").type, 0x80, "a client that reads is kept")
        XCTAssertEqual(stopDaemon(), 0)
    }
}
