// Spatializer and DistanceModel against the OpenAL 1.1 specification's own formulas, written here
// again from the specification's text, in Double, without calling into SFXCore:
//
// §3.4 Attenuation by distance, with d the distance, d₀ AL_REFERENCE_DISTANCE, d₁ AL_MAX_DISTANCE
// and r AL_ROLLOFF_FACTOR:
//   AL_INVERSE_DISTANCE           gain = d₀ / (d₀ + r·(d − d₀))
//   AL_INVERSE_DISTANCE_CLAMPED   d = max(d, d₀); d = min(d, d₁); then as AL_INVERSE_DISTANCE
//   AL_LINEAR_DISTANCE            d = min(d, d₁); gain = 1 − r·(d − d₀) / (d₁ − d₀)
//   AL_LINEAR_DISTANCE_CLAMPED    d = max(d, d₀); d = min(d, d₁); then as AL_LINEAR_DISTANCE
//   AL_EXPONENT_DISTANCE          gain = (d / d₀)^(−r)
//   AL_EXPONENT_DISTANCE_CLAMPED  d = max(d, d₀); d = min(d, d₁); then as AL_EXPONENT_DISTANCE
//   AL_NONE                       gain = 1
// and the result is kept within AL_MIN_GAIN…AL_MAX_GAIN (0…1 by default). Where the inverse
// model's denominator reaches zero or below (a source well inside d₀ with r > 1), the formula
// has its pole: the gain there is taken as unbounded, so 1 after the clamp (OpenAL Soft does not
// attenuate there either).
//
// The source cone (AL_CONE_INNER_ANGLE, AL_CONE_OUTER_ANGLE, AL_CONE_OUTER_GAIN): with θ the angle between AL_DIRECTION and the vector from the source to
// the listener, the gain is 1 for θ ≤ AL_CONE_INNER_ANGLE / 2, AL_CONE_OUTER_GAIN for
// θ ≥ AL_CONE_OUTER_ANGLE / 2, and interpolated linearly in θ between; a zero AL_DIRECTION is
// omnidirectional, and 360°/360° (the default) is no cone.
//
// Velocity-dependent doppler, with SS AL_SPEED_OF_SOUND, DF AL_DOPPLER_FACTOR, SL the vector from the
// source to the listener, SV and LV the source's and the listener's velocities:
//   vls = (SL · LV) / |SL|,  vss = (SL · SV) / |SL|
//   vls = min(vls, SS/DF),   vss = min(vss, SS/DF)
//   f′ = f · (SS − DF·vls) / (SS − DF·vss)
// DF = 0 is no doppler. Where the clamped speeds make f′ zero or infinite, sfx keeps the pitch
// within 1/4…4 (its documented range), so the expectation is the formula's value within 1/4…4.
//
// Listener orientation: AL_ORIENTATION is "at" and "up"; the listener's right is at × up.
// A relative source (AL_SOURCE_RELATIVE) is given in the listener's own frame.
//
// Every comparison is within 1e-5 relative.
import Foundation
import XCTest
@testable import SFXCore

/// The specification's distance models, from the text above.
enum Specification {
    enum Model: CaseIterable { case none, inverse, inverseClamped, linear, linearClamped, exponent, exponentClamped }

    static func gain(_ model: Model, d distance: Double, d0: Double, d1: Double, r: Double) -> Double {
        var d = distance
        switch model {
        case .inverseClamped, .linearClamped, .exponentClamped: d = min(max(d, d0), d1)
        case .linear: d = min(d, d1)
        case .none, .inverse, .exponent: break
        }
        let gain: Double
        switch model {
        case .none:
            gain = 1
        case .inverse, .inverseClamped:
            let denominator = d0 + r * (d - d0)
            gain = denominator > 0 ? d0 / denominator : .infinity
        case .linear, .linearClamped:
            gain = 1 - r * (d - d0) / (d1 - d0)
        case .exponent, .exponentClamped:
            gain = pow(d / d0, -r)
        }
        return min(max(gain, 0), 1)
    }

    static func cone(theta: Double, inner: Double, outer: Double, outerGain: Double) -> Double {
        if theta <= inner / 2 { return 1 }
        if theta >= outer / 2 { return outerGain }
        return 1 + (outerGain - 1) * (theta - inner / 2) / (outer / 2 - inner / 2)
    }

    typealias V = SIMD3<Double>

