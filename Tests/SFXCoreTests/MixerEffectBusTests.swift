// Effect buses in the mixer: what a voice sends (after its gains and filters, times its send
// level) is the effect's input, and the effect's output is added into its return group; a
// processor leaves only through `.effectReleased`; a restored snapshot renders the same again.
import XCTest
@testable import SFXCore

final class MixerEffectBusTests: XCTestCase {
    let echo = Effect.echo(EchoSettings(delay: 0.01, feedback: 0.5, wet: 0.5, damping: 0))

    func testAVoicesSendIsTheEffectsInputAndItsOutputReturnsIntoTheGroup() {
        var random = SplitMix64(state: 5)
        let noise = monoCue(frames: 3000) { _ in Double(Int(random.next() % 2001) - 1000) / 4000 }
        defer { withExtendedLifetime(noise) {} }
        for effect in [echo, .reverb(.room)] {
            let processor = EffectProcessor(effect, sampleRate: 48_000, rewindHeadroomFrames: 4096)
            let frames = 6000
            let output = renderScript([
                at(0, .setEffect(bus: 2, processor: EffectReference(processor, key: 7), returnGroup: .ui)),
                at(0, .play(PlayRequest(voice: VoiceID(1), cue: noise, gain: 0.8, pan: 0.3, sends: [0, 0, 0.5, 0]))),
            ], frames: frames)
            let dry = renderScript([at(0, .play(PlayRequest(voice: VoiceID(1), cue: noise, gain: 0.8, pan: 0.3)))], frames: frames)
            // The reference: a processor of its own, fed the dry voice × 0.5.
            let reference = EffectProcessor(effect, sampleRate: 48_000, rewindHeadroomFrames: 4096)
            var input = dry.samples.map { $0 * 0.5 }
            var wet = [Float](repeating: 0, count: 2 * frames)
            input.withUnsafeMutableBufferPointer { i in
                wet.withUnsafeMutableBufferPointer { reference.process(input: i.baseAddress!, inputChannels: 2, frames: frames, addingInto: $0.baseAddress!, outputChannels: 2) }
            }
            let worst = (0..<(2 * frames)).map { abs(output.samples[$0] - (dry.samples[$0] + wet[$0])) }.max() ?? 1
            XCTAssertLessThan(worst, 1e-6, "\(effect)")
            XCTAssertGreaterThan(wet.map(abs).max() ?? 0, 0.01, "\(effect) is heard")
            withExtendedLifetime(processor) {}
        }
    }

    func testAnEchoBusRepeatsAClickAtItsDelay() {
        let click = monoCue(frames: 10) { $0 == 0 ? 0.5 : 0 }
        defer { withExtendedLifetime(click) {} }
        let processor = EffectProcessor(echo, sampleRate: 48_000, rewindHeadroomFrames: 1024)
        let output = renderScript([
            at(0, .setEffect(bus: 0, processor: EffectReference(processor, key: 1), returnGroup: .effects)),
            at(0, .play(PlayRequest(voice: VoiceID(1), cue: click, pan: -1, sends: [1, 0, 0, 0]))),
        ], frames: 2000, format: mono)
        // 480 frames later, the first echo: wet × the click (its 10-frame start fade gives 0.1 of it).
        XCTAssertEqual(Double(output.samples[0]), 0.05, accuracy: 1e-6)
        XCTAssertEqual(Double(output.samples[480]), 0.05 * 0.5, accuracy: 1e-6)
        XCTAssertEqual(Double(output.samples[960]), 0.05 * 0.5 * 0.5, accuracy: 1e-6)
        XCTAssertEqual(output.samples[700], 0)
        withExtendedLifetime(processor) {}
    }

