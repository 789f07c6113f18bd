// Positional voices in the mixer: their channel gains are the equal-power pan law at the pan
// of their direction, times the distance model's and the cone's gain; their rate is multiplied
// by the doppler pitch; too quiet to hear they are virtual and keep their place in time; and all
// of it is as deterministic as the rest of the mixer (the same bits however rendering is split,
// and after a snapshot is restored). Expected values come from the OpenAL 1.1 formulas written
// out here, not from `Spatializer`.
import Foundation
import XCTest
@testable import SFXCore
import CSFXKernels

final class MixerPositionalTests: XCTestCase {
    let update = Mixer.spatialUpdateFrames

    func positional(_ id: UInt64, _ cue: Cue, _ source: Source, gain: Float = 1, loops: Int = -1,
                    priority: VoicePriority = .normal) -> MixerCommand {
        .play(PlayRequest(voice: VoiceID(id), cue: cue, gain: gain, loops: loops, priority: priority, source: source))
    }

    /// The last frame of a render of `frames` frames of `commands` applied at frame 0.
    func lastFrame(_ commands: [MixerCommand], frames: Int = 4 * 128, format: AudioFormat = stereo) -> [Double] {
        let output = renderScript(commands.map { at(0, $0) }, frames: frames, format: format)
        return (0..<format.channels).map { Double(output.samples[(frames - 1) * format.channels + $0]) }
    }

    func testAPositionalVoiceSoundsAtItsDistanceAndDirection() {
        let level = monoCue(frames: 1000) { _ in 0.5 }
        defer { withExtendedLifetime(level) {} }
        // Inverse clamped, reference 1, rolloff 1: gain = 1 / (1 + (d − 1)); pan = x / d.
        for (position, expectedGain) in [(Vector3(3, 0, 0), 1.0 / 3), (Vector3(0, 0, -2), 0.5), (Vector3(-2, 0, -2), 1 / (1 + (8.0.squareRoot() - 1))),
                                         (Vector3(0, 0, 0.5), 1.0), (Vector3(0, 4, 0), 0.25)] {
            let d = Double(((position * position).sum()).squareRoot())
            let pan = d > 0 ? Double(position.x) / d : 0
            let law = panLaw(pan)
            let got = lastFrame([positional(1, level, Source(position: position))])
            XCTAssertEqual(got[0], 0.5 * expectedGain * law.left, accuracy: 1e-6, "\(position) left")
            XCTAssertEqual(got[1], 0.5 * expectedGain * law.right, accuracy: 1e-6, "\(position) right")
        }
        // The voice's own gain and the listener's multiply; the pan of the request is ignored.
        let got = lastFrame([.setListener(Listener(gain: 0.5)),
                             .play(PlayRequest(voice: VoiceID(1), cue: level, gain: 0.8, pan: -1, loops: -1, source: Source(position: [0, 0, -4])))])
        XCTAssertEqual(got[0], 0.5 * 0.8 * 0.5 * 0.25 * panLaw(0).left, accuracy: 1e-6)
        XCTAssertEqual(got[1], got[0], accuracy: 1e-7)
    }

    func testAStereoSoundIsPannedByTheEqualPowerLawToo() {
        // The library makes every sound stereo on stereo output: a positional voice of it must
        // sound as the mono sound would.
        let level = stereoCue(frames: 1000) { _ in (0.5, 0.5) }
        defer { withExtendedLifetime(level) {} }
        let position = Vector3(3, 0, -3)
        let pan = 3 / (18.0).squareRoot(), gain = 1 / (1 + (18.0.squareRoot() - 1))
        let got = lastFrame([positional(1, level, Source(position: position))])
        XCTAssertEqual(got[0], 0.5 * gain * panLaw(pan).left, accuracy: 1e-6)
        XCTAssertEqual(got[1], 0.5 * gain * panLaw(pan).right, accuracy: 1e-6)
    }

