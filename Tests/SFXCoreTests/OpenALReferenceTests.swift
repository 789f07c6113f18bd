// sfx's positional audio against OpenAL Soft's own output: the same scenes rendered by OpenAL
// Soft 1.19.1 through its loopback device (Tests/Support/OpenALReference/render.c, built here
// with /usr/bin/cc and -lopenal, configured by the alsoft.conf beside it) and by sfx, each
// playing a looping 1 kHz sine of amplitude 0.5 at 48 kHz, measured the same way: per-channel
// RMS over 48 000 frames after 4 800 frames of settling, and the frequency from the rising zero
// crossings.
//
// The two stereo panning laws differ, so the levels are compared in the way each law allows:
//
// - sfx: equal power, L = cos((pan + 1)·π/4), R = sin((pan + 1)·π/4) with pan = the rightward
//   component of the head-relative direction (Mixer's mono law): L² + R² = 1 everywhere, each
//   side −3.01 dB straight ahead.
// - OpenAL Soft 1.19.1, stereo, HRTF off, stereo-encoding = panpot: the source is panned into
//   first-order ambisonics (N3D) and decoded with its two-speaker matrix, per channel
//   0.5·W ± 0.288675·Y + 0.0552306·X, that is g = 0.5 ± 0.5·left + 0.0956622·front; and an
//   azimuth in the front half is first multiplied by 1.5 (the "stereo pair" scaling, so that a
//   source 60° off centre is already hard to one side). Straight ahead each side is 0.5957
//   (−4.50 dB), hard right is (0, 1), behind is 0.4043 each: L² + R² changes with direction.
//   `openALSoftPanLaw` writes this down; testOpenALSoftsPanLawIsTheOneDescribed checks it
//   against the measurements, so a different library version shows up there first.
//
// Hence (1) for sources straight ahead, each channel's level relative to the same source at its
// reference distance straight ahead is compared, in dB, within 0.1 dB; (2) for sources off centre,
// only the total (L² + R²) level is compared, each side's relative to the same source position
// with no attenuation and no cone (for sfx that is the straight-ahead level, as its law keeps the
// total), so the two laws' different totals cancel; and (3) where the source is heard from, by
// putting sfx's head-relative direction through OpenAL Soft's law and comparing that with what
// OpenAL Soft rendered, per channel. Doppler: the measured frequency ratio within 0.1 % (OpenAL
// Soft steps through its buffer in fixed point, 1/4096 of a sample in 1.19.1: 0.83325 for
// 0.83333 is 3413/4096; that is the ~0.01 % that remains).
//
// The sfx side is the mixer: a positional voice looping the same tone (OfflineRenderer, the
// default configuration), the listener and the world set by their commands. Each of its
// measurements is also checked against Spatializer.compute applied to the tone by hand.
import Foundation
import XCTest
@testable import SFXCore

final class OpenALReferenceTests: XCTestCase {
    // MARK: The scenes

    struct Scene {
        var label: String
        var listener = Listener()
        var source = Source()
        var world = SpatialWorld()
    }

    struct Measurement {
        var left: Double
        var right: Double
        var frequency: Double
        var total: Double { (left * left + right * right).squareRoot() }
    }

    static let sampleRate = 48_000
    static let tone = 1000.0
    static let amplitude = 0.5
    static let settleFrames = 4_800
    static let measuredFrames = 48_000

    /// One scene as a line of render.c's input.
    static func line(_ scene: Scene) -> String {
        func v(_ x: Vector3) -> String { "\(x.x),\(x.y),\(x.z)" }
        let l = scene.listener, s = scene.source, w = scene.world
        return ["lp=\(v(l.position))", "lv=\(v(l.velocity))", "lat=\(v(l.forward))", "lup=\(v(l.up))", "lgain=\(l.gain)",
                "sp=\(v(s.position))", "sv=\(v(s.velocity))", "sd=\(v(s.direction))", "rel=\(s.relative ? 1 : 0)",
                "inner=\(s.cone.innerAngle)", "outer=\(s.cone.outerAngle)", "outergain=\(s.cone.outerGain)",
                "model=\(s.distanceModel.name)", "ref=\(s.referenceDistance)", "max=\(s.maximumDistance)",
                "rolloff=\(s.rolloffFactor)", "doppler=\(w.dopplerFactor)", "sos=\(w.speedOfSound)",
                "settle=\(settleFrames)", "frames=\(measuredFrames)"].joined(separator: " ")
    }

