// Every RecorderError is one line naming the device or file and the fix.
import Foundation
import XCTest
import SFX
import SFXDevice
import SFXMedia

final class ErrorLineTests: XCTestCase {
    func testDeviceErrorsNameTheDeviceAndTheFix() {
        XCTAssertEqual(RecorderError.device(.busy(device: "hw:1,0", operation: "snd_pcm_open")).description,
                       "capture device hw:1,0 is busy: another program is recording from it; close that program, or choose another device (--device; `sfx devices` lists them)")
        XCTAssertEqual(RecorderError.device(.permissionDenied(device: "hw:0", operation: "snd_pcm_open", code: EACCES)).description,
                       "no permission to use hw:0: add your user to the `audio` group (sudo usermod -aG audio $USER) and log in again")
        XCTAssertEqual(RecorderError.device(.noDevice(device: "hw:9", operation: "snd_pcm_open", code: ENOENT)).description,
                       "no capture device hw:9: connect a microphone, or choose another device (--device; `sfx devices` lists them)")
        let url = URL(filePath: "/data/take.wav")
        XCTAssertEqual(RecorderError.diskFull(url: url, seconds: 3.25).description,
                       "/data/take.wav: the disk is full (or the file-size limit reached): recording stopped and the 3.2 s written so far were kept; free some space")
        for error in [RecorderError.deviceLost(device: "hw:1", code: ENODEV), .alreadyStarted, .prompt("rejected: unknown sound"),
                      .setting(SettingError(setting: "channels", value: "3", allowed: "1…2"))] {
            XCTAssertFalse(error.description.contains("\n"))
            XCTAssertTrue(error.description.contains(";") || error.description.contains(":"), error.description)
        }
    }

    /// Settings out of range are refused before anything opens.
    func testSettingsOutOfRangeAreRefused() {
        var settings = RecorderSettings(format: .wav)
        settings.channels = 3
        XCTAssertThrowsError(try Recorder(settings: settings)) { error in
            XCTAssertEqual("\(error)", "channels 3 is out of range: use 1…2")
        }
        settings.channels = 1
        settings.minDuration = .seconds(5)
        settings.maxDuration = .seconds(2)
        XCTAssertThrowsError(try Recorder(settings: settings))
        settings.minDuration = nil
        settings.prompt = SoundID(rawValue: 1000)
        XCTAssertThrowsError(try Recorder(settings: settings)) { error in
            XCTAssertTrue("\(error)".contains("a prompt needs the SoundEngine"), "\(error)")
        }
    }
}
