import CALSA
import Foundation
import SFXCardSupport
import SFXTestSupport
import XCTest

/// The Master control: through snd_mixer, through the state file, and on what reaches the DAC.
final class MixerTests: CardTestCase {
    /// The card's mixer, opened with the ordinary simple-mixer API.
    private final class Mixer {
        let handle: OpaquePointer
        let master: OpaquePointer

        init(_ name: String) throws {
            var mixer: OpaquePointer?
            try check(snd_mixer_open(&mixer, 0))
            handle = mixer!
            try check(snd_mixer_attach(handle, name))
            try check(snd_mixer_selem_register(handle, nil, nil))
            try check(snd_mixer_load(handle))
            var id: OpaquePointer?
            try check(snd_mixer_selem_id_malloc(&id))
            defer { snd_mixer_selem_id_free(id) }
            snd_mixer_selem_id_set_name(id, "Master")
            master = try XCTUnwrap(snd_mixer_find_selem(handle, id))
        }

        deinit { snd_mixer_close(handle) }

        var volume: Int {
            var value = 0
            snd_mixer_selem_get_playback_volume(master, SND_MIXER_SCHN_MONO, &value)
            return value
        }

        var isOn: Bool {
            var value: Int32 = 0
            snd_mixer_selem_get_playback_switch(master, SND_MIXER_SCHN_MONO, &value)
            return value != 0
        }

        var centibels: Int {
            var value = 0
            snd_mixer_selem_get_playback_dB(master, SND_MIXER_SCHN_MONO, &value)
            return value
        }
    }

    func testMasterIsSharedBetweenTheMixerAndTheCard() throws {
        card.masterVolume = 80
        let mixer = try Mixer(card.ctlName)
        XCTAssertEqual(mixer.volume, 80)
        XCTAssertTrue(mixer.isOn)
        XCTAssertEqual(mixer.centibels, -1_000, "volume 80 is -10 dB")

        try check(snd_mixer_selem_set_playback_volume_all(mixer.master, 60))
        try check(snd_mixer_selem_set_playback_switch_all(mixer.master, 0))
        XCTAssertEqual(card.masterVolume, 60)
        XCTAssertFalse(card.masterSwitch)
        XCTAssertTrue(try card.events().contains { $0.kind == .master(on: false, volume: 60) })
    }

    func testMixerClientsHearOfChangesMadeElsewhere() throws {
        let mixer = try Mixer(card.ctlName)
        XCTAssertEqual(mixer.volume, 100)
        card.masterVolume = 30
        var waited = 0
        while mixer.volume != 30 && waited < 20 {
            snd_mixer_wait(mixer.handle, 100)
            snd_mixer_handle_events(mixer.handle)
            waited += 1
        }
        XCTAssertEqual(mixer.volume, 30)
    }

    func testMasterScalesWhatReachesTheDAC() throws {
        card.masterVolume = 80
        let pcm = try PCM(card.hardwarePCMName)
        try pcm.configure(channels: 1, periodFrames: 960, periods: 4)
        let audio = Signal.tone(frames: 4_800, channels: 1)
        try pcm.write(audio)
        try pcm.drain()
        let recording = try WAVAudio(contentsOf: card.recordingURL)
        let gain = Float(pow(10, -10.0 / 20))
        XCTAssertEqual(card.masterGain, gain, accuracy: 1e-6)
        XCTAssertEqual(recording.frameCount, audio.count)
        for (recorded, played) in zip(recording.samples, audio) {
            XCTAssertEqual(recorded, played * gain, accuracy: 1e-6)
        }

        card.masterSwitch = false
        try check(snd_pcm_prepare(pcm.handle))
        try pcm.write(audio)
        try pcm.drain()
        let muted = try WAVAudio(contentsOf: card.recordingURL)
        XCTAssertEqual(muted.samples.dropFirst(audio.count).max(), 0, "Master off sends silence to the DAC")
        XCTAssertEqual(muted.frameCount, 2 * audio.count)
        XCTAssertEqual(try onsets().count, 1, "no sound reached the DAC the second time")
    }

    func testAmixerReadsAndWritesMaster() throws {
        let set = try runTool("/usr/bin/amixer", ["-D", card.ctlName, "sset", "Master", "40", "off"], environment: card.environment)
        XCTAssertEqual(set.status, 0, set.output)
        XCTAssertEqual(card.masterVolume, 40)
        XCTAssertFalse(card.masterSwitch)
        let get = try runTool("/usr/bin/amixer", ["get", "Master"], environment: card.environment)
        XCTAssertTrue(get.output.contains("Playback 40 [40%] [-30.00dB] [off]"), get.output)
    }
}

/// Runs a program to completion, returning its exit status and its output (stdout and stderr).
func runTool(_ path: String, _ arguments: [String], environment: [String: String]) throws -> (status: Int32, output: String) {
    let run = try runToEnd(URL(filePath: path), arguments, environment: environment, errors: .merged)
    return (run.status, run.output)
}