    /// The same source where it is heard at full level in OpenAL: at its reference distance
    /// straight ahead of the listener, still, with no cone.
    static func reference(_ scene: Scene) -> Scene {
        var r = scene
        r.label = "reference"
        let ahead = Spatializer.frame(of: scene.listener).ahead
        r.source.position = scene.source.relative ? [0, 0, -scene.source.referenceDistance]
                                                  : scene.listener.position + ahead * scene.source.referenceDistance
        r.source.velocity = .zero
        r.source.direction = .zero
        r.listener.velocity = .zero
        return r
    }

    /// The same source position with no attenuation and no cone: the panning law's own level there.
    static func unattenuated(_ scene: Scene) -> Scene {
        var r = scene
        r.label = "unattenuated"
        r.source.distanceModel = .none
        r.source.direction = .zero
        r.source.velocity = .zero
        r.listener.velocity = .zero
        return r
    }

    // MARK: Levels

    func testLevelsMatchOpenALSoft() throws {
        var scenes: [Scene] = []
        // Straight ahead: all seven models at distances inside, at, between and beyond.
        for model in DistanceModel.allCases {
            for (d0, d1, r) in [(1.0, 20.0, 1.0), (2, 10, 0.5), (0.5, 100, 2)] as [(Float, Float, Float)] {
                for d in [0.5 * d0, d0, 1.7 * d0, 3 * d0, 0.8 * d1, d1, 2 * d1] {
                    scenes.append(Scene(label: "\(model.name) d=\(d) d0=\(d0) d1=\(d1) r=\(r)",
                                        source: Source(position: [0, 0, -d], distanceModel: model, referenceDistance: d0,
                                                       maximumDistance: d1, rolloffFactor: r)))
                }
            }
        }
        // The default source (inverse-clamped, d0 = 1, no maximum) far away, and a quieter listener.
        scenes.append(Scene(label: "default source at 40", source: Source(position: [0, 0, -40])))
        // §3.4: a linear model with d₀ = d₁ cannot be evaluated, so it does not attenuate.
        scenes.append(Scene(label: "linear with d0 = d1 = 2, at 5",
                            source: Source(position: [0, 0, -5], distanceModel: .linear, referenceDistance: 2, maximumDistance: 2)))
        scenes.append(Scene(label: "listener gain 0.5, inverse at 3", listener: Listener(gain: 0.5),
                            source: Source(position: [0, 0, -3], distanceModel: .inverse)))
        // A turned and moved listener, the source straight ahead of it.
        let turned = Listener(position: [3, 1, -2], forward: [1, 0, 1], up: [0, 1, 0])
        let ahead = Spatializer.frame(of: turned).ahead
        scenes.append(Scene(label: "turned listener, exponent at 4", listener: turned,
                            source: Source(position: turned.position + ahead * 4, distanceModel: .exponent, rolloffFactor: 1.5)))
        // Cones: the source 3 ahead faces the listener, or is turned away from it by θ.
        for (inner, outer, gain) in [(60, 180, 0.25), (90, 90, 0.5), (0, 360, 0.0), (30, 300, 0.1)] as [(Float, Float, Float)] {
            for theta in [0.0, 20, 40, 60, 100, 140, 180] as [Double] {
                let t = theta * .pi / 180
                scenes.append(Scene(label: "cone \(Int(inner))/\(Int(outer))/\(gain) θ=\(Int(theta))°",
                                    source: Source(position: [0, 0, -3], direction: [Float(sin(t)), 0, Float(cos(t))],
                                                   distanceModel: .linearClamped, maximumDistance: 10,
                                                   cone: Cone(innerAngle: inner, outerAngle: outer, outerGain: gain))))
            }
        }
        // Off centre: around the listener, above it, relative sources, turned listeners.
        for azimuth in [20.0, 45, 90, 135, 180, -60, -120] {
            let a = azimuth * .pi / 180
            scenes.append(Scene(label: "inverse at 2.5, azimuth \(Int(azimuth))°",
                                source: Source(position: [Float(2.5 * sin(a)), 0, Float(-2.5 * cos(a))], distanceModel: .inverse)))
        }
        scenes.append(Scene(label: "exponent-clamped above, at 5",
                            source: Source(position: [0, 5, 0], distanceModel: .exponentClamped, maximumDistance: 50)))
        scenes.append(Scene(label: "relative, right, linear at 4",
                            listener: Listener(position: [10, 0, 10], forward: [0, 0, 1], up: [0, 1, 0]),
                            source: Source(position: [4, 0, 0], relative: true, distanceModel: .linear, maximumDistance: 10)))
        scenes.append(Scene(label: "facing +x, source at +x 6 with a cone",
                            listener: Listener(forward: [1, 0, 0], up: [0, 1, 0]),
                            source: Source(position: [6, 0, 0], direction: [-1, 0, 1], distanceModel: .inverseClamped,
                                           cone: Cone(innerAngle: 45, outerAngle: 135, outerGain: 0.3))))

        let openAL = try Self.renderThroughOpenALSoft(scenes + scenes.map(Self.reference) + scenes.map(Self.unattenuated))
        let n = scenes.count
        var rows: [Row] = []
        for (i, scene) in scenes.enumerated() {
            let al = openAL[i], alReference = openAL[n + i], alUnattenuated = openAL[2 * n + i]
            let ours = Self.renderThroughSFX(scene), ourReference = Self.renderThroughSFX(Self.reference(scene))
            Self.assertMixerFollowsSpatializer(scene, ours)
            let direction = Spatializer.compute(scene.source, listener: scene.listener, world: scene.world).direction
            if abs(direction.x) < 1e-6 && abs(direction.y) < 1e-6 && direction.z > 0 {
                // Straight ahead: both laws give equal channels; compare each.
                for (name, a, aRef, s, sRef) in [("left", al.left, alReference.left, ours.left, ourReference.left),
                                                 ("right", al.right, alReference.right, ours.right, ourReference.right)] {
                    rows.append(Row(label: "\(scene.label) [\(name)]", openAL: decibels(a / aRef), sfx: decibels(s / sRef), unit: "dB"))
                }
            } else {
                rows.append(Row(label: "\(scene.label) [total]", openAL: decibels(al.total / alUnattenuated.total),
                                sfx: decibels(ours.total / ourReference.total), unit: "dB"))
            }
        }
        // Below −80 dB both are silence for this purpose (OpenAL Soft stops mixing a source below −100 dB).
        let silent = rows.filter { $0.openAL < -80 && $0.sfx < -80 }
        // Beyond AL_MAX_DISTANCE, for the linear model, the two differ by rule: see
        // testWhereOpenALSoftAndSFXFollowDifferentRules. OpenAL Soft is the quieter there.
        let byRule = rows.filter { !($0.openAL < -80 && $0.sfx < -80) && Self.openALSoftIgnoresTheMaximum($0.label) }
        for row in byRule { XCTAssertLessThan(row.openAL, row.sfx, row.label) }
        let compared = rows.filter { !($0.openAL < -80 && $0.sfx < -80) && !Self.openALSoftIgnoresTheMaximum($0.label) }
        Self.printTable("Level (dB) relative to the same source at its reference distance straight ahead "
                        + "(\(silent.count) silent on both sides and \(byRule.count) linear beyond the maximum left out)", compared)
        for row in compared {
            XCTAssertLessThanOrEqual(abs(row.difference), 0.1, "\(row.label): OpenAL Soft \(row.openAL) dB, sfx \(row.sfx) dB")
        }
    }

