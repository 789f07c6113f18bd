import XCTest
import SFXSoundDesign

/// What every bundled sound must be, checked by analysis since nobody listens here.
final class SystemSoundQualityTests: XCTestCase {
    let sampleRate = Double(SystemSoundCatalog.sampleRate)
    /// Alarm-like sounds may run up to 3 s; every other sound at most 1 s.
    let longSounds: Set = ["alarm", "low-power", "dialog-error"]

    func testSamplePeakIsTheSoundsCataloguedLevel() {
        // Loudness and true peak are checked in SystemSoundLoudnessTests; here the mastering law:
        // the sample peak is the level the catalogue gives, and never above −1 dBFS.
        for sound in renderedTheme.sounds {
            let peak = sound.samples.reduce(0) { max($0, abs(Double($1))) }
            let dB = 20 * log10(peak)
            XCTAssertEqual(dB, sound.spec.peak, accuracy: 0.01, "\(sound.spec.name) peaks at \(dB) dBFS")
            XCTAssertLessThanOrEqual(dB, -1, sound.spec.name)
        }
    }

    func testFilesStartAndEndAtZero() {
        for sound in renderedTheme.sounds {
            let pcm = pcm16(sound.wav)
            XCTAssertLessThanOrEqual(abs(Int(pcm.first ?? 99)), 1, "\(sound.spec.name) first sample")
            XCTAssertLessThanOrEqual(abs(Int(pcm.last ?? 99)), 1, "\(sound.spec.name) last sample")
        }
    }

    func testFirstAndLastMillisecondFadeWithoutSteps() {
        let edge = Int(sampleRate / 1000)
        for sound in renderedTheme.sounds {
            let s = sound.samples.map(Double.init)
            for range in [0..<edge, (s.count - edge)..<(s.count - 1)] {
                let step = range.map { abs(s[$0 + 1] - s[$0]) }.max() ?? 0
                XCTAssertLessThanOrEqual(step, 0.2, "\(sound.spec.name): a step of \(step) near \(range)")
            }
        }
    }

    func testNoDCOffset() {
        for sound in renderedTheme.sounds {
            let mean = sound.samples.reduce(0) { $0 + Double($1) } / Double(sound.samples.count)
            XCTAssertLessThan(abs(mean), 1e-4, "\(sound.spec.name) has a mean of \(mean)")
        }
    }

    func testDurationsStayWithinLimits() {
        for sound in renderedTheme.sounds {
            let limit = longSounds.contains(sound.spec.name) ? 3.0 : 1.0
            XCTAssertGreaterThanOrEqual(sound.duration, 0.03, sound.spec.name)
            XCTAssertLessThanOrEqual(sound.duration, limit, sound.spec.name)
        }
    }

    func testNothingAbove20kHz() {
        for sound in renderedTheme.sounds {
            let power = powerSpectrum(sound.samples)
            let firstAbove = Int((20_000 / (sampleRate / 2) * Double(power.count - 1)).rounded(.up))
            let total = power.reduce(0, +)
            let high = power[firstAbove...].reduce(0, +)
            let dB = 10 * log10(high / total)
            XCTAssertLessThan(dB, -60, "\(sound.spec.name): \(dB) dB of its energy above 20 kHz")
        }
    }

    func testTonesSitWhereTheyAreTuned() {
        // The strongest frequency of a pitched sound is its main note.
        let expected: [String: Double] = ["bell": 523.25, "tink": 2349.3, "dialog-warning": 880, "alarm": 1046.5]
        for (name, hertz) in expected {
            let samples = renderedTheme.sounds.first { $0.spec.name == name }!.samples
            let power = powerSpectrum(samples)
            let strongest = power.indices.max { power[$0] < power[$1] }!
            let found = Double(strongest) * sampleRate / 2 / Double(power.count - 1)
            XCTAssertEqual(found, hertz, accuracy: hertz * 0.02, name)
        }
    }

    func testNoTwoSoundsAreAlike() {
        let sounds = renderedTheme.sounds
        for (i, a) in sounds.enumerated() {
            for b in sounds[(i + 1)...] {
                XCTAssertNotEqual(a.wav, b.wav, "\(a.spec.name) and \(b.spec.name) are identical")
                let n = min(a.samples.count, b.samples.count)
                var (ab, aa, bb) = (0.0, 0.0, 0.0)
                for k in 0..<n {
                    let (x, y) = (Double(a.samples[k]), Double(b.samples[k]))
                    ab += x * y
                    aa += x * x
                    bb += y * y
                }
                XCTAssertLessThan(abs(ab) / sqrt(aa * bb), 0.95, "\(a.spec.name) and \(b.spec.name) are nearly the same")
            }
        }
    }

    func testRenderingIsRepeatable() {
        for name in ["trash-empty", "camera-shutter", "bell"] {
            let sound = SystemSoundCatalog.sound(named: name)!
            let first = renderedTheme.sounds.first { $0.spec.name == name }!
            XCTAssertEqual(sound.render(), first.samples, name)
        }
    }
}
