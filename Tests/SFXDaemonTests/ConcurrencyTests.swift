import CSFXProtocol
import Foundation
import Glibc
import SFXCardSupport
import XCTest

/// Many clients at once, and two clients heard together.
final class ConcurrencyTests: DaemonTestCase {
    /// 100 clients × 100 plays, all at once: every request gets exactly one reply with its id.
    func testHundredClientsTimesHundredPlaysAreAllAnswered() throws {
        try startDaemon()
        let clients = 100, plays = 100
        final class Tally: @unchecked Sendable {
            let lock = NSLock()
            var replies: [Int: Set<UInt32>] = [:]
            var problems: [String] = []
        }
        let tally = Tally()
        let path = socketPath
        DispatchQueue.concurrentPerform(iterations: clients) { client in
            let fd = sfx_client_connect(path, 0)
            guard fd >= 0 else {
                tally.lock.withLock { tally.problems.append("client \(client): connect: \(String(cString: strerror(-fd)))") }
                return
            }
            defer { close(fd) }
            var seen = Set<UInt32>()
            // Pipelined: ten requests in flight, then their replies.
            for batch in stride(from: 0, to: plays, by: 10) {
                for play in batch..<batch + 10 {
                    let payload = Array("name=tock\nvolume=0.01\n".utf8)
                    let sent = payload.withUnsafeBytes { sfx_send_frame(fd, 1, UInt32(play + 1), $0.baseAddress, payload.count, -1) }
                    if sent != 0 { tally.lock.withLock { tally.problems.append("client \(client) play \(play): send: \(sent)") } }
                }
                for _ in batch..<batch + 10 {
                    var header = sfx_frame_header()
                    var text = [CChar](repeating: 0, count: 256)
                    let got = sfx_receive_reply(fd, 30_000, &header, &text, text.count)
                    if got != 0 || header.type != 0x81 {
                        tally.lock.withLock { tally.problems.append("client \(client): reply \(got) type \(header.type)") }
                        continue
                    }
                    if !seen.insert(header.id).inserted {
                        tally.lock.withLock { tally.problems.append("client \(client): id \(header.id) answered twice") }
                    }
                }
            }
            tally.lock.withLock { tally.replies[client] = seen }
        }
        XCTAssertEqual(tally.problems, [])
        XCTAssertEqual(tally.replies.count, clients)
        for (client, ids) in tally.replies {
            XCTAssertEqual(ids, Set((1...plays).map(UInt32.init)), "client \(client)")
        }
        XCTAssertEqual(stopDaemon(), 0)
    }

    /// Two clients at once, one panned hard left and one hard right: the card's recording has
    /// both, so both were heard together.
    func testTwoClientsPlayingAtOnceAreBothHeard() throws {
        try startDaemon()
        let left = try connect(), right = try connect()
        defer { close(left); close(right) }
        XCTAssertEqual(try request(left, 1, id: 1, "name=bell\npan=-1\n").type, 0x81)
        XCTAssertEqual(try request(right, 1, id: 1, "name=bell\npan=1\n").type, 0x81)
        usleep(300_000)
        XCTAssertEqual(stopDaemon(), 0)
        let recording = try XCTUnwrap(card.recordingURLs().last)
        let audio = try WAVAudio(contentsOf: recording)
        XCTAssertEqual(audio.channels, 2)
        let leftPeak = audio.channel(0).map(abs).max() ?? 0
        let rightPeak = audio.channel(1).map(abs).max() ?? 0
        XCTAssertGreaterThan(leftPeak, 0.01, "the left client was not heard")
        XCTAssertGreaterThan(rightPeak, 0.01, "the right client was not heard")
        // Heard together: some frame has both channels sounding.
        let frames = audio.frameCount
        let together = (0..<frames).contains { abs(audio.samples[2 * $0]) > 0.001 && abs(audio.samples[2 * $0 + 1]) > 0.001 }
        XCTAssertTrue(together, "the two plays never overlapped")
    }
}

/// A client that sends and never reads, and one that vanishes mid-request, hold up no one.
final class SlowClientTests: DaemonTestCase {
    func testAClientThatNeverReadsDoesNotBlockTheOthers() throws {
        try startDaemon()
        let greedy = try connect()
        defer { close(greedy) }
        // Far more requests than its socket holds replies for, without reading one.
        var sentCount = 0
        _ = fcntl(greedy, F_SETFL, fcntl(greedy, F_GETFL) | O_NONBLOCK)
        for id in 1...5_000 {
            let payload = Array("name=tock\nvolume=0.001\n".utf8)
            let sent = payload.withUnsafeBytes { sfx_send_frame(greedy, 1, UInt32(id), $0.baseAddress, payload.count, -1) }
            if sent != 0 { break }
            sentCount += 1
        }
        XCTAssertGreaterThan(sentCount, 64)
        // A client that asks for its status and goes away before the reply.
        let vanishing = try connect()
        let empty: [UInt8] = []
        XCTAssertEqual(empty.withUnsafeBytes { sfx_send_frame(vanishing, 7, 1, $0.baseAddress, 0, -1) }, 0)
        close(vanishing)
        // Others are still answered (a daemon blocked on the greedy client would answer none:
        // each request would end at the reply's time-out instead).
        for _ in 0..<20 {
            let other = try connect()
            XCTAssertEqual(try request(other, 1, id: 1, "name=tock\nvolume=0.001\n").type, 0x81)
            close(other)
        }
        XCTAssertEqual(stopDaemon(), 0)
    }
}