    /// "linear d=… d0=… d1=… r=…" with d beyond d1 and r < 1, where the two differ by design.
    static func openALSoftIgnoresTheMaximum(_ label: String) -> Bool {
        let words = label.split(separator: " ")
        guard words.first == "linear" else { return false }
        func value(_ key: String) -> Float? { words.first { $0.hasPrefix(key + "=") }.flatMap { Float($0.dropFirst(key.count + 1)) } }
        guard let d = value("d"), let d1 = value("d1"), let r = value("r") else { return false }
        return d > d1 && r < 1
    }

    /// The cases where OpenAL Soft 1.19.1 leaves the specification's formulas and sfx keeps to
    /// them. Each side is checked against its own rule, so that a change on either side is seen.
    func testWhereOpenALSoftAndSFXFollowDifferentRules() throws {
        struct Case { var scene: Scene; var openALSoftsRule: Double; var sfxsRule: Double; var why: String }
        func linear(_ d: Float, d0: Float, d1: Float, r: Float) -> Source {
            Source(position: [0, 0, -d], distanceModel: .linear, referenceDistance: d0, maximumDistance: d1, rolloffFactor: r)
        }
        let cases = [
            // §3.4: AL_LINEAR_DISTANCE first takes d = min(d, AL_MAX_DISTANCE), so that beyond the
            // maximum the gain stays at 1 − r: sfx does. OpenAL Soft 1.19.1 leaves d alone, so the
            // gain keeps falling to 0: 1 − 0.5·(20 − 2)/(10 − 2) < 0, silence.
            Case(scene: Scene(label: "linear beyond the maximum, r = 0.5", source: linear(20, d0: 2, d1: 10, r: 0.5)),
                 openALSoftsRule: 0, sfxsRule: 0.5, why: "OpenAL Soft does not clamp d to d1 for the linear model"),
            Case(scene: Scene(label: "linear beyond the maximum, r = 0.25", source: linear(15, d0: 1, d1: 5, r: 0.25)),
                 openALSoftsRule: 1 - 0.25 * 14 / 4, sfxsRule: 0.75, why: "as above, not yet silent"),
            // AL_INVERSE_DISTANCE with AL_REFERENCE_DISTANCE 0: the formula evaluates to 0/(r·d) = 0,
            // as sfx has it; OpenAL Soft skips attenuation when the reference distance is 0.
            Case(scene: Scene(label: "inverse with d0 = 0", source: Source(position: [0, 0, -3], distanceModel: .inverse, referenceDistance: 0)),
                 openALSoftsRule: 1, sfxsRule: 0, why: "OpenAL Soft does not attenuate when d0 = 0"),
        ]
        let scenes = cases.map(\.scene)
        let openAL = try Self.renderThroughOpenALSoft(scenes + scenes.map(Self.unattenuated))
        var rows: [Row] = []
        for (i, c) in cases.enumerated() {
            let al = openAL[i].total / openAL[cases.count + i].total
            let ours = Self.renderThroughSFX(c.scene).total / Self.renderThroughSFX(Self.unattenuated(c.scene)).total
            rows.append(Row(label: c.scene.label, openAL: decibels(al), sfx: decibels(ours), unit: "dB"))
            if c.openALSoftsRule > 1e-5 {
                XCTAssertEqual(decibels(al), decibels(c.openALSoftsRule), accuracy: 0.1, "\(c.scene.label): \(c.why)")
            } else {
                XCTAssertLessThan(decibels(al), -100, "\(c.scene.label): \(c.why)")
            }
            XCTAssertEqual(ours, c.sfxsRule, accuracy: 1e-5, "\(c.scene.label): \(c.why)")
        }
        Self.printTable("Where OpenAL Soft 1.19.1 leaves the specification (level in dB, silence as -200)", rows)
    }

