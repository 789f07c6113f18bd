// A scene through the mixer with the default SOFA set: a noise source circling the listener once
// in 2 s, 3 m away, moved every 10 ms as a game would. The interaural level difference follows
// where it is: positive (the right ear louder) while it passes on the right, negative on the left,
// about 0 ahead and behind. The test prints the ILD every 100 ms.
import Foundation
import SFXCore
import XCTest
@testable import SFXMedia

final class CirclingSourceTests: XCTestCase {
    func testTheILDFollowsASourceCirclingTheListener() throws {
        let url = try XCTUnwrap(SOFAFile.defaultURL, "libmysofa1's default.sofa")
        let table = try SOFAFile.load(url, sampleRate: 48_000)
        let format = AudioFormat(sampleRate: 48_000, channels: 2)
        let mixer = Mixer(format: format, configuration: Mixer.Configuration(sampleRate: 48_000), hrtf: table)
        var seed: UInt64 = 11
        let noise = Cue(name: "noise", format: AudioFormat(sampleRate: 48_000, channels: 1), interleaved: (0..<96_000).map { _ in
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Float(Int(seed >> 33) % 2001 - 1000) / 4000
        })
        mixer.apply(.play(PlayRequest(voice: VoiceID(1), cue: noise, gain: 1,
                                      source: Source(position: Vector3(0, 0, -3), distanceModel: .none))))
        let seconds = 2.0, step = 480, total = Int(seconds * 48_000)
        var output = [Float](repeating: 0, count: 2 * total)
        var frame = 0
        output.withUnsafeMutableBufferPointer { out in
            while frame < total {
                // Clockwise seen from above, starting ahead: azimuth 0 → 90° (right) → 180° → 270°.
                let azimuth = 2 * Double.pi * Double(frame) / Double(total)
                mixer.apply(.setPosition(VoiceID(1), Vector3(Float(3 * sin(azimuth)), 0, Float(-3 * cos(azimuth))), velocity: .zero))
                mixer.render(into: out.baseAddress! + 2 * frame, frameCount: step)
                frame += step
            }
        }
        var line: [String] = []
        for segment in 0..<20 {
            let range = (segment * total / 20)..<((segment + 1) * total / 20)
            var left = 0.0, right = 0.0
            for k in range {
                left += Double(output[2 * k]) * Double(output[2 * k])
                right += Double(output[2 * k + 1]) * Double(output[2 * k + 1])
            }
            let ild = 10 * log10(right / left)
            let azimuth = 360 * (Double(segment) + 0.5) / 20
            line.append(String(format: "%.0f°: %+.1f dB", azimuth, ild))
            // On the right (azimuth 30…150°) the right ear is louder, on the left (210…330°) the left.
            if (30.0...150.0).contains(azimuth) { XCTAssertGreaterThan(ild, 3, "\(azimuth)°") }
            if (210.0...330.0).contains(azimuth) { XCTAssertLessThan(ild, -3, "\(azimuth)°") }
            if azimuth < 10 || (170.0...190.0).contains(azimuth) || azimuth > 350 { XCTAssertLessThan(abs(ild), 4, "\(azimuth)° (a segment spans 18°)") }
        }
        print("ILD of a source circling the listener (default.sofa, every 100 ms): " + line.joined(separator: ", "))
        withExtendedLifetime(noise) {}
    }
}
