import CALSA
import Foundation
import SFXCardSupport
import XCTest

/// What the card negotiates: S16/S32/FLOAT × mono/stereo × 44.1/48 kHz, and nothing else.
final class FormatTests: CardTestCase {
    private let formats: [(snd_pcm_format_t, String, Float)] = [
        (SND_PCM_FORMAT_FLOAT_LE, "FLOAT_LE", 0),
        (SND_PCM_FORMAT_S32_LE, "S32_LE", 1.0 / 2_147_483_648),
        (SND_PCM_FORMAT_S16_LE, "S16_LE", 1.0 / 32_768),
    ]

    func testEveryFormatChannelCountAndRateIsNegotiatedAndRecorded() throws {
        var expected: [CardEvent.HardwareParameters] = []
        for (format, name, quantum) in formats {
            for channels in [1, 2] {
                for rate in [44_100, 48_000] {
                    let period = rate / 100
                    let pcm = try PCM(card.hardwarePCMName)
                    try pcm.configure(format: format, rate: rate, channels: channels, periodFrames: period, periods: 3)
                    let audio = Signal.noise(frames: period * 3, channels: channels, seed: UInt32(rate + channels))
                    try pcm.write(audio)
                    try pcm.drain()
                    expected.append(.init(access: "RW_INTERLEAVED", format: name, rate: rate, channels: channels,
                                          periodFrames: period, bufferFrames: period * 3))
                    let file = try XCTUnwrap(card.events().compactMap { if case .recording(let f) = $0.kind { f } else { nil } }.last)
                    let recording = try WAVAudio(contentsOf: card.directory.appending(path: file))
                    XCTAssertEqual(recording.sampleRate, rate)
                    XCTAssertEqual(recording.channels, channels)
                    XCTAssertEqual(recording.samples.count, audio.count, "\(name) \(channels) ch \(rate) Hz")
                    for (recorded, played) in zip(recording.samples, audio) {
                        XCTAssertEqual(recorded, played, accuracy: quantum, "\(name) \(channels) ch \(rate) Hz")
                    }
                }
            }
        }
        let negotiated = try card.events().compactMap { if case .hwParams(_, let p) = $0.kind { p } else { nil } }
        XCTAssertEqual(negotiated, expected)
        XCTAssertEqual(card.recordingURLs().count, 12, "one recording per configuration")
    }

    func testTheCardRefusesWhatHardwareWouldNot() throws {
        let refused: [(String, (PCM) throws -> Void)] = [
            ("S24_LE", { try $0.configure(format: SND_PCM_FORMAT_S24_LE) }),
            ("22050 Hz", { try $0.configure(rate: 22_050) }),
            ("3 channels", { try $0.configure(channels: 3) }),
            ("8-frame periods", { try $0.configure(periodFrames: 8) }),
            ("1 period", { try $0.configure(periods: 1) }),
            ("65 periods", { try $0.configure(periodFrames: 64, periods: 65) }),
        ]
        for (what, configure) in refused {
            let pcm = try PCM(card.hardwarePCMName)
            XCTAssertThrowsError(try configure(pcm), what)
        }
        let smallest = try PCM(card.hardwarePCMName)
        XCTAssertNoThrow(try smallest.configure(format: SND_PCM_FORMAT_FLOAT_LE, channels: 2, periodFrames: 16, periods: 64))
    }

    func testStatusBeforeConfigurationIsHarmless() throws {
        let pcm = try PCM(card.hardwarePCMName)
        var status: OpaquePointer?
        try check(snd_pcm_status_malloc(&status))
        defer { snd_pcm_status_free(status) }
        try check(snd_pcm_status(pcm.handle, status))
        XCTAssertEqual(snd_pcm_status_get_state(status), SND_PCM_STATE_OPEN)
        XCTAssertEqual(snd_pcm_status_get_avail(status), 0)
    }

    func testPlugConvertsWhatTheCardDoesNotTake() throws {
        let pcm = try PCM(card.pcmName)
        try pcm.configure(format: SND_PCM_FORMAT_S16_LE, rate: 22_050, channels: 1, periodFrames: 441, periods: 4)
        try pcm.write(Signal.tone(frames: 2_205, channels: 1, rate: 22_050))
        try pcm.drain()
        let negotiated = try card.events().compactMap { if case .hwParams(_, let p) = $0.kind { p } else { nil } }
        XCTAssertTrue([44_100, 48_000].contains(negotiated.last?.rate), "plug resamples to a rate the card has")
        let recording = try WAVAudio(contentsOf: card.recordingURL)
        XCTAssertEqual(Double(recording.frameCount) / Double(recording.sampleRate), 0.1, accuracy: 0.03)
    }
}