    func testTheListenerTurnsAndMovesTheScene() {
        let level = monoCue(frames: 1000) { _ in 0.5 }
        defer { withExtendedLifetime(level) {} }
        let source = Source(position: [3, 0, 0])
        // Facing +x, the source is straight ahead, 3 away.
        let ahead = lastFrame([.setListener(Listener(forward: [1, 0, 0])), positional(1, level, source)])
        XCTAssertEqual(ahead[0], 0.5 / 3 * panLaw(0).left, accuracy: 1e-6)
        XCTAssertEqual(ahead[1], ahead[0], accuracy: 1e-7)
        // Upside down (up −y), right and left swap.
        let flipped = lastFrame([.setListener(Listener(up: [0, -1, 0])), positional(1, level, source)])
        XCTAssertEqual(flipped[0], 0.5 / 3, accuracy: 1e-6)
        XCTAssertEqual(flipped[1], 0, accuracy: 1e-6)
        // Moved to (3, 0, 1), the source is 1 ahead.
        let moved = lastFrame([.setListener(Listener(position: [3, 0, 1])), positional(1, level, source)])
        XCTAssertEqual(moved[0], 0.5 * panLaw(0).left, accuracy: 1e-6)
        // A relative source ignores where the listener is: (0, 0, −2) is 2 ahead of it.
        let relative = lastFrame([.setListener(Listener(position: [50, 0, 0], forward: [1, 0, 0])),
                                  positional(1, level, Source(position: [0, 0, -2], relative: true))])
        XCTAssertEqual(relative[0], 0.5 * 0.5 * panLaw(0).left, accuracy: 1e-6)
        XCTAssertEqual(relative[1], relative[0], accuracy: 1e-7)
    }

    func testAConeAttenuatesBehindTheSource() {
        let level = monoCue(frames: 1000) { _ in 0.5 }
        defer { withExtendedLifetime(level) {} }
        // The source at (0, 0, −1) faces −z, away from the listener: 180° off its axis.
        let cone = Cone(innerAngle: 90, outerAngle: 270, outerGain: 0.2)
        let behind = lastFrame([positional(1, level, Source(position: [0, 0, -1], direction: [0, 0, -1], cone: cone))], format: mono)
        XCTAssertEqual(behind[0], 0.5 * 0.2, accuracy: 1e-6)
        // Facing the listener: inside the inner cone.
        let facing = lastFrame([positional(1, level, Source(position: [0, 0, -1], direction: [0, 0, 1], cone: cone))], format: mono)
        XCTAssertEqual(facing[0], 0.5, accuracy: 1e-6)
        // 90° off its axis: halfway between the inner (45°) and outer (135°) half-angles.
        let side = lastFrame([positional(1, level, Source(position: [0, 0, -1], direction: [1, 0, 0], cone: cone))], format: mono)
        XCTAssertEqual(side[0], 0.5 * (1 + (0.2 - 1) * 0.5), accuracy: 1e-6)
    }

    func testDopplerScalesTheRateBySpecificationsFormula() {
        // A ramp cue read at rate p gives cue(k·p) at frame k: the cue's value tells the position.
        let length = 48_000
        let ramp = monoCue(frames: length) { Double($0) / Double(length) }
        defer { withExtendedLifetime(ramp) {} }
        // The source approaches at a tenth of the speed of sound; no distance attenuation.
        let ss = 343.3, vss = 34.33
        let p = (ss - 0) / (ss - vss)
        let source = Source(position: [0, 0, -100], velocity: [0, 0, Float(vss)], distanceModel: .none)
        let output = renderScript([at(0, positional(1, ramp, source, loops: 0))], frames: 4800, format: mono)
        for k in stride(from: 64, to: 4800, by: 97) {
            XCTAssertEqual(Double(output.samples[k]), Double(k) * p / Double(length), accuracy: 1e-5, "frame \(k)")
        }
        // Doppler factor 0 turns it off.
        let off = renderScript([at(0, .setWorld(SpatialWorld(dopplerFactor: 0))), at(0, positional(1, ramp, source, loops: 0))],
                               frames: 1000, format: mono)
        XCTAssertEqual(Double(off.samples[999]), 999.0 / Double(length), accuracy: 1e-6)
    }