    /// Where each source is heard from: sfx's head-relative direction put through OpenAL Soft's
    /// panning law gives the channels OpenAL Soft rendered.
    func testDirectionsMatchOpenALSoft() throws {
        var scenes: [Scene] = []
        let listeners: [(String, Listener)] = [
            ("default", Listener()),
            ("facing +x", Listener(position: [1, 2, 3], forward: [1, 0, 0], up: [0, 1, 0])),
            ("facing -z, up +y", Listener(forward: [0, 0, -1], up: [0, 1, 0])),
            ("turned 30° right", Listener(forward: [0.5, 0, -0.8660254], up: [0, 1, 0])),
            ("upside down", Listener(forward: [0, 0, -1], up: [0, -1, 0])),
            ("lying, facing +y", Listener(position: [-2, 0, 0], forward: [0, 1, 0], up: [0, 0, 1])),
        ]
        let positions: [Vector3] = [[3, 0, 0], [-3, 0, 0], [0, 0, -3], [0, 0, 3], [1, 0, -2], [-2, 1, -2], [0, 3, 0], [2, 0, 2]]
        for (name, listener) in listeners {
            for p in positions {
                scenes.append(Scene(label: "\(name), source at (\(p.x), \(p.y), \(p.z))", listener: listener,
                                    source: Source(position: listener.position + p, distanceModel: .none)))
            }
        }
        scenes.append(Scene(label: "relative (2, 0, -2), facing +x", listener: listeners[1].1,
                            source: Source(position: [2, 0, -2], relative: true, distanceModel: .none)))
        let openAL = try Self.renderThroughOpenALSoft(scenes + scenes.map(Self.reference))
        var rows: [Row] = []
        for (i, scene) in scenes.enumerated() {
            let al = openAL[i], reference = openAL[scenes.count + i]
            let direction = Spatializer.compute(scene.source, listener: scene.listener, world: scene.world).direction
            let predicted = Self.openALSoftPanLaw(direction), centre = Self.openALSoftPanLaw([0, 0, 1])
            // Both as amplitudes relative to the centre's total, so that 0.01 is about 0.1 dB of a full channel.
            let alTotal = reference.total, predictedTotal = (centre.left * centre.left + centre.right * centre.right).squareRoot()
            rows.append(Row(label: "\(scene.label) [left]", openAL: al.left / alTotal, sfx: predicted.left / predictedTotal, unit: ""))
            rows.append(Row(label: "\(scene.label) [right]", openAL: al.right / alTotal, sfx: predicted.right / predictedTotal, unit: ""))
            // And sfx's own law puts it on the same side.
            let ours = Self.renderThroughSFX(scene)
            if abs(direction.x) > 0.05 {
                XCTAssertEqual(ours.right > ours.left, al.right > al.left, "\(scene.label): sfx and OpenAL Soft disagree on the side")
            }
        }
        Self.printTable("Channel amplitude (relative to the centre's total): OpenAL Soft rendered, vs sfx's direction through OpenAL Soft's law", rows)
        for row in rows {
            XCTAssertLessThanOrEqual(abs(row.difference), 0.01, "\(row.label): OpenAL Soft \(row.openAL), predicted from sfx \(row.sfx)")
        }
    }

