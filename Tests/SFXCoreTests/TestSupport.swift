// How the expectations in these tests are computed
// ------------------------------------------------
// Every expected sample is written down from the mixer's documented laws, in Double, without
// calling into the mixer: cues are DC levels, ramps or sines whose value at any frame is a
// formula; a voice started at frame t0 contributes, at frame t0 + k,
//     cue(k mod cueLength) × channel gain × envelope(k)
// where the channel gain is gain·cos((pan+1)π/4) / gain·sin((pan+1)π/4) for a mono cue
// (constant power), gain·min(1, 1∓pan) for a stereo cue (balance), and the envelope is
// min(1, (k+1)/startFade) while starting and 1 − (j+1)/fade in the j-th frame after a stop.
// A change applied before frame t glides linearly: at frame t + j the value is
// a + (b − a)·min(1, (j+1)/smoothing). Overlapping voices add; groups and master multiply.
// Signals in these tests stay below the limiter's threshold (0.891), so the limiter must let them
// through unchanged; the limiter tests check its bounds separately. Rendered floats are compared
// with the formulas within 1e-5; comparisons between two renders are bit for bit.
import Foundation
import XCTest
@testable import SFXCore

/// 48 kHz with short, round time constants so the formulas stay readable: a 10-frame start fade,
/// 100-frame stop fades, 50-frame smoothing, and 64-frame blocks so that every test also
/// exercises the splitting of longer renders.
func testConfiguration(maxVoices: Int = 64) -> Mixer.Configuration {
    var c = Mixer.Configuration(sampleRate: 48_000, maxVoices: maxVoices)
    c.startFadeFrames = 10
    c.stopFadeFrames = 100
    c.smoothingFrames = 50
    c.maxFramesPerRender = 64
    return c
}

let stereo = AudioFormat(sampleRate: 48_000, channels: 2)
let mono = AudioFormat(sampleRate: 48_000, channels: 1)

/// A mono cue whose frame i is `value(i)`.
func monoCue(frames: Int, _ value: (Int) -> Double) -> Cue {
    Cue(name: "test", format: mono, interleaved: (0..<frames).map { Float(value($0)) })
}

/// A stereo cue whose frame i is (`left(i)`, `right(i)`).
func stereoCue(frames: Int, _ value: (Int) -> (Double, Double)) -> Cue {
    Cue(name: "test", format: stereo, interleaved: (0..<frames).flatMap { i -> [Float] in
        let (l, r) = value(i)
        return [Float(l), Float(r)]
    })
}

/// The envelope of a voice k frames after it started.
func fadeIn(_ k: Int, over frames: Int = 10) -> Double { min(1, Double(k + 1) / Double(frames)) }

/// A linear glide from `a` to `b` over `frames`, j frames after the change was applied.
func glide(_ a: Double, _ b: Double, _ j: Int, over frames: Int = 50) -> Double {
    a + (b - a) * min(1, Double(j + 1) / Double(frames))
}

/// Constant-power pan gains of a mono cue.
func panLaw(_ pan: Double) -> (left: Double, right: Double) {
    (cos((pan + 1) * .pi / 4), sin((pan + 1) * .pi / 4))
}

func play(
    _ id: UInt64, _ cue: Cue, gain: Float = 1, pan: Float = 0, loops: Int = 0, group: SoundGroup = .effects,
    priority: VoicePriority = .normal, maxInstances: Int = 0
) -> MixerCommand {
    .play(PlayRequest(
        voice: VoiceID(id), cue: cue, gain: gain, pan: pan, loops: loops, group: group, priority: priority,
        maxInstances: maxInstances))
}

func at(_ frame: Int, _ command: MixerCommand) -> ScheduledCommand { ScheduledCommand(frame: frame, command) }

/// Renders a script offline with the test configuration.
func renderScript(
    _ script: [ScheduledCommand], frames: Int, format: AudioFormat = stereo,
    configuration: Mixer.Configuration = testConfiguration(), hrtf: HRTFTable? = nil
) -> OfflineRenderer.Output {
    OfflineRenderer.render(script, format: format, configuration: configuration, hrtf: hrtf, length: .frames(frames))
}

