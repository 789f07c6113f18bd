import CSFXProtocol
import Foundation
import Glibc
import SFXDaemon
import XCTest

/// A connection that sends `notices` (type 10) gets every alert the daemon makes, from any
/// client, as `notice` frames (0x83) with its request's id: a kiosk's caption bar, a notifier.
final class NoticeTests: DaemonTestCase {
    static let notices: UInt8 = 10
    static let notice: UInt8 = 0x83

    /// The status JSON, asked on `fd`.
    func status(_ fd: Int32, id: UInt32 = 900) throws -> [String: Any] {
        let answer = try request(fd, 7, id: id, "")
        XCTAssertEqual(answer.type, 0x80, answer.text)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(answer.text.utf8)) as? [String: Any], answer.text)
    }

    func fields(_ text: String) throws -> Fields {
        try XCTUnwrap(Fields(payload: Array(text.utf8)), text)
    }

    func testASubscriberGetsTheNoticeOfAnotherClientsAlert() throws {
        try startDaemon()
        let subscriber = try connect()
        var subscriberOpen = true
        defer { if subscriberOpen { close(subscriber) } }
        let subscribed = try request(subscriber, Self.notices, id: 77, "")
        XCTAssertEqual(subscribed.type, 0x80, subscribed.text)
        XCTAssertEqual(subscribed.id, 77)
        let other = try connect()
        defer { close(other) }
        let alert = try request(other, 2, id: 5, "name=bell\n")
        XCTAssertEqual(alert.type, 0x80, alert.text)
        let alertFields = try fields(alert.text)
        let pushed = try reply(subscriber)
        XCTAssertEqual(pushed.type, Self.notice, pushed.text)
        XCTAssertEqual(pushed.id, 77, "the notice carries the subscribe request's id")
        let notice = try fields(pushed.text)
        XCTAssertEqual(notice["caption"], "The generic alert", pushed.text)
        XCTAssertEqual(notice["sound"], "bell")
        XCTAssertEqual(notice["reached"], "heard")
        XCTAssertEqual(notice["quiet"], "false")
        XCTAssertEqual(notice["notice"], "The generic alert [bell: heard]")
        // The alert's own reply tells the same, with the same fields.
        for key in ["caption", "sound", "reached", "quiet", "notice", "flashed"] {
            XCTAssertEqual(alertFields[key], notice[key], "\(key): \(alert.text)")
        }
        XCTAssertEqual(try status(other)["subscribers"] as? Int, 1)

        // A second notices request is answered ok and changes nothing: still one stream, the
        // first id. Muted, the alert is not heard, and the notice says so as the reply does.
        let again = try request(subscriber, Self.notices, id: 78, "")
        XCTAssertEqual(again.type, 0x80, again.text)
        XCTAssertEqual(again.id, 78)
        XCTAssertEqual(try request(other, 5, id: 6, "action=on\n").type, 0x80)
        let silent = try request(other, 2, id: 7, "name=dialog-warning\n")
        XCTAssertEqual(silent.type, 0x80, silent.text)
        let muted = try reply(subscriber)
        XCTAssertEqual(muted.type, Self.notice, muted.text)
        XCTAssertEqual(muted.id, 77)
        XCTAssertEqual(try fields(muted.text)["sound"], "dialog-warning")
        let reached = try XCTUnwrap(try fields(muted.text)["reached"], muted.text)
        XCTAssertFalse(reached.contains("heard"), muted.text)
        XCTAssertEqual(reached, try fields(silent.text)["reached"])
        // No second copy of that notice is behind it: the next frame is the status reply.
        let after = try status(subscriber, id: 901)
        XCTAssertEqual(after["subscribers"] as? Int, 1)
        XCTAssertEqual(after["noticesSent"] as? Int, 2)
        XCTAssertEqual(after["noticesDropped"] as? Int, 0)
        XCTAssertEqual(try request(other, 5, id: 8, "action=off\n").type, 0x80)

        // A subscriber that goes is no longer counted.
        close(subscriber)
        subscriberOpen = false
        var count = 1
        for _ in 0..<200 where count != 0 {
            count = try status(other)["subscribers"] as? Int ?? -1
            if count != 0 { usleep(50_000) }
        }
        XCTAssertEqual(count, 0, "a closed subscriber is forgotten")
        XCTAssertEqual(stopDaemon(), 0)
    }

    /// `DaemonClient`: a notice that comes before the reply to another request is kept for
    /// `nextNotice`, and the request gets its own reply.
    func testTheClientKeepsANoticeThatComesBeforeAReply() throws {
        try startDaemon()
        let client = try DaemonClient.connect(path: socketPath)
        XCTAssertEqual(try client.subscribeToNotices().kind, .ok)
        let other = try connect()
        defer { close(other) }
        XCTAssertEqual(try request(other, 2, id: 1, "name=bell\n").type, 0x80)
        // Once the daemon has queued the notice for the client, it is ahead of any later reply.
        var sent = 0
        for _ in 0..<400 where sent == 0 {
            sent = try status(other)["noticesSent"] as? Int ?? 0
            if sent == 0 { usleep(50_000) }
        }
        XCTAssertEqual(sent, 1)
        let reply = try client.request(.status)
        XCTAssertEqual(reply.kind, .ok, reply.text)
        XCTAssertTrue(reply.text.hasPrefix("{"), "the status JSON, not the notice: \(reply.text)")
        let notice = try client.nextNotice(timeoutMilliseconds: 10_000)
        XCTAssertEqual(notice.caption, "The generic alert")
        XCTAssertEqual(notice.sound, "bell")
        XCTAssertEqual(notice.reached, "heard")
        XCTAssertFalse(notice.quiet)
        XCTAssertEqual(notice.line, "The generic alert [bell: heard]")
        XCTAssertEqual(notice.id, reply.id - 1, "the id of the notices request, the one before the status")
        XCTAssertEqual(stopDaemon(), 0)
    }

    /// A subscriber that never reads while many alerts are made: its notices past the bound are
    /// dropped and counted, every notice is either queued or counted, nobody is closed, the
    /// daemon answers throughout, and the subscriber gets its stream again once it reads.
    func testASubscriberThatNeverReadsIsBoundedAndNothingIsClosed() throws {
        // No idle timeout: any connection closed here would be the flood's doing.
        try startDaemon(["--client-idle-timeout", "0"])
        let subscriber = try connect()
        defer { close(subscriber) }
        XCTAssertEqual(try request(subscriber, Self.notices, id: 3, "").type, 0x80)
        let bystander = try connect()
        defer { close(bystander) }
        XCTAssertEqual(try request(bystander, 7, id: 1, "").type, 0x80)
        let alerter = try connect()
        defer { close(alerter) }
        let alerts = 300
        for n in 1...alerts {
            let answer = try request(alerter, 2, id: UInt32(n), "name=bell\nvolume=0.01\n")
            XCTAssertEqual(answer.type, 0x80, "alert \(n): \(answer.text)")
        }
        // Every notice is handed to the subscriber or counted as dropped, once the engine has
        // delivered them all.
        var sent = 0, dropped = 0
        for _ in 0..<400 {
            let status = try status(bystander)
            sent = status["noticesSent"] as? Int ?? -1
            dropped = status["noticesDropped"] as? Int ?? -1
            XCTAssertEqual(status["subscribers"] as? Int, 1)
            if sent + dropped >= alerts { break }
            usleep(50_000)
        }
        print("notices: \(alerts) alerts to a subscriber that did not read: \(sent) queued, \(dropped) dropped")
        XCTAssertEqual(sent + dropped, alerts, "each notice queued or counted")
        XCTAssertGreaterThan(dropped, 0, "past the bound notices are dropped, not kept")
        XCTAssertLessThanOrEqual(sent, 64 + 256, "at most the outbox and what the kernel holds")
        // Nobody was closed: the bystander and the alerter are served, the subscriber is open
        // and, reading, gets every notice queued for it, then its stream goes on.
        XCTAssertEqual(try request(alerter, 7, id: 1000, "").type, 0x80)
        for n in 0..<sent {
            let pushed = try reply(subscriber)
            XCTAssertEqual(pushed.type, Self.notice, "notice \(n): \(pushed.text)")
            XCTAssertEqual(pushed.id, 3)
        }
        XCTAssertEqual(try status(subscriber)["noticesSent"] as? Int, sent, "nothing more was queued")
        XCTAssertEqual(try request(alerter, 2, id: 1001, "name=bell\nvolume=0.01\n").type, 0x80)
        let resumed = try reply(subscriber)
        XCTAssertEqual(resumed.type, Self.notice, resumed.text)
        XCTAssertEqual(try fields(resumed.text)["sound"], "bell")
        XCTAssertEqual(stopDaemon(), 0)
    }

    /// The idle timeout closes an idle connection but not a subscriber, which waits on purpose.
    func testAnIdleSubscriberOutlivesTheIdleTimeout() throws {
        try startDaemon(["--client-idle-timeout", "1"])
        let subscriber = try connect()
        defer { close(subscriber) }
        XCTAssertEqual(try request(subscriber, Self.notices, id: 9, "").type, 0x80)
        // A plain connection, idle from a moment later than the subscriber: its closing is the
        // sign that the subscriber has been idle past the timeout too.
        let plain = try connect()
        defer { close(plain) }
        XCTAssertEqual(try request(plain, 7, id: 1, "").type, 0x80)
        var ended = pollfd(fd: plain, events: Int16(POLLIN | SFX_POLLRDHUP), revents: 0)
        XCTAssertEqual(poll(&ended, 1, 30_000), 1, "the idle connection is closed")
        var byte: UInt8 = 0
        XCTAssertEqual(recv(plain, &byte, 1, 0), 0, "the daemon closed the idle connection")
        var open = pollfd(fd: subscriber, events: Int16(POLLIN | SFX_POLLRDHUP), revents: 0)
        XCTAssertEqual(poll(&open, 1, 0), 0, "the subscriber is open, with nothing to read: \(open.revents)")
        // And its stream goes on.
        let alerter = try connect()
        defer { close(alerter) }
        XCTAssertEqual(try request(alerter, 2, id: 2, "name=bell\n").type, 0x80)
        let pushed = try reply(subscriber)
        XCTAssertEqual(pushed.type, Self.notice, pushed.text)
        XCTAssertEqual(pushed.id, 9)
        XCTAssertEqual(try fields(pushed.text)["caption"], "The generic alert")
        XCTAssertEqual(stopDaemon(), 0)
    }

    /// `sfx alert --follow` prints the caption line of an alert another process makes, and ends
    /// with one line when the daemon goes; without a daemon it says so at once.
    func testAlertFollowPrintsTheCaptionOfAnotherProcesssAlert() throws {
        let none = try run(["alert", "--follow"])
        XCTAssertEqual(none.status, 1)
        XCTAssertEqual(none.stderr, "sfx: no sfx daemon at \(socketPath): start one with sfx serve\n")
        let withSound = try run(["alert", "--follow", "bell"])
        XCTAssertEqual(withSound.status, 64, withSound.stderr)
        XCTAssertTrue(withSound.stderr.contains("give it no sound"), withSound.stderr)

        try startDaemon()
        let follower = Process()
        follower.executableURL = Self.program
        follower.arguments = ["alert", "--follow"]
        follower.environment = environment()
        let output = Pipe(), errors = Pipe()
        follower.standardOutput = output
        follower.standardError = errors
        try follower.run()
        defer {
            if follower.isRunning {
                follower.terminate()
                follower.waitUntilExit()
            }
        }
        // Subscribed once the daemon counts it.
        let watcher = try connect()
        defer { close(watcher) }
        var subscribers = 0
        for _ in 0..<400 where subscribers == 0 && follower.isRunning {
            subscribers = try status(watcher)["subscribers"] as? Int ?? 0
            if subscribers == 0 { usleep(50_000) }
        }
        XCTAssertEqual(subscribers, 1, "sfx alert --follow subscribed")
        let alert = try run(["alert", "--daemon", "bell"])
        XCTAssertEqual(alert.status, 0, alert.stderr)
        let line: String
        do {
            line = try firstLine(of: output.fileHandleForReading.fileDescriptor)
        } catch {
            follower.terminate()
            follower.waitUntilExit()
            let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let now = try status(watcher)
            throw DaemonError("\(error); sfx alert --follow said: \(said) (\(alert.stdout)) status \(now)")
        }
        XCTAssertEqual(line, "caption: The generic alert [bell: heard]")
        // The daemon stops: the follower ends, saying why.
        XCTAssertEqual(stopDaemon(), 0)
        follower.waitUntilExit()
        XCTAssertEqual(follower.terminationStatus, 1)
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertTrue(said.hasPrefix("sfx: the daemon at \(socketPath) went away ("), said)
        XCTAssertTrue(said.hasSuffix("; start it again with sfx serve\n"), said)
    }

    /// The first line written to `fd`, waiting for it at most 20 s (a bound, not a measure).
    func firstLine(of fd: Int32) throws -> String {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !bytes.contains(UInt8(ascii: "\n")) {
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 20_000) == 1 else { throw DaemonError("no line within 20 s; got \(String(decoding: bytes, as: UTF8.self))") }
            let got = read(fd, &chunk, chunk.count)
            guard got > 0 else { throw DaemonError("the output ended; got \(String(decoding: bytes, as: UTF8.self))") }
            bytes += chunk.prefix(got)
        }
        return String(decoding: bytes.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    }
}