    func testOpenALSoftsPanLawIsTheOneDescribed() throws {
        // Around the listener in the horizontal plane and up, measured against the law in the header.
        var scenes: [Scene] = []
        var directions: [Vector3] = []
        for azimuth in stride(from: -180.0, through: 180, by: 15) {
            let a = azimuth * .pi / 180
            directions.append([Float(sin(a)), 0, Float(cos(a))])
        }
        directions += [[0, 1, 0], [0, -1, 0], [0.5, 0.7071068, 0.5]]
        for d in directions {
            scenes.append(Scene(label: "(\(d.x), \(d.y), \(d.z))", source: Source(position: [d.x * 2, d.y * 2, -d.z * 2], distanceModel: .none)))
        }
        let openAL = try Self.renderThroughOpenALSoft(scenes)
        for (d, measured) in zip(directions, openAL) {
            let law = Self.openALSoftPanLaw(d)
            XCTAssertEqual(measured.left / Self.rms, law.left, accuracy: 1e-4, "left at \(d)")
            XCTAssertEqual(measured.right / Self.rms, law.right, accuracy: 1e-4, "right at \(d)")
        }
    }

    /// OpenAL Soft 1.19.1's stereo gains (panpot, no HRTF) for a head-relative unit direction
    /// (x right, y up, z ahead), as described at the top of this file.
    static func openALSoftPanLaw(_ direction: Vector3) -> (left: Double, right: Double) {
        let x = Double(direction.x), y = Double(direction.y), z = Double(direction.z)
        let elevation = asin(min(max(y, -1), 1))
        var azimuth = atan2(x, z)
        if abs(azimuth) <= .pi / 2 { azimuth = (azimuth < 0 ? -1 : 1) * min(abs(azimuth) * 1.5, .pi / 2) }
        let left = -sin(azimuth) * cos(elevation), front = cos(azimuth) * cos(elevation)
        return (max(0.5 + 0.5 * left + 0.0956622 * front, 0), max(0.5 - 0.5 * left + 0.0956622 * front, 0))
    }