    func testAnInaudibleVoiceIsVirtualAndComesBackWhereItWouldBe() {
        let length = 48_000
        let ramp = monoCue(frames: length) { Double($0) / Double(length) }
        defer { withExtendedLifetime(ramp) {} }
        // Linear clamped to 10: at 20 the gain is 0.
        let far = Source(position: [0, 0, -20], distanceModel: .linearClamped, maximumDistance: 10)
        let back = 32 * update
        let mixer = Mixer(format: mono, configuration: testConfiguration())
        mixer.apply(positional(1, ramp, far, loops: 0))
        XCTAssertEqual(mixer.virtualVoiceCount, 1)
        XCTAssertEqual(mixer.realVoiceCount, 0)
        var output = [Float](repeating: 1, count: back)
        output.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress!, frameCount: back) }
        XCTAssertTrue(output[0..<back].allSatisfy { $0 == 0 }, "a virtual voice adds nothing")
        // Brought to the reference distance at a spatial update, it fades in over one update and
        // then plays the frame it would have reached.
        mixer.apply(.setPosition(VoiceID(1), [0, 0, -1], velocity: .zero))
        output.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress!, frameCount: 3 * update) }
        XCTAssertEqual(mixer.virtualVoiceCount, 0)
        for k in update..<(3 * update) {
            XCTAssertEqual(Double(output[k]), Double(back + k) / Double(length), accuracy: 1e-6, "frame \(back + k)")
        }
        XCTAssertLessThan(Double(output[0]), 0.02 * Double(back) / Double(length), "it fades in from silence")
        // Sent away again it goes virtual at the next update, and finishes on time, unheard.
        mixer.apply(.setPosition(VoiceID(1), [0, 0, -30], velocity: .zero))
        var events: [(MixerEvent, Int)] = []
        var long = [Float](repeating: 0, count: length)
        long.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress!, frameCount: length) }
        mixer.drainEvents { events.append(($0, $1)) }
        XCTAssertEqual(events.count, 1)
        XCTAssertEqual(events.first?.0, .finished(VoiceID(1)))
        XCTAssertEqual(events.first?.1, length, "the cue ends when it would have, heard or not")
        XCTAssertTrue(long[update..<(length - back - 3 * update)].allSatisfy { $0 == 0 })
    }

    func testMaxVoicesCountsAudibleVoicesAndQuietOnesGiveWay() {
        let level = monoCue(frames: 1000) { _ in 0.1 }
        defer { withExtendedLifetime(level) {} }
        var configuration = testConfiguration(maxVoices: 2)
        configuration.virtualVoices = 2
        let mixer = Mixer(format: stereo, configuration: configuration)
        let farAway = Source(position: [0, 0, -50], distanceModel: .linearClamped, maximumDistance: 10)
        mixer.apply(positional(1, level, Source(position: [0, 0, -1])))
        mixer.apply(positional(2, level, Source(position: [0, 0, -5])))
        mixer.apply(positional(3, level, farAway))
        mixer.apply(positional(4, level, farAway))
        XCTAssertEqual([mixer.playingVoiceCount, mixer.realVoiceCount, mixer.virtualVoiceCount, mixer.stolenCount], [4, 2, 2, 0])
        // A new audible voice with every real voice busy: one virtual voice must go first (the
        // virtual slots are full), then the quietest real one (5 away) gives way and goes on unheard.
        mixer.apply(positional(5, level, Source(position: [0, 0, -2])))
        XCTAssertEqual([mixer.playingVoiceCount, mixer.realVoiceCount, mixer.virtualVoiceCount], [4, 2, 2])
        XCTAssertEqual(mixer.stolenCount, 1, "the oldest virtual voice")
        var events: [MixerEvent] = []
        mixer.drainEvents { event, _ in events.append(event) }
        XCTAssertEqual(events, [.stolen(VoiceID(3))], "\(events)")
        // A non-positional voice of higher priority takes the place of the quietest real one too.
        mixer.apply(play(6, level, priority: .high))
        XCTAssertEqual(mixer.realVoiceCount, 2)
        XCTAssertEqual(mixer.stolenCount, 2, "with the virtual slots full, a virtual voice is stolen to make room for the quiet one")
    }

    /// A scene with moving sources and listener, starts and stops, for the determinism checks.
    func movingScene() -> (script: [ScheduledCommand], cues: [Cue]) {
        let a = monoCue(frames: 900) { i in 0.2 * sin(Double(i) * 0.05) }
        let b = stereoCue(frames: 500) { i in (0.1 * cos(Double(i) * 0.03), 0.05) }
        var script: [ScheduledCommand] = []
        var random = SplitMix64(state: 7)
        func coordinate() -> Float { Float(Int(random.next() % 400) - 200) / 10 }
        for v in 0..<40 {
            let frame = Int(random.next() % 8000)
            let source = Source(position: [coordinate(), 0, coordinate()], velocity: [coordinate(), 0, coordinate()],
                                distanceModel: DistanceModel.allCases[v % 7], maximumDistance: 15,
                                airAbsorptionFactor: v % 5 == 0 ? 10 : 0)
            let filter: FilterSettings? = v % 4 == 1 ? .lowPass(cutoff: 800, q: 2) : nil
            script.append(at(frame, .play(PlayRequest(voice: VoiceID(UInt64(v)), cue: v % 3 == 0 ? b : a,
                                                      gain: 0.5, loops: v % 4 - 1, source: source, filter: filter))))
            script.append(at(frame + Int(random.next() % 3000), .setFilter(VoiceID(UInt64(v)), v % 2 == 0 ? .highPass(cutoff: 2000) : nil)))
            for _ in 0..<5 {
                script.append(at(frame + Int(random.next() % 3000), .setPosition(VoiceID(UInt64(v)), [coordinate(), coordinate(), coordinate()],
                                                                                      velocity: [coordinate(), 0, 0])))
            }
            script.append(at(frame + Int(random.next() % 4000), .stop(VoiceID(UInt64(v)), fadeFrames: 200)))
        }
        script += [at(1500, .setGroupFilter(.effects, .bandPass(centre: 1000, q: 1))), at(6100, .setGroupFilter(.effects, nil))]
        for k in 0..<30 {
            script.append(at(k * 400 + Int(random.next() % 300), .setListener(Listener(position: [coordinate(), 0, coordinate()],
                                                                                        velocity: [coordinate(), 0, 0],
                                                                                        forward: [coordinate(), 0, coordinate() + 0.5]))))
        }
        return (script, [a, b])
    }

    func testPositionalOutputDoesNotDependOnHowRenderingIsSplit() {
        var configuration = testConfiguration(maxVoices: 8)
        configuration.virtualVoices = 6
        configuration.maxFramesPerRender = 1024
        let (script, cues) = movingScene()
        defer { withExtendedLifetime(cues) {} }
        let whole = renderScript(script, frames: 12_000, configuration: configuration)
        XCTAssertGreaterThan(whole.samples.map(abs).max() ?? 0, 0.01)
        for chunks in [[1], [7], [128], [1000], [5, 300, 1, 97, 2048]] {
            let split = renderInChunks(script, frames: 12_000, chunks: chunks, configuration: configuration)
            XCTAssertTrue(split.samples.elementsEqual(whole.samples) { $0.bitPattern == $1.bitPattern }, "chunks \(chunks)")
            XCTAssertEqual(split.events, whole.events.map(\.event), "chunks \(chunks)")
        }
    }

    func testTheAVX2KernelMixesTheSameSamplesAsThePortableCode() throws {
        guard sfx_kernels_have_avx2() != 0 else {
            throw XCTSkip("this processor has no AVX2: the portable code is the only path here")
        }
        defer { sfx_kernels_set_avx2(1) }
        let (script, cues) = movingScene()
        defer { withExtendedLifetime(cues) {} }
        // Doppler at 1 keeps the rates near 1 (each group of 8 frames read from one window of 9);
        // at 12 they range widely (read by a gather), and cues end inside a group.
        for factor: Float in [1, 12] {
            let scene = [at(0, .setWorld(SpatialWorld(dopplerFactor: factor)))] + script
            let kernel = renderScript(scene, frames: 12_000)
            sfx_kernels_set_avx2(0)
            let portable = renderScript(scene, frames: 12_000)
            sfx_kernels_set_avx2(1)
            XCTAssertGreaterThan(portable.samples.map(abs).max() ?? 0, 0.01)
            XCTAssertTrue(kernel.samples.elementsEqual(portable.samples) { $0.bitPattern == $1.bitPattern }, "doppler factor \(factor)")
        }
    }

    func testARestoredSnapshotRendersPositionalVoicesAgainIdentically() {
        let (script, cues) = movingScene()
        defer { withExtendedLifetime(cues) {} }
        let mixer = Mixer(format: stereo, configuration: testConfiguration(maxVoices: 8))
        XCTAssertGreaterThan(assertRestoredSnapshotsRenderAgain(script, on: mixer, turns: 16, block: 700), 8)
    }

    func testPositionalRenderingAndCommandsAllocateNothing() {
        let cue = monoCue(frames: 3000) { i in sin(Double(i) * 0.01) }
        defer { withExtendedLifetime(cue) {} }
        var configuration = testConfiguration(maxVoices: 16)
        configuration.virtualVoices = 16
        let mixer = Mixer(format: stereo, configuration: configuration)
        let output = UnsafeMutablePointer<Float>.allocate(capacity: 256 * 2)
        defer { output.deallocate() }
        var voice: UInt64 = 0
        // Vectors made with Vector3(x, y, z): an array literal would allocate in the test itself.
        func period() {
            voice += 1
            let x = Float(voice % 40) - 20
            mixer.apply(.play(PlayRequest(voice: VoiceID(voice), cue: cue, gain: 0.1, loops: Int(voice % 3),
                                          source: Source(position: Vector3(x, 0, -x), velocity: Vector3(x, 0, 0),
                                                         distanceModel: .linearClamped, maximumDistance: 12))))
            mixer.apply(.setPosition(VoiceID(voice &- 2), Vector3(x * 2, 1, 3), velocity: Vector3(0, 0, x)))
            mixer.apply(.setSource(VoiceID(voice &- 4), Source(position: Vector3(1, 2, 3), cone: Cone(innerAngle: 30, outerAngle: 90, outerGain: 0.1))))
            mixer.apply(.setListener(Listener(position: Vector3(x / 4, 0, 0), velocity: Vector3(1, 0, 0), forward: Vector3(0, 0, -1))))
            mixer.apply(.stop(VoiceID(voice &- 6), fadeFrames: 100))
            mixer.apply(.setFilter(VoiceID(voice &- 1), voice % 3 == 0 ? nil : .lowPass(cutoff: 300 + x * 10)))
            mixer.apply(.changeSource(VoiceID(voice &- 3), .airAbsorption(Float(voice % 4))))
            mixer.apply(.setGroupFilter(.effects, voice % 7 == 0 ? nil : .highPass(cutoff: 100 + x)))
            mixer.render(into: output, frameCount: 256)
            mixer.drainEvents { _, _ in }
        }
        for _ in 0..<300 { period() }
        let audit = AllocationAudit()
        let m = audit.measure { for _ in 0..<1000 { period() } }
        XCTAssertEqual(m.swiftObjects, 0, "\(m)")
        XCTAssertGreaterThan(mixer.virtualVoiceCount + mixer.realVoiceCount, 2)
    }

    // MARK: Filters

    /// Renders `commands` (all at frame 0) into mono output.
    func render(_ commands: [MixerCommand], frames: Int) -> [Float] {
        renderScript(commands.map { at(0, $0) }, frames: frames, format: mono).samples
    }

    func noise(_ frames: Int) -> Cue {
        var random = SplitMix64(state: 3)
        return monoCue(frames: frames) { _ in Double(Int(random.next() % 2001) - 1000) / 4000 }
    }

    func assertFiltered(_ filtered: [Float], equals dry: [Float], through settings: FilterSettings, _ what: String,
                        file: StaticString = #filePath, line: UInt = #line) {
        var reference = dry
        var biquad = Biquad(settings, sampleRate: 48_000, smoothingFrames: 50)
        reference.withUnsafeMutableBufferPointer { biquad.process($0.baseAddress!, frames: $0.count, channels: 1) }
        let worst = zip(filtered, reference).map { abs($0 - $1) }.max() ?? 0
        XCTAssertLessThan(worst, 1e-6, what, file: file, line: line)
        XCTAssertGreaterThan(filtered.map(abs).max() ?? 0, 0.01, what, file: file, line: line)
    }

    func testAVoiceFilterIsTheBiquadOnTheVoice() {
        let cue = noise(4000)
        defer { withExtendedLifetime(cue) {} }
        for settings in [FilterSettings.lowPass(cutoff: 500, q: 0.7071), .highPass(cutoff: 3000, q: 2), .bandPass(centre: 1000, q: 4, gain: 0.5)] {
            let dry = render([play(1, cue, gain: 0.7)], frames: 4000)
            let wet = render([.play(PlayRequest(voice: VoiceID(1), cue: cue, gain: 0.7, filter: settings))], frames: 4000)
            assertFiltered(wet, equals: dry, through: settings, "\(settings)")
            // A group's filter does the same to everything in the group.
            let group = render([.setGroupFilter(.effects, settings), play(1, cue, gain: 0.7)], frames: 4000)
            assertFiltered(group, equals: dry, through: settings, "group \(settings)")
        }
    }

    func testAFilterTakenOffGlidesOpenThenStopsCosting() {
        let cue = noise(4000)
        defer { withExtendedLifetime(cue) {} }
        let mixer = Mixer(format: mono, configuration: testConfiguration())
        mixer.apply(.play(PlayRequest(voice: VoiceID(1), cue: cue, filter: .lowPass(cutoff: 200))))
        var out = [Float](repeating: 0, count: 4000)
        out.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress!, frameCount: 1000) }
        XCTAssertTrue(mixer.filters[0].filterOn)
        mixer.apply(.setFilter(VoiceID(1), nil))
        out.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress! + 1000, frameCount: 49) }
        XCTAssertTrue(mixer.filters[0].filterOn, "still gliding open")
        out.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress! + 1049, frameCount: 2) }
        XCTAssertFalse(mixer.filters[0].filterOn, "off once open (50 frames of smoothing)")
        // No click: no step while it opened is larger than the unfiltered noise's own steps.
        let steps = (1000..<1100).map { abs(out[$0] - out[$0 - 1]) }
        XCTAssertLessThan(steps.max() ?? 0, 0.5)
    }

    func testAirAbsorptionIsAHighShelfThatFallsWithDistance() {
        let cue = noise(4000)
        defer { withExtendedLifetime(cue) {} }
        // 101 away, reference 1, rolloff 1, factor 2: 0.99426^(2 × 100) at 5 kHz.
        let place = Source(position: [0, 0, -101], distanceModel: .none)
        var absorbing = place
        absorbing.airAbsorptionFactor = 2
        let dry = render([.play(PlayRequest(voice: VoiceID(1), cue: cue, source: place))], frames: 4000)
        let wet = render([.play(PlayRequest(voice: VoiceID(1), cue: cue, source: absorbing))], frames: 4000)
        let g = Float(pow(0.99426, 200.0))
        assertFiltered(wet, equals: dry, through: .highShelf(cutoff: 5000, gain: g * g), "air absorption")
        XCTAssertEqual(AirAbsorption.highFrequencyGain(distance: 100, factor: 2), g, accuracy: 1e-6)
    }

    // MARK: HRTF

    /// A table no measurement made: the ear a source is on hears it at full level at once, the
    /// other ear at (1 − |x|)/2 + 1/4 of it, 20·|x| frames later (x: the source's rightward component).
    static let syntheticHRTF = HRTFTable(name: "synthetic", sampleRate: 48_000, irLength: 8, azimuthStep: 10,
                                         elevations: -40...80, elevationStep: 20) { direction, left, right in
        let x = direction.x
        let far = (1 - abs(x)) / 2 + 0.25
        left[0] = x > 0 ? far : 1
        right[0] = x > 0 ? 1 : far
        return x > 0 ? (20 * x, 0) : (0, -20 * x)
    }

    func testThroughTheHRTFASourceOnTheRightIsLouderAndEarlierOnTheRight() {
        let click = monoCue(frames: 4000) { $0 == 2000 ? 0.5 : 0 }
        defer { withExtendedLifetime(click) {} }
        let output = renderScript([at(0, positional(1, click, Source(position: [2, 0, 0], distanceModel: .none), loops: 0))],
                                  frames: 4000, hrtf: Self.syntheticHRTF)
        let left = (0..<4000).map { output.samples[2 * $0] }, right = (0..<4000).map { output.samples[2 * $0 + 1] }
        let leftPeak = left.indices.max { abs(left[$0]) < abs(left[$1]) }!
        let rightPeak = right.indices.max { abs(right[$0]) < abs(right[$1]) }!
        XCTAssertEqual(rightPeak, 2000, "the near ear hears the click when it is played")
        XCTAssertEqual(leftPeak, 2020, "the far ear 20 frames later")
        XCTAssertEqual(Double(right[rightPeak]), 0.5, accuracy: 1e-6)
        XCTAssertEqual(Double(left[leftPeak]), 0.5 * 0.25, accuracy: 1e-6, "the far ear hears (1 − 1)/2 + 1/4 of it")
    }

    func testBinauralOutputDoesNotDependOnHowRenderingIsSplitOrOnARewind() {
        var configuration = testConfiguration(maxVoices: 8)
        configuration.virtualVoices = 6
        configuration.maxFramesPerRender = 1024
        let (script, cues) = movingScene()
        defer { withExtendedLifetime(cues) {} }
        let whole = renderScript(script, frames: 12_000, configuration: configuration, hrtf: Self.syntheticHRTF)
        let panned = renderScript(script, frames: 12_000, configuration: configuration)
        XCTAssertFalse(whole.samples.elementsEqual(panned.samples), "the HRTF is used")
        for chunks in [[1], [7], [128], [5, 300, 1, 97, 2048]] {
            let split = renderInChunks(script, frames: 12_000, chunks: chunks, configuration: configuration, hrtf: Self.syntheticHRTF)
            XCTAssertTrue(split.samples.elementsEqual(whole.samples) { $0.bitPattern == $1.bitPattern }, "chunks \(chunks)")
        }
        // A snapshot restored re-renders the same.
        let mixer = Mixer(format: stereo, configuration: configuration, hrtf: Self.syntheticHRTF)
        XCTAssertGreaterThan(assertRestoredSnapshotsRenderAgain(script, on: mixer, turns: 18, block: 600), 8)
    }
}