/// Renders a script the way the real-time thread does: calls of the sizes in `chunks` (cycled),
/// each cut short at the next command's frame, the command applied just before that frame.
func renderInChunks(
    _ script: [ScheduledCommand], frames: Int, chunks: [Int], format: AudioFormat = stereo,
    configuration: Mixer.Configuration = testConfiguration(), hrtf: HRTFTable? = nil
) -> (samples: [Float], events: [MixerEvent]) {
    let mixer = Mixer(format: format, configuration: configuration, hrtf: hrtf)
    let ordered = script.enumerated().sorted { ($0.element.frame, $0.offset) < ($1.element.frame, $1.offset) }
        .map(\.element)
    var samples = [Float](repeating: .nan, count: frames * format.channels)
    var events: [MixerEvent] = []
    var next = 0
    var frame = 0
    var chunk = 0
    while frame < frames {
        while next < ordered.count && ordered[next].frame <= frame {
            mixer.apply(ordered[next].command)
            next += 1
        }
        var count = min(chunks[chunk % chunks.count], frames - frame)
        if next < ordered.count { count = min(count, ordered[next].frame - frame) }
        samples.withUnsafeMutableBufferPointer {
            mixer.render(into: $0.baseAddress! + frame * format.channels, frameCount: count)
        }
        mixer.drainEvents { event, _ in events.append(event) }
        frame += count
        chunk += 1
    }
    return (samples, events)
}

/// Asserts that channel `channel` of `output` matches `expected(frame)` for every frame in `frames`.
func assertChannel(
    _ output: OfflineRenderer.Output, _ channel: Int, frames: Range<Int>, accuracy: Double = 1e-5,
    _ expected: (Int) -> Double, file: StaticString = #filePath, line: UInt = #line
) {
    let channels = output.format.channels
    for frame in frames {
        let actual = Double(output.samples[frame * channels + channel])
        let want = expected(frame)
        if abs(actual - want) > accuracy {
            XCTFail("frame \(frame) channel \(channel): got \(actual), expected \(want)", file: file, line: line)
            return
        }
    }
}

/// The terminal events of the output, keyed by voice.
func terminalEvents(_ output: OfflineRenderer.Output) -> [VoiceID: [(frame: Int, event: MixerEvent)]] {
    var result: [VoiceID: [(frame: Int, event: MixerEvent)]] = [:]
    for (frame, event) in output.events {
        if let voice = event.voice { result[voice, default: []].append((frame, event)) }
    }
    return result
}

/// A small deterministic generator (SplitMix64) for reproducible random scripts.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Rewind mode's law, checked the way it uses it: `turns` times, the script's commands up to the
/// end of the next `block` frames are applied, a snapshot is saved, `block` frames rendered, the
/// snapshot restored and the same frames rendered again in two calls split differently each
/// turn; both renders must be the same bits. Returns how many turns rendered something.
@discardableResult
func assertRestoredSnapshotsRenderAgain(
    _ script: [ScheduledCommand], on mixer: Mixer, turns: Int, block: Int,
    file: StaticString = #filePath, line: UInt = #line
) -> Int {
    let snapshot = MixerSnapshot(shapedLike: mixer)
    let channels = mixer.format.channels
    var first = [Float](repeating: 0, count: channels * block), again = first
    let ordered = script.sorted { $0.frame < $1.frame }
    var next = 0
    var sounding = 0
    for turn in 0..<turns {
        while next < ordered.count && ordered[next].frame <= mixer.frameTime + block {
            mixer.apply(ordered[next].command)
            next += 1
        }
        snapshot.save(mixer)
        first.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress!, frameCount: block) }
        mixer.drainEvents { _, _ in }
        snapshot.restore(into: mixer)
        let split = (block / 3 + 17 * turn) % block
        again.withUnsafeMutableBufferPointer {
            mixer.render(into: $0.baseAddress!, frameCount: split)
            mixer.render(into: $0.baseAddress! + channels * split, frameCount: block - split)
        }
        mixer.drainEvents { _, _ in }
        XCTAssertTrue(first.elementsEqual(again) { $0.bitPattern == $1.bitPattern }, "turn \(turn)", file: file, line: line)
        if first.contains(where: { $0 != 0 }) { sounding += 1 }
    }
    return sounding
}