    // MARK: Doppler

    func testDopplerMatchesOpenALSoft() throws {
        var scenes: [Scene] = []
        let towards: Vector3 = [0, 0, 1]  // from a source at (0, 0, −10) to the listener at the origin
        for (ss, df) in [(343.3, 1), (100, 1), (343.3, 2), (343.3, 0), (100, 0.5)] as [(Float, Float)] {
            let v = ss / max(df, 1) * 0.2
            func add(_ what: String, source sv: Vector3, listener lv: Vector3) {
                scenes.append(Scene(label: "\(what), SS \(ss) DF \(df)", listener: Listener(velocity: lv),
                                    source: Source(position: [0, 0, -10], velocity: sv, distanceModel: .none),
                                    world: SpatialWorld(dopplerFactor: df, speedOfSound: ss)))
            }
            add("source approaching", source: towards * v, listener: .zero)
            add("source receding", source: towards * -v, listener: .zero)
            add("listener approaching", source: .zero, listener: towards * -v)
            add("listener receding", source: .zero, listener: towards * v)
            add("both approaching", source: towards * v, listener: towards * -v * 0.5)
            add("both receding", source: towards * -v * 0.5, listener: towards * v)
            add("oblique", source: [v, 3, v * 0.5], listener: [-5, 0, v * 0.3])
        }
        // A turned listener: doppler does not depend on where it faces.
        scenes.append(Scene(label: "turned listener, source approaching", listener: Listener(forward: [1, 0, 0], up: [0, 1, 0]),
                            source: Source(position: [0, 0, -10], velocity: [0, 0, 40], distanceModel: .none)))
        // A relative source moving away from its listener, the listener still.
        scenes.append(Scene(label: "relative source receding", listener: Listener(position: [5, 0, 5], forward: [1, 0, 0], up: [0, 1, 0]),
                            source: Source(position: [0, 0, -10], velocity: [0, 0, -50], relative: true, distanceModel: .none)))
        // A relative source and a moving listener: both in the listener's frame, so no shift.
        scenes.append(Scene(label: "relative source, listener moving", listener: Listener(velocity: [0, 0, -60]),
                            source: Source(position: [0, 0, -10], relative: true, distanceModel: .none)))
        let openAL = try Self.renderThroughOpenALSoft(scenes)
        var rows: [Row] = []
        for (scene, al) in zip(scenes, openAL) {
            let ours = Self.renderThroughSFX(scene)
            Self.assertMixerFollowsSpatializer(scene, ours)
            rows.append(Row(label: scene.label, openAL: al.frequency / Self.tone, sfx: ours.frequency / Self.tone, unit: "×"))
        }
        Self.printTable("Doppler: measured frequency / 1 kHz", rows)
        for row in rows {
            XCTAssertLessThanOrEqual(abs(row.sfx / row.openAL - 1), 0.001, "\(row.label): OpenAL Soft ×\(row.openAL), sfx ×\(row.sfx)")
        }
    }

    // MARK: sfx's side

    /// The per-channel RMS of the sine itself.
    static let rms = amplitude / 2.squareRoot()

    /// The looping tone, 100 whole periods, as render.c's buffer.
    static let toneCue = Cue(name: "1 kHz", format: AudioFormat(sampleRate: sampleRate, channels: 1),
                             interleaved: (0..<4_800).map { Float(amplitude * sin(2 * .pi * tone * Double($0) / Double(sampleRate))) })

    /// The scene through sfx's mixer (a positional voice playing the tone in a loop, the listener
    /// and the world set first), measured as OpenAL Soft's output is.
    static func renderThroughSFX(_ scene: Scene) -> Measurement {
        let key = SceneKey(listener: scene.listener, source: scene.source, world: scene.world)
        if let known = rendered[key] { return known }
        let measurement = mix(scene)
        rendered[key] = measurement
        return measurement
    }

    struct SceneKey: Hashable { var listener: Listener; var source: Source; var world: SpatialWorld }
    /// Many scenes share their reference (every source at its reference distance straight ahead
    /// sounds the same), so each distinct scene is mixed once.
    nonisolated(unsafe) static var rendered: [SceneKey: Measurement] = [:]

