import Synchronization
import XCTest
import SFX
@testable import SFXPlayback

/// `Configuration.commandCapacity` and `noticeCapacity`: a command that plays a sound or two and
/// exits asks for small queues (they are zeroed up front, which takes time); they hold what they
/// are sized for, and a play beyond is refused as the queue is full, never lost silently.
final class QueueCapacityTests: XCTestCase {
    func testPlaysQueuedBeforeTheStartFillTheCommandCapacityAndTheRestAreRefused() throws {
        let setup = try EngineOnCard(period: 128, periods: 3) {
            $0.deferredStart = true
            $0.commandCapacity = 4
            $0.noticeCapacity = 0
        }
        defer { setup.close() }
        let click = try setup.engine.load(buffer: [Float](repeating: 0.5, count: 480), sampleRate: 48_000, channels: 1, name: "click")
        let outcomes = Mutex<[PlayOutcome]>([])
        for _ in 0..<6 {
            setup.engine.play(click) { outcome in outcomes.withLock { $0.append(outcome) } }
        }
        XCTAssertTrue(setup.engine.waitUntilIdle(timeout: .seconds(10)))
        // Completions are delivered off the real-time thread: wait for all six.
        for _ in 0..<500 where outcomes.withLock({ $0.count }) < 6 { usleep(10_000) }
        let seen = outcomes.withLock { $0 }
        XCTAssertEqual(seen.filter { $0 == .finished }.count, 4, "\(seen)")
        XCTAssertEqual(seen.filter { $0 == .rejected(.commandQueueFull) }.count, 2, "\(seen)")
    }
}