    func testAReplacedOrRefusedProcessorIsReleased() {
        let a = EffectProcessor(echo, sampleRate: 48_000, rewindHeadroomFrames: 64)
        let b = EffectProcessor(.reverb(.hall), sampleRate: 48_000, rewindHeadroomFrames: 64)
        let mixer = Mixer(format: stereo, configuration: testConfiguration())
        var events: [MixerEvent] = []
        mixer.apply(.setEffect(bus: 1, processor: EffectReference(a, key: 10), returnGroup: .effects))
        mixer.apply(.setEffect(bus: 1, processor: EffectReference(b, key: 11), returnGroup: .music))
        mixer.apply(.setEffect(bus: 9, processor: EffectReference(a, key: 12), returnGroup: .effects))
        mixer.apply(.setEffect(bus: 1, processor: nil, returnGroup: .effects))
        mixer.drainEvents { event, _ in events.append(event) }
        XCTAssertEqual(events, [.effectReleased(10), .effectReleased(12), .effectReleased(11)])
        XCTAssertNil(mixer.effectBuses[1].processor)
        withExtendedLifetime((a, b)) {}
    }

    func testARestoredSnapshotRendersTheEffectAgainIdentically() {
        var random = SplitMix64(state: 8)
        let noise = monoCue(frames: 20_000) { _ in Double(Int(random.next() % 2001) - 1000) / 4000 }
        defer { withExtendedLifetime(noise) {} }
        let processor = EffectProcessor(.reverb(.hall), sampleRate: 48_000, rewindHeadroomFrames: 4096)
        let mixer = Mixer(format: stereo, configuration: testConfiguration())
        mixer.apply(.setEffect(bus: 0, processor: EffectReference(processor, key: 1), returnGroup: .effects))
        mixer.apply(.play(PlayRequest(voice: VoiceID(1), cue: noise, gain: 0.5, loops: -1,
                                      source: Source(position: [2, 0, -3]), sends: [0.7, 0, 0, 0])))
        let snapshot = MixerSnapshot(shapedLike: mixer)
        var first = [Float](repeating: 0, count: 2 * 900), again = first
        for turn in 0..<12 {
            if turn == 5 { mixer.apply(.setSend(VoiceID(1), bus: 0, level: 0.1)) }
            snapshot.save(mixer)
            first.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress!, frameCount: 900) }
            snapshot.restore(into: mixer)
            again.withUnsafeMutableBufferPointer {
                mixer.render(into: $0.baseAddress!, frameCount: 100 + 50 * turn)
                mixer.render(into: $0.baseAddress! + 2 * (100 + 50 * turn), frameCount: 800 - 50 * turn)
            }
            mixer.drainEvents { _, _ in }
            XCTAssertTrue(first.elementsEqual(again) { $0.bitPattern == $1.bitPattern }, "turn \(turn)")
        }
        withExtendedLifetime(processor) {}
    }

    func testEffectBusesAllocateNothingOnTheRenderingThread() {
        let cue = monoCue(frames: 2000) { i in sin(Double(i) * 0.02) }
        defer { withExtendedLifetime(cue) {} }
        let processors = [EffectProcessor(echo, sampleRate: 48_000, rewindHeadroomFrames: 512),
                          EffectProcessor(.reverb(.cave), sampleRate: 48_000, rewindHeadroomFrames: 512)]
        let mixer = Mixer(format: stereo, configuration: testConfiguration(maxVoices: 16))
        let snapshot = MixerSnapshot(shapedLike: mixer)
        let output = UnsafeMutablePointer<Float>.allocate(capacity: 256 * 2)
        defer { output.deallocate() }
        var voice: UInt64 = 0
        func period() {
            voice += 1
            let p = processors[Int(voice % 2)]
            if voice % 25 == 0 { mixer.apply(.setEffect(bus: Int(voice % 4), processor: EffectReference(p, key: UInt32(voice)), returnGroup: .effects)) }
            mixer.apply(.play(PlayRequest(voice: VoiceID(voice), cue: cue, gain: 0.2, loops: Int(voice % 2),
                                          sends: SIMD4<Float>(0.5, 0.2, Float(voice % 3) / 3, 1))))
            mixer.apply(.setSend(VoiceID(voice &- 1), bus: Int(voice % 4), level: 0.3))
            snapshot.save(mixer)
            mixer.render(into: output, frameCount: 256)
            if voice % 3 == 0 {
                snapshot.restore(into: mixer)
                mixer.render(into: output, frameCount: 256)
            }
            mixer.drainEvents { _, _ in }
        }
        for _ in 0..<200 { period() }
        let m = AllocationAudit().measure { for _ in 0..<600 { period() } }
        XCTAssertEqual(m.swiftObjects, 0, "\(m)")
        withExtendedLifetime(processors) {}
    }
}