    static func doppler(sourcePosition: V, sourceVelocity sv: V, listenerPosition: V, listenerVelocity lv: V,
                        speedOfSound ss: Double, dopplerFactor df: Double) -> Double {
        guard df > 0 else { return 1 }
        let sl = listenerPosition - sourcePosition
        let length = (sl * sl).sum().squareRoot()
        var vls = (sl * lv).sum() / length
        var vss = (sl * sv).sum() / length
        vls = min(vls, ss / df)
        vss = min(vss, ss / df)
        let numerator = ss - df * vls, denominator = ss - df * vss
        let f = denominator > 0 ? numerator / denominator : .infinity
        return min(max(f, 0.25), 4)
    }
}

func assertRelative(_ actual: Float, _ expected: Double, _ message: @autoclosure () -> String = "",
                    file: StaticString = #filePath, line: UInt = #line) {
    let tolerance = 1e-5 * max(abs(expected), 1e-30)
    XCTAssertLessThanOrEqual(abs(Double(actual) - expected), tolerance,
                             "\(actual) is not \(expected) within 1e-5 relative. \(message())", file: file, line: line)
}

func assertVector(_ actual: Vector3, _ expected: SIMD3<Double>, _ message: @autoclosure () -> String = "",
                  file: StaticString = #filePath, line: UInt = #line) {
    let difference = SIMD3<Double>(Double(actual.x), Double(actual.y), Double(actual.z)) - expected
    let scale = max((expected * expected).sum().squareRoot(), 1e-30)
    XCTAssertLessThanOrEqual((difference * difference).sum().squareRoot(), 1e-5 * scale,
                             "\(actual) is not \(expected) within 1e-5 relative. \(message())", file: file, line: line)
}

final class SpatialTests: XCTestCase {
    static let models: [(DistanceModel, Specification.Model)] = [
        (.none, .none), (.inverse, .inverse), (.inverseClamped, .inverseClamped), (.linear, .linear),
        (.linearClamped, .linearClamped), (.exponent, .exponent), (.exponentClamped, .exponentClamped),
    ]

    // MARK: Distance

    func testEveryModelFollowsTheSpecificationAcrossDistances() {
        XCTAssertEqual(Self.models.count, DistanceModel.allCases.count)
        let flt = Double(Float.greatestFiniteMagnitude)
        for (model, specified) in Self.models {
            for d0 in [0.5, 1, 4] {
                for d1 in [10, 100, flt] {
                    for r in [0, 0.5, 1, 2, 5] {
                        // Inside d₀, at it, between d₀ and d₁, at d₁ and beyond it.
                        let distances = [0, d0 * 0.25, d0 * 0.9, d0, d0 * 1.5, (d0 + min(d1, 1000)) / 2, 7.25,
                                         min(d1, 1e6), min(d1, 1e6) * 1.5, 5000]
                        for d in distances {
                            let actual = model.gain(distance: Float(d), referenceDistance: Float(d0),
                                                    maximumDistance: Float(d1), rolloffFactor: Float(r))
                            let expected = Specification.gain(specified, d: Double(Float(d)), d0: d0, d1: Double(Float(d1)), r: r)
                            assertRelative(actual, expected, "\(model.name) d=\(d) d0=\(d0) d1=\(d1) r=\(r)")
                        }
                    }
                }
            }
        }
    }

    func testHandPickedDistanceGains() {
        // A few values worked by hand, so that the formulas above are checked too.
        func gain(_ model: DistanceModel, _ d: Float, d0: Float = 1, d1: Float = 10, r: Float = 1) -> Float {
            model.gain(distance: d, referenceDistance: d0, maximumDistance: d1, rolloffFactor: r)
        }
        assertRelative(gain(.inverse, 2), 0.5)
        assertRelative(gain(.inverse, 4, r: 0.5), 0.4)                 // 1 / (1 + 0.5·3)
        assertRelative(gain(.inverseClamped, 20), 0.1)                  // clamped at d₁ = 10
        assertRelative(gain(.inverse, 20), 0.05)                        // not clamped
        assertRelative(gain(.inverseClamped, 0.5), 1)
        assertRelative(gain(.linear, 5.5), 0.5)                         // 1 − 4.5/9
        assertRelative(gain(.linear, 30), 0)
        assertRelative(gain(.linearClamped, 5.5, r: 2), 0)              // 1 − 2·4.5/9
        assertRelative(gain(.exponent, 4, r: 0.5), 0.5)                 // 4^−½
        assertRelative(gain(.exponentClamped, 100, r: 2), 0.01)         // 10^−2 at d₁
        assertRelative(gain(.exponent, 100, r: 2), 0.0001)
        assertRelative(gain(.none, 1000), 1)
    }

