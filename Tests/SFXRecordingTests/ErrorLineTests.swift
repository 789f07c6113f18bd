// Every RecorderError is one line naming the device or file and the fix.
import Foundation
import XCTest
import SFX
import SFXDevice
import SFXMedia

final class ErrorLineTests: XCTestCase {
    func testDeviceErrorsNameTheDeviceAndTheFix() {
        XCTAssertEqual(RecorderError.device(.busy(device: "hw:1,0", operation: "snd_pcm_open")).description,
                       "capture device 'hw:1,0' is busy (EBUSY): another program is recording from it; close that program, or pick another device with --device (`sfx devices` lists them)")
        XCTAssertEqual(RecorderError.device(.permissionDenied(device: "hw:0", operation: "snd_pcm_open", code: EACCES)).description,
                       "no permission to open capture device 'hw:0' (EACCES): add your user to the `audio` group (sudo usermod -aG audio $USER) and log in again")
        XCTAssertEqual(RecorderError.device(.noDevice(device: "hw:9", operation: "snd_pcm_open", code: ENOENT)).description,
                       "no capture device 'hw:9' (ENOENT): connect a microphone, or pick another device with --device (`sfx devices` lists them)")
        XCTAssertEqual(RecorderError.device(.unsupported(device: "hw:2", operation: "ask for rate 8000 (allowed: 44100…48000)")).description,
                       "capture device 'hw:2' cannot record as asked: ask for rate 8000 (allowed: 44100…48000) failed (EINVAL); try --rate 48000 or --channels 1, or pick another device with --device (`sfx devices` lists them)")
        XCTAssertEqual(RecorderError.device(.failed(device: "hw:3", operation: "snd_pcm_open", code: EIO)).description,
                       "capture device 'hw:3' failed at snd_pcm_open (EIO: Input/output error); pick another device with --device (`sfx devices` lists them)")
        let url = URL(filePath: "/data/take.wav")
        XCTAssertEqual(RecorderError.diskFull(url: url, seconds: 3.25).description,
                       "/data/take.wav: the disk is full (or the file-size limit reached): recording stopped and the 3.2 s written so far were kept; free some space")
        for error in [RecorderError.deviceLost(device: "hw:1", code: ENODEV), .alreadyStarted, .prompt("rejected: unknown sound"),
                      .setting(SettingError(setting: "channels", value: "3", allowed: "1…2"))] {
            XCTAssertFalse(error.description.contains("\n"))
            XCTAssertTrue(error.description.contains(";") || error.description.contains(":"), error.description)
        }
    }

    /// A sound server's device with no server running (PipeWire's plugin says EHOSTDOWN, Pulse's
    /// ECONNREFUSED): with a sound card, start the server or pick another device; without one,
    /// the line says there is neither and how to record anyway.
    func testAnAbsentSoundServerIsNamedWithTheFix() {
        let down = ALSAError(device: "default", operation: "open for capture", code: -EHOSTDOWN)
        let refused = ALSAError(device: "pulse", operation: "open for capture", code: -ECONNREFUSED)
        XCTAssertEqual(RecorderError.opening(down, hasSoundCard: true).description,
                       "capture device 'default' needs a sound server and none is running (EHOSTDOWN): start PipeWire or PulseAudio, or pick another device with --device (`sfx devices` lists them)")
        XCTAssertEqual(RecorderError.opening(down, hasSoundCard: false).description,
                       "no sound card here and no sound server running, so capture device 'default' cannot open (EHOSTDOWN): start PipeWire or PulseAudio, pick another device with --device (`sfx devices` lists them), or leave out --device to record from sfx's virtual card")
        XCTAssertEqual(RecorderError.opening(refused, hasSoundCard: false).description,
                       "no sound card here and no sound server running, so capture device 'pulse' cannot open (ECONNREFUSED): start PipeWire or PulseAudio, pick another device with --device (`sfx devices` lists them), or leave out --device to record from sfx's virtual card")
        // Other failures are not blamed on a server, card or not.
        let missing = ALSAError(device: "hw:9", operation: "snd_pcm_open", code: -ENOENT)
        XCTAssertEqual(RecorderError.opening(missing, hasSoundCard: false), .device(missing))
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
