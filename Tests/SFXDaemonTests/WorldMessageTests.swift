import CSFXProtocol
import Foundation
import Glibc
import SFXCardSupport
import XCTest

/// A play's `position=` and `filter=` fields and the `filter` request (docs/PROTOCOL.md,
/// "Positions and filters"), heard on the daemon's virtual card: a point to the listener's
/// right is in the right channel only, a low-pass takes the top off a tone, and every value out
/// of form or range is one line naming the field.
final class WorldMessageTests: DaemonTestCase {
    /// RMS of one channel of the card's recording.
    func levels(_ audio: WAVAudio) -> (left: Double, right: Double) {
        func rms(_ samples: [Float]) -> Double {
            (samples.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(1, samples.count))).squareRoot()
        }
        return (rms(audio.channel(0)), rms(audio.channel(1)))
    }

    func testAPlayAtAPointToTheRightIsInTheRightChannelAtOneOverTheDistance() throws {
        let tone = try writeTone("tone.wav", frequency: 440, seconds: 0.3)
        try startDaemon()
        XCTAssertEqual(try run(["load", "--daemon", "--name", "tone", tone.path]).status, 0)
        let fd = try connect()
        defer { close(fd) }
        let reply = try request(fd, 1, id: 1, "name=tone\nposition=5,0,0\n")
        XCTAssertEqual(reply.type, 0x81, reply.text)
        usleep(600_000)
        XCTAssertEqual(stopDaemon(), 0)
        let audio = try WAVAudio(contentsOf: try XCTUnwrap(card.recordingURLs().last))
        let (left, right) = levels(audio)
        // Straight to the right (pan 1): nothing on the left by either pan law; 1/5 of the
        // tone's peak of 0.5 on the right (inverse clamped distance from 1 unit).
        XCTAssertLessThan(left, right * 0.001, "left \(left), right \(right)")
        let peak = audio.channel(1).map(abs).max() ?? 0
        XCTAssertEqual(peak, 0.5 / 5, accuracy: 0.005, "the right channel's peak")
    }

    /// Two plays of an 8 kHz tone at once, one hard left unfiltered and one hard right through a
    /// 500 Hz low-pass (−48 dB at 8 kHz by the biquad's law): the right channel is far quieter.
    func testALowPassOnAPlayMakesTheHighBandQuieter() throws {
        let tone = try writeTone("high.wav", frequency: 8_000, seconds: 0.3)
        try startDaemon()
        XCTAssertEqual(try run(["load", "--daemon", "--name", "high", tone.path]).status, 0)
        let fd = try connect()
        defer { close(fd) }
        XCTAssertEqual(try request(fd, 1, id: 1, "name=high\npan=-1\n").type, 0x81)
        let filtered = try request(fd, 1, id: 2, "name=high\npan=1\nfilter=lowpass\ncutoff=500\n")
        XCTAssertEqual(filtered.type, 0x81, filtered.text)
        usleep(600_000)
        XCTAssertEqual(stopDaemon(), 0)
        let (left, right) = levels(try WAVAudio(contentsOf: try XCTUnwrap(card.recordingURLs().last)))
        XCTAssertGreaterThan(left, 0.05, "the unfiltered play was not heard")
        // Far below; not the full 48 dB, should the filter reach the mixer a period after the play.
        XCTAssertLessThan(right, left * 0.1, "left \(left), right \(right)")
    }

    func testMalformedPositionsAndFiltersAreOneLineNamingTheField() throws {
        try startDaemon()
        let fd = try connect()
        defer { close(fd) }
        var id: UInt32 = 0
        let cases: [(type: UInt8, payload: String, field: String)] = [
            (1, "position=1,2", "position=1,2"), (1, "position=a,b,c", "position"), (1, "position=1,2,3,4", "position"),
            (1, "position=1,inf,0", "position"), (1, "position=1,nan,0", "position"), (1, "position=1,1e39,0", "position"),
            (1, "position=", "position"),
            (1, "filter=notch\ncutoff=100", "filter=notch"), (1, "filter=lowpass", "cutoff"),
            (1, "filter=lowpass\ncutoff=5", "cutoff=5"), (1, "filter=lowpass\ncutoff=96001", "cutoff"),
            (1, "filter=lowpass\ncutoff=1000\nq=0", "q=0"), (1, "filter=lowpass\ncutoff=1000\nq=31", "q"),
            (1, "filter=highshelf\ncutoff=1000\nq=2", "q=2"), (1, "filter=bandpass\ncutoff=1000\ngain=1.5", "gain"),
            (1, "cutoff=1000", "cutoff"), (1, "q=2", "q"),
            (8, "filter=lowpass\ncutoff=1000\ngroup=nine", "group=nine"), (8, "filter=lowpass\ncutoff=1000\ngroup=8", "group"),
            (8, "group=music", "filter"), (8, "filter=lowpass\ncutoff=abc", "cutoff"), (8, "", "filter"),
        ]
        for (type, payload, field) in cases {
            id += 1
            let reply = try request(fd, type, id: id, "name=tock\n" + payload + "\n")
            XCTAssertEqual(reply.type, 0x82, "\(payload): \(reply.text)")
            XCTAssertEqual(reply.id, id)
            XCTAssertTrue(reply.text.contains(field), "\(payload): \(reply.text)")
            XCTAssertFalse(reply.text.contains("\n"), "\(payload): \(reply.text)")
        }
        // In range: played, and a group's filter put on and taken off.
        for (type, payload, answer) in [(UInt8(1), "position=-2,0.5,-1e3\nfilter=highpass\ncutoff=10\nq=30\ngain=0", UInt8(0x81)),
                                        (1, "filter=highshelf\ncutoff=96000\nq=0.1\nvolume=0", 0x81), (1, "filter=off", 0x81),
                                        (8, "group=music\nfilter=bandpass\ncutoff=800\nq=2", 0x80), (8, "group=3\nfilter=off", 0x80),
                                        (8, "filter=lowpass\ncutoff=2000", 0x80)] {
            id += 1
            let reply = try request(fd, type, id: id, (type == 1 ? "name=tock\nvolume=0.01\n" : "") + payload + "\n")
            XCTAssertEqual(reply.type, answer, "\(payload): \(reply.text)")
        }
        XCTAssertEqual(stopDaemon(), 0)
    }

    /// An effect request puts a reverb on bus 0 and a play sends to it: the recording goes on
    /// after the tone has ended (its tail); malformed effect and send fields are one line.
    func testAReverbBusAndASendLeaveATailAfterTheSound() throws {
        let tone = try writeTone("tone.wav", frequency: 440, seconds: 0.1)
        try startDaemon()
        XCTAssertEqual(try run(["load", "--daemon", "--name", "tone", tone.path]).status, 0)
        let fd = try connect()
        defer { close(fd) }
        var id: UInt32 = 0
        for (type, payload, field) in [(UInt8(9), "effect=reverb", "bus"), (9, "bus=4\neffect=reverb", "bus=4"),
                                       (9, "bus=0\neffect=chorus", "effect=chorus"), (9, "bus=0", "effect"),
                                       (9, "bus=0\neffect=reverb\npreset=nope", "preset=nope"), (9, "bus=0\neffect=echo", "delay"),
                                       (9, "bus=0\neffect=echo\ndelay=3", "delay=3"), (9, "bus=0\neffect=echo\ndelay=0.1\nfeedback=1", "feedback"),
                                       (9, "bus=0\neffect=reverb\ngroup=nine", "group"),
                                       (1, "name=tone\nsend=2", "send=2"), (1, "name=tone\nbus=1", "bus"), (1, "name=tone\nsend=1\nbus=-1", "bus=-1")] {
            id += 1
            let reply = try request(fd, type, id: id, payload + "\n")
            XCTAssertEqual(reply.type, 0x82, "\(payload): \(reply.text)")
            XCTAssertTrue(reply.text.contains(field) && !reply.text.contains("\n"), "\(payload): \(reply.text)")
        }
        for payload in ["bus=3\neffect=echo\ndelay=0.25\nfeedback=0.5\nwet=0.4\ndamping=0.3\ngroup=music", "bus=3\neffect=off",
                        "bus=1\neffect=reverb\npreset=living-room", "bus=0\neffect=reverb\npreset=hall"] {
            id += 1
            XCTAssertEqual(try request(fd, 9, id: id, payload + "\n").type, 0x80, payload)
        }
        id += 1
        let play = try request(fd, 1, id: id, "name=tone\nsend=1\nbus=0\n")
        XCTAssertEqual(play.type, 0x81, play.text)
        usleep(800_000)
        XCTAssertEqual(stopDaemon(), 0)
        let audio = try WAVAudio(contentsOf: try XCTUnwrap(card.recordingURLs().last))
        let samples = audio.channel(0)
        let start = try XCTUnwrap(samples.firstIndex { abs($0) > 0.01 }, "the tone was not heard")
        // From 100 ms after the tone's end, for 200 ms: the hall's tail, and nothing else plays.
        let tail = samples.dropFirst(start + 9_600).prefix(9_600)
        XCTAssertEqual(tail.count, 9_600, "the recording ends with the tone")
        XCTAssertGreaterThan(tail.map(abs).max() ?? 0, 0.001, "no reverb tail after the tone")
    }

    /// `sfx play --at` travels as `position=`; `--hrtf` to a daemon started without it is a
    /// usage error with --daemon (and plays in-process without).
    func testTheCommandPlaysAtAPointThroughTheDaemon() throws {
        let tone = try writeTone("tone.wav", frequency: 440, seconds: 0.3)
        try startDaemon()
        XCTAssertEqual(try run(["load", "--daemon", "--name", "tone", tone.path]).status, 0)
        let play = try run(["play", "--daemon", "-v", "tone", "--at", "-5,0,0", "--lowpass", "4000"])
        XCTAssertEqual(play.status, 0, play.stderr)
        XCTAssertTrue(play.stdout.contains("via the daemon"), play.stdout)
        let hrtf = try run(["play", "--daemon", "tone", "--at", "-5,0,0", "--hrtf"])
        XCTAssertEqual(hrtf.status, 64, hrtf.stderr)
        XCTAssertTrue(hrtf.stderr.contains("--hrtf") && hrtf.stderr.contains("sfx serve --hrtf"), hrtf.stderr)
        let status = try run(["status", "--json", "--daemon"])
        XCTAssertTrue(status.stdout.contains("\"hrtf\":\"off\""), status.stdout)
        usleep(600_000)
        XCTAssertEqual(stopDaemon(), 0)
        let (left, right) = levels(try WAVAudio(contentsOf: try XCTUnwrap(card.recordingURLs().last)))
        XCTAssertGreaterThan(left, 0.01, "the play was not heard")
        XCTAssertLessThan(right, left * 0.001, "left \(left), right \(right)")
    }

    /// A daemon started with --hrtf renders positional plays through the default SOFA set: the
    /// status says so, and `sfx play --hrtf` goes through it.
    func testADaemonWithHRTFTakesTheCommandsHRTFPlays() throws {
        guard FileManager.default.fileExists(atPath: "/usr/share/libmysofa/default.sofa") else { return XCTFail("libmysofa1's default SOFA set is not installed (script/common.sh installs libmysofa-dev, which brings it)") }
        try startDaemon(["--hrtf"])
        let status = try run(["status", "--json", "--daemon"])
        XCTAssertTrue(status.stdout.contains("\"hrtf\":\"default.sofa"), status.stdout)
        let play = try run(["play", "--daemon", "-v", "bell", "--at", "3,0,0", "--hrtf"])
        XCTAssertEqual(play.status, 0, play.stderr)
        XCTAssertTrue(play.stdout.contains("via the daemon"), play.stdout)
        usleep(300_000)
        XCTAssertEqual(stopDaemon(), 0)
        let (left, right) = levels(try WAVAudio(contentsOf: try XCTUnwrap(card.recordingURLs().last)))
        XCTAssertGreaterThan(right, left, "left \(left), right \(right)")
        XCTAssertGreaterThan(left, 0, "an HRTF reaches the far ear too")
    }
}