    func testWhereTheFormulasCannotBeEvaluated() {
        // §3.4: "if the formula can not be evaluated then the source will not be attenuated".
        func gain(_ model: DistanceModel, _ d: Float, d0: Float, d1: Float, r: Float = 1) -> Float {
            model.gain(distance: d, referenceDistance: d0, maximumDistance: d1, rolloffFactor: r)
        }
        assertRelative(gain(.exponent, 3, d0: 0, d1: 10), 1)          // d / 0
        assertRelative(gain(.exponentClamped, 3, d0: 0, d1: 10), 1)
        assertRelative(gain(.inverse, 0, d0: 0, d1: 10), 1)           // 0 / 0
        assertRelative(gain(.linearClamped, 5, d0: 2, d1: 2), 1)      // d clamped to d₀: 0 / 0
        assertRelative(gain(.linear, 1, d0: 2, d1: 2), 1)
        assertRelative(gain(.linear, 5, d0: 2, d1: 2), 1)             // d = min(d, d₁) = d₀ first
        // Where it can: AL_INVERSE_DISTANCE with d₀ = 0 and d > 0 is 0 / (r·d) = 0.
        assertRelative(gain(.inverse, 3, d0: 0, d1: 10), 0)
    }

    // MARK: Cone

    func testConeGainFollowsTheSpecification() {
        // The source at the origin faces +x; the listener is placed at angle θ from that axis.
        let cones = [Cone(), Cone(innerAngle: 60, outerAngle: 180, outerGain: 0.25),
                     Cone(innerAngle: 90, outerAngle: 90, outerGain: 0.5), Cone(innerAngle: 0, outerAngle: 360, outerGain: 0),
                     Cone(innerAngle: 30, outerAngle: 300, outerGain: 0.1)]
        for cone in cones {
            for theta in [0.0, 10, 29, 31, 44.9, 45.1, 60, 89, 90, 120, 149, 151, 179, 180] {
                let radians = theta * .pi / 180
                let listener = Listener(position: Vector3(Float(2 * cos(radians)), Float(2 * sin(radians)), 0))
                let source = Source(direction: [3, 0, 0], distanceModel: .none, cone: cone)
                let result = Spatializer.compute(source, listener: listener, world: SpatialWorld())
                // θ as the listener's position in Float gives it, so that a step at inner == outer is not
                // decided by rounding.
                let p = SIMD3<Double>(Double(listener.position.x), Double(listener.position.y), 0)
                let exact = acos(min(max(p.x / (p * p).sum().squareRoot(), -1), 1)) * 180 / .pi
                if abs(exact - Double(cone.innerAngle) / 2) < 1e-3 || abs(exact - Double(cone.outerAngle) / 2) < 1e-3 { continue }
                let expected = Specification.cone(theta: exact, inner: Double(cone.innerAngle), outer: Double(cone.outerAngle),
                                                  outerGain: Double(cone.outerGain))
                XCTAssertEqual(Double(result.gain), expected, accuracy: 1e-5 * max(expected, 1e-3) + 2e-6,
                               "cone \(cone) at θ = \(theta)°")
                XCTAssertEqual(Double(cone.gain(atAngle: Float(exact))), expected, accuracy: 1e-5 * max(expected, 1e-3) + 1e-6)
            }
        }
    }

    func testConeCasesByName() {
        let cone = Cone(innerAngle: 60, outerAngle: 120, outerGain: 0.2)
        assertRelative(cone.gain(atAngle: 10), 1)               // inside the inner cone
        assertRelative(cone.gain(atAngle: 45), 0.6)             // half way: 1 + (0.2 − 1)·0.5
        assertRelative(cone.gain(atAngle: 90), 0.2)             // outside the outer cone
        assertRelative(Cone().gain(atAngle: 180), 1)            // the default is no cone
        let step = Cone(innerAngle: 90, outerAngle: 90, outerGain: 0.3)
        assertRelative(step.gain(atAngle: 44), 1)               // inner == outer: a step
        assertRelative(step.gain(atAngle: 46), 0.3)
        // No direction: no cone, wherever the listener is.
        let omni = Spatializer.compute(Source(position: [0, 0, 5], distanceModel: .none, cone: step),
                                       listener: Listener(), world: SpatialWorld())
        assertRelative(omni.gain, 1)
    }

