// ALSAError is an enum a caller can switch on; its one line still names the device, the errno and the fix.
import Glibc
import XCTest
import SFXDevice

final class ALSAErrorTests: XCTestCase {
    func testEachErrnoLandsInTheCaseACallerActsOn() {
        func kind(_ code: Int32) -> String {
            switch ALSAError(device: "hw:9,0", operation: "open for playback", code: code) {
            case .noDevice: "noDevice"
            case .busy: "busy"
            case .permissionDenied: "permissionDenied"
            case .unsupported: "unsupported"
            case .failed: "failed"
            }
        }
        XCTAssertEqual([ENOENT, ENODEV, ENXIO].map { kind(-$0) }, ["noDevice", "noDevice", "noDevice"])
        XCTAssertEqual(kind(-EBUSY), "busy")
        XCTAssertEqual([EACCES, EPERM].map { kind(-$0) }, ["permissionDenied", "permissionDenied"])
        XCTAssertEqual(kind(-EINVAL), "unsupported")
        XCTAssertEqual([EIO, EPIPE, ETIMEDOUT].map { kind(-$0) }, ["failed", "failed", "failed"])
        XCTAssertEqual(kind(ENODEV), "noDevice", "a positive errno is taken as well")
    }

    func testTheCaseKeepsDeviceOperationAndCode() {
        let error = ALSAError(device: "hw:9,0", operation: "open for playback", code: -ENODEV)
        XCTAssertEqual(error, .noDevice(device: "hw:9,0", operation: "open for playback", code: ENODEV))
        XCTAssertEqual(error.device, "hw:9,0")
        XCTAssertEqual(error.operation, "open for playback")
        XCTAssertEqual(error.code, ENODEV)
        XCTAssertTrue(error.isDisconnect)
        XCTAssertEqual(ALSAError(device: "d", operation: "o", code: -EBUSY).code, EBUSY)
        XCTAssertEqual(ALSAError(device: "d", operation: "o", code: -EINVAL).code, EINVAL)
        XCTAssertFalse(ALSAError(device: "d", operation: "o", code: -EBUSY).isDisconnect)
    }

    /// The lines as DeviceFailure sorts the errno (hw is a card's plugin, so ENODEV is a card
    /// gone, to be reopened, and EBUSY names the holder when /proc/asound says; here it cannot).
    func testTheLineNamesTheDeviceTheErrnoAndTheFix() {
        XCTAssertEqual(ALSAError(device: "hw:9,0", operation: "open for playback", code: -ENODEV).description,
                       "audio device 'hw:9,0': open for playback failed: the card is gone (ENODEV: unplugged or switched off); "
                       + "it is reopened when it comes back: plug it in again, or choose another with -D / output.device "
                       + "(`sfx devices` lists the devices there are)")
        XCTAssertEqual(ALSAError(device: "hw:0,0", operation: "open for playback", code: -EBUSY).description,
                       "audio device 'hw:0,0': open for playback failed: the device is busy (EBUSY); another program "
                       + "holds it: close the other program, or use a shared device such as 'default' or 'dmix'")
        XCTAssertEqual(ALSAError(device: "x", operation: "play", code: -EIO).description,
                       "audio device 'x': play failed: Input/output error (EIO)")
    }
}