    static func mix(_ scene: Scene) -> Measurement {
        let script = [ScheduledCommand(frame: 0, .setListener(scene.listener)), ScheduledCommand(frame: 0, .setWorld(scene.world)),
                      ScheduledCommand(frame: 0, .play(PlayRequest(voice: VoiceID(1), cue: toneCue, loops: -1, source: scene.source)))]
        let output = withExtendedLifetime(toneCue) {
            OfflineRenderer.render(script, format: AudioFormat(sampleRate: sampleRate, channels: 2), length: .frames(settleFrames + measuredFrames))
        }
        return measure(Array(output.samples[(2 * settleFrames)...]))
    }

    /// The scene by hand: Spatializer.compute applied to the tone through the mixer's equal-power
    /// law (gain × listener gain, frequency × pitch). The mixer must sound like this.
    static func renderBySpatializer(_ scene: Scene) -> Measurement {
        let result = Spatializer.compute(scene.source, listener: scene.listener, world: scene.world)
        let gain = Double(result.gain) * Double(scene.listener.gain)
        let pan = Double(result.pan)
        let (l, r) = (cos((pan + 1) * .pi / 4) * gain, sin((pan + 1) * .pi / 4) * gain)
        let step = 2 * Double.pi * tone * Double(result.pitch) / Double(sampleRate)
        var samples = [Float](repeating: 0, count: 2 * measuredFrames)
        for i in 0..<measuredFrames {
            let s = amplitude * sin(step * Double(settleFrames + i))
            samples[2 * i] = Float(s * l)
            samples[2 * i + 1] = Float(s * r)
        }
        return measure(samples)
    }

    /// The mixer's rendering of `scene` is Spatializer.compute's result: each audible channel
    /// within 0.01 dB, the frequency within 0.001 %.
    ///
    /// Away from rate 1 the mixer interpolates linearly between source frames (its documented
    /// law), which keeps, of a sine advancing ω radians a source frame, on average
    /// √(2/3 + cos(ω)/3) of its RMS: −0.0124 dB for 1 kHz at 48 kHz. That factor is applied here.
    static func assertMixerFollowsSpatializer(_ scene: Scene, _ mixed: Measurement, file: StaticString = #filePath, line: UInt = #line) {
        var expected = renderBySpatializer(scene)
        let pitch = Spatializer.compute(scene.source, listener: scene.listener, world: scene.world).pitch
        if pitch != 1 {
            let omega = 2 * Double.pi * tone / Double(sampleRate)
            let kept = (2.0 / 3 + cos(omega) / 3).squareRoot()
            expected.left *= kept
            expected.right *= kept
        }
        for (name, got, want) in [("left", mixed.left, expected.left), ("right", mixed.right, expected.right)] where want > 1e-4 * rms {
            XCTAssertEqual(decibels(got / want), 0, accuracy: 0.01, "\(scene.label): the mixer's \(name) channel", file: file, line: line)
        }
        if expected.total > 1e-4 * rms {
            XCTAssertEqual(mixed.frequency / expected.frequency, 1, accuracy: 1e-5, "\(scene.label): the mixer's frequency", file: file, line: line)
        }
    }

    /// RMS per channel and the frequency from the rising zero crossings (as render.c measures).
    static func measure(_ samples: [Float]) -> Measurement {
        let frames = samples.count / 2
        var sums = [0.0, 0.0]
        for i in 0..<frames { for c in 0..<2 { sums[c] += Double(samples[2 * i + c]) * Double(samples[2 * i + c]) } }
        let left = (sums[0] / Double(frames)).squareRoot(), right = (sums[1] / Double(frames)).squareRoot()
        let channel = right > left ? 1 : 0
        var first = -1.0, last = -1.0, crossings = 0
        for i in 1..<frames {
            let a = Double(samples[2 * (i - 1) + channel]), b = Double(samples[2 * i + channel])
            if a < 0 && b >= 0 {
                let t = Double(i - 1) + a / (a - b)
                if first < 0 { first = t }
                last = t
                crossings += 1
            }
        }
        let frequency = crossings > 1 ? Double(crossings - 1) * Double(sampleRate) / (last - first) : 0
        return Measurement(left: left, right: right, frequency: left + right > 1e-7 ? frequency : 0)
    }