    func testConeAndDistanceMultiply() {
        let source = Source(position: [0, 0, -4], direction: [1, 0, 0], distanceModel: .inverse,
                            cone: Cone(innerAngle: 0, outerAngle: 360, outerGain: 0))
        // The listener at the origin is 90° off the source's direction: half way from 0° to 180°.
        let result = Spatializer.compute(source, listener: Listener(), world: SpatialWorld())
        assertRelative(result.gain, 0.25 * 0.5)
        assertRelative(result.distance, 4)
    }

    // MARK: Doppler

    func testDopplerFollowsTheSpecification() {
        typealias V = SIMD3<Double>
        // The source 10 units ahead of a listener at (1, 2, 3); velocities along the line between and across it.
        let listenerPosition = V(1, 2, 3), sourcePosition = V(1, 2, -7)
        let towardsListener = V(0, 0, 1)
        var cases: [(sv: V, lv: V, ss: Double, df: Double, what: String)] = []
        for ss in [343.3, 100] {
            for df in [0, 1, 2] as [Double] {
                let limit = df > 0 ? ss / df : ss
                for speed in [10, 50, limit * 0.99, limit, limit * 1.5] {
                    cases.append((towardsListener * speed, .zero, ss, df, "source approaching at \(speed)"))
                    cases.append((towardsListener * -speed, .zero, ss, df, "source receding at \(speed)"))
                    cases.append((.zero, towardsListener * -speed, ss, df, "listener approaching at \(speed)"))
                    cases.append((.zero, towardsListener * speed, ss, df, "listener receding at \(speed)"))
                    cases.append((towardsListener * speed, towardsListener * -speed * 0.5, ss, df, "both approaching at \(speed)"))
                    cases.append((towardsListener * -speed * 0.5, towardsListener * speed * 0.5, ss, df, "both receding at \(speed)"))
                    cases.append((towardsListener * speed, towardsListener * speed, ss, df, "same velocity \(speed)"))
                }
                cases.append((V(30, 5, 20), V(-4, 9, -12), ss, df, "oblique"))
                cases.append((V(40, 0, 0), .zero, ss, df, "across the line"))
            }
        }
        // A turned listener hears the same shift: doppler does not depend on orientation.
        for orientation in [(Vector3(0, 0, -1), Vector3(0, 1, 0)), (Vector3(1, 0, 0), Vector3(0, 1, 0)), (Vector3(0, 1, 0.5), Vector3(1, 0, 0))] {
            for c in cases {
                let expected = Specification.doppler(sourcePosition: sourcePosition, sourceVelocity: c.sv,
                                                     listenerPosition: listenerPosition, listenerVelocity: c.lv,
                                                     speedOfSound: c.ss, dopplerFactor: c.df)
                let source = Source(position: Vector3(sourcePosition), velocity: Vector3(c.sv))
                let listener = Listener(position: Vector3(listenerPosition), velocity: Vector3(c.lv),
                                        forward: orientation.0, up: orientation.1)
                let world = SpatialWorld(dopplerFactor: Float(c.df), speedOfSound: Float(c.ss))
                let result = Spatializer.compute(source, listener: listener, world: world)
                assertRelative(result.pitch, expected, "\(c.what), SS \(c.ss), DF \(c.df), facing \(orientation.0)")
            }
        }
    }

    func testDopplerByHand() {
        let world = SpatialWorld(dopplerFactor: 1, speedOfSound: 340)
        // A source approaching at 34 units/s: 340/306.
        let approaching = Spatializer.compute(Source(position: [0, 0, -10], velocity: [0, 0, 34]), listener: Listener(), world: world)
        assertRelative(approaching.pitch, 340.0 / 306)
        // A listener receding at 34 units/s from a still source: 306/340.
        let receding = Spatializer.compute(Source(position: [0, 0, -10]), listener: Listener(velocity: [0, 0, 34]), world: world)
        assertRelative(receding.pitch, 306.0 / 340)
        // A source at the speed of sound towards the listener: unbounded, kept at 4.
        let sonic = Spatializer.compute(Source(position: [0, 0, -10], velocity: [0, 0, 340]), listener: Listener(), world: world)
        assertRelative(sonic.pitch, 4)
    }

    // MARK: Relative sources and orientation

