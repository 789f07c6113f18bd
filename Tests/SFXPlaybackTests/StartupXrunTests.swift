import Foundation
import XCTest
import SFX
@testable import SFXPlayback
import SFXCardSupport

/// Xruns within 200 ms of the device's opening are counted apart (`Metrics.startupXruns`), as
/// well as in `xruns`.
final class StartupXrunTests: XCTestCase {
    func testAnXrunRightAfterOpeningCountsAsStartUp() throws {
        let setup = try EngineOnCard(period: 480, periods: 3)
        defer { setup.close() }
        setup.card.injectXrun()
        XCTAssertTrue(eventually { setup.engine.metrics.xruns == 1 })
        XCTAssertEqual(setup.engine.metrics.startupXruns, 1)
        XCTAssertTrue(setup.engine.metrics.description.contains("1 xruns (1 at start-up)"), setup.engine.metrics.description)
    }

    func testAnXrunInSteadyPlaybackDoesNot() throws {
        let setup = try EngineOnCard(period: 480, periods: 3)
        defer { setup.close() }
        usleep(400_000)
        setup.card.injectXrun()
        XCTAssertTrue(eventually { setup.engine.metrics.xruns == 1 })
        XCTAssertEqual(setup.engine.metrics.startupXruns, 0)
    }
}
