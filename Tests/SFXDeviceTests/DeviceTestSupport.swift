import Glibc
import XCTest
import SFXDevice

/// Closes `device`, then checks that every call reports -EBADFD (as `PlaybackDevice` documents)
/// instead of reaching a closed handle, and that drop, drain and close again are harmless.
func assertEveryCallReportsEBADFDAfterClose(_ device: any PlaybackDevice, file: StaticString = #filePath, line: UInt = #line) {
    device.close()
    let samples = [Float](repeating: 0, count: 960)
    XCTAssertEqual(device.wait(timeoutMilliseconds: 10), -EBADFD, file: file, line: line)
    XCTAssertEqual(device.available(), -Int(EBADFD), file: file, line: line)
    XCTAssertEqual(samples.withUnsafeBufferPointer { device.write($0.baseAddress!, frames: 480) }, -Int(EBADFD), file: file, line: line)
    XCTAssertEqual(device.delay(), -Int(EBADFD), file: file, line: line)
    XCTAssertEqual(device.recover(-EPIPE), -EBADFD, file: file, line: line)
    device.drop()
    device.drain()
    device.close()
}