    func testRelativeSourcesFollowTheListener() {
        let turned = Listener(position: [5, -3, 8], velocity: [100, 0, 0], forward: [1, 0, 0], up: [0, 1, 0])
        // (1, 0, 0) in the listener's frame is its right, wherever it is and however it faces.
        let right = Spatializer.compute(Source(position: [1, 0, 0], relative: true), listener: turned, world: SpatialWorld())
        assertVector(right.direction, [1, 0, 0])
        assertRelative(right.pan, 1)
        assertRelative(right.distance, 1)
        // (0, 0, −2): ahead, 2 away.
        let ahead = Spatializer.compute(Source(position: [0, 0, -2], relative: true, distanceModel: .inverse),
                                        listener: turned, world: SpatialWorld())
        assertVector(ahead.direction, [0, 0, 1])
        assertRelative(ahead.gain, 0.5)
        // The listener's velocity is not the relative source's concern; its own velocity is.
        assertRelative(ahead.pitch, 1)
        let moving = Spatializer.compute(Source(position: [0, 0, -2], velocity: [0, 0, 34.33], relative: true),
                                         listener: turned, world: SpatialWorld())
        assertRelative(moving.pitch, 343.3 / (343.3 - 34.33))
        // A relative source's cone is in the listener's frame too: facing +z (back at the listener) from ahead.
        let facing = Spatializer.compute(Source(position: [0, 0, -2], direction: [0, 0, 1], relative: true, distanceModel: .none,
                                                cone: Cone(innerAngle: 10, outerAngle: 20, outerGain: 0)),
                                         listener: turned, world: SpatialWorld())
        assertRelative(facing.gain, 1)
        let away = Spatializer.compute(Source(position: [0, 0, -2], direction: [0, 0, -1], relative: true, distanceModel: .none,
                                              cone: Cone(innerAngle: 10, outerAngle: 20, outerGain: 0.125)),
                                       listener: turned, world: SpatialWorld())
        assertRelative(away.gain, 0.125)
    }

    func testListenerOrientation() {
        // Facing +x, a source at +x is ahead.
        let facingX = Listener(forward: [1, 0, 0], up: [0, 1, 0])
        let ahead = Spatializer.compute(Source(position: [3, 0, 0]), listener: facingX, world: SpatialWorld())
        assertRelative(ahead.direction.z, 1)
        XCTAssertEqual(ahead.pan, 0, accuracy: 1e-6)
        // Facing −z with up +y (the default), a source at +x is on the right.
        let right = Spatializer.compute(Source(position: [3, 0, 0]), listener: Listener(forward: [0, 0, -1], up: [0, 1, 0]),
                                        world: SpatialWorld())
        assertRelative(right.pan, 1)
        assertVector(right.direction, [1, 0, 0])
        // Facing +x with up +y, the right is at × up = (0, 0, 1): a source at +z is on the right.
        let onRight = Spatializer.compute(Source(position: [0, 0, 5]), listener: facingX, world: SpatialWorld())
        assertRelative(onRight.pan, 1)
        // Lying on its back (facing +y, up +z): a source above is ahead, the right is (0, 1, 0) × (0, 0, 1) = (1, 0, 0),
        // and +z is the listener's up.
        let lying = Listener(forward: [0, 1, 0], up: [0, 0, 1])
        assertVector(Spatializer.compute(Source(position: [0, 7, 0]), listener: lying, world: SpatialWorld()).direction, [0, 0, 1])
        assertVector(Spatializer.compute(Source(position: [2, 0, 0]), listener: lying, world: SpatialWorld()).direction, [1, 0, 0])
        assertVector(Spatializer.compute(Source(position: [0, 0, 4]), listener: lying, world: SpatialWorld()).direction, [0, 1, 0])
        // Turned 30° to the right of −z (towards +x), a source straight down −z is 30° to the left.
        let angle = Double.pi / 6
        let turned = Listener(forward: Vector3(Float(sin(angle)), 0, Float(-cos(angle))), up: [0, 1, 0])
        let left = Spatializer.compute(Source(position: [0, 0, -10]), listener: turned, world: SpatialWorld())
        assertVector(left.direction, [-sin(angle), 0, cos(angle)])
        // "At" and "up" need not be unit length or perpendicular.
        let sloppy = Listener(forward: [0, 0, -4], up: [0, 3, -1])
        assertVector(Spatializer.compute(Source(position: [3, 0, 0]), listener: sloppy, world: SpatialWorld()).direction, [1, 0, 0])
        assertVector(Spatializer.compute(Source(position: [0, 2, 0]), listener: sloppy, world: SpatialWorld()).direction, [0, 1, 0])
    }
}

extension Vector3 {
    init(_ v: SIMD3<Double>) { self.init(Float(v.x), Float(v.y), Float(v.z)) }
}