    // MARK: OpenAL Soft's side

    static let checkout = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let referenceDirectory = checkout.appending(path: "Tests/Support/OpenALReference")
    nonisolated(unsafe) static var renderer: Result<URL, Error>?
    nonisolated(unsafe) static var temporaryDirectory: URL?

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// render.c, built once into a directory of its own (mkdtemp), removed when the tests end.
    static func buildRenderer() throws -> URL {
        if let renderer { return try renderer.get() }
        let result = Result { () throws -> URL in
            var template = Array((FileManager.default.temporaryDirectory.path + "/sfx-openal-reference.XXXXXX").utf8CString)
            guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
                throw Failure(description: "mkdtemp failed: errno \(errno)")
            }
            let directory = URL(filePath: String(cString: made))
            temporaryDirectory = directory
            let program = directory.appending(path: "render")
            let build = try run("/usr/bin/cc", ["-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", "-o", program.path,
                                                referenceDirectory.appending(path: "render.c").path, "-lopenal", "-lm"])
            guard build.status == 0 else {
                throw Failure(description: "cc could not build render.c (is libopenal-dev installed? script/common.sh lists it): \(build.output)")
            }
            return program
        }
        renderer = result
        return try result.get()
    }

    override class func tearDown() {
        if let temporaryDirectory { try? FileManager.default.removeItem(at: temporaryDirectory) }
        temporaryDirectory = nil
        renderer = nil
        rendered = [:]
        super.tearDown()
    }

    static func renderThroughOpenALSoft(_ scenes: [Scene]) throws -> [Measurement] {
        let program = try buildRenderer()
        let input = scenes.map(line).joined(separator: "\n") + "\n"
        var environment = ProcessInfo.processInfo.environment
        environment["ALSOFT_CONF"] = referenceDirectory.appending(path: "alsoft.conf").path
        environment["ALSOFT_LOGLEVEL"] = "0"
        let run = try run(program.path, [], input: input, environment: environment)
        let lines = run.output.split(separator: "\n")
        guard run.status == 0, lines.count == scenes.count else {
            throw Failure(description: "render exited \(run.status) with \(lines.count) of \(scenes.count) lines: \(run.output.suffix(500))")
        }
        return try lines.map { line in
            let fields = line.split(separator: " ").compactMap { Double($0) }
            guard fields.count == 3 else { throw Failure(description: "render printed \(line)") }
            return Measurement(left: fields[0], right: fields[1], frequency: fields[2])
        }
    }

    /// Runs a program to its end with `input` on its standard input: its status, and its
    /// standard output and error together.
    static func run(_ executable: String, _ arguments: [String], input: String = "",
                    environment: [String: String]? = nil) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(filePath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stdout
        try process.run()
        // The input is written on a thread of its own so that neither side can fill a pipe and wait.
        let data = Data(input.utf8)
        let writer = Thread {
            stdin.fileHandleForWriting.write(data)
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    // MARK: The table

    struct Row {
        var label: String
        var openAL: Double
        var sfx: Double
        var unit: String
        var difference: Double { unit == "×" ? (sfx / openAL - 1) * 100 : sfx - openAL }
    }

    /// Prints the rows, largest difference first (the doppler rows' difference in per cent).
    static func printTable(_ title: String, _ rows: [Row], limit: Int = 12) {
        let sorted = rows.filter { $0.difference.isFinite }.sorted { abs($0.difference) > abs($1.difference) }
        let differenceUnit = rows.first?.unit == "×" ? "%" : rows.first?.unit ?? ""
        var text = "\n\(title): the \(min(limit, sorted.count)) largest differences of \(rows.count)\n"
        text += "  " + "scene".padding(toLength: 56, withPad: " ", startingAt: 0) + "  OpenAL Soft         sfx  difference\n"
        for row in sorted.prefix(limit) {
            text += "  " + String(row.label.prefix(56)).padding(toLength: 56, withPad: " ", startingAt: 0)
            text += String(format: " %11.5f %11.5f %+11.2e %@\n", row.openAL, row.sfx, row.difference, differenceUnit)
        }
        print(text)
    }
}

private func decibels(_ ratio: Double) -> Double { 20 * log10(max(ratio, 1e-10)) }
