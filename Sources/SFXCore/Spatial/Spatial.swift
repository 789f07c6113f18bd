import Glibc

/// A point or a velocity in the game's world, in its units (metres unless
/// `SpatialWorld.metersPerUnit` says otherwise). The axes are OpenAL's: x to the right, y up,
/// and −z ahead of a listener that has not turned.
public typealias Vector3 = SIMD3<Float>

/// Where the sound is heard from: the game's camera or player.
///
/// `forward` and `up` are OpenAL's "at" and "up" vectors; they need not be unit length or
/// exactly perpendicular (up is made perpendicular to forward), but must not be zero or parallel
/// (such a listener keeps facing −z). `gain` multiplies every positional voice (OpenAL's
/// `AL_GAIN` of the listener).
public struct Listener: Sendable, BitwiseCopyable, Hashable {
    public var position: Vector3
    public var velocity: Vector3
    public var forward: Vector3
    public var up: Vector3
    public var gain: Float

    public init(position: Vector3 = .zero, velocity: Vector3 = .zero, forward: Vector3 = Vector3(0, 0, -1),
                up: Vector3 = Vector3(0, 1, 0), gain: Float = 1) {
        self.position = position
        self.velocity = velocity
        self.forward = forward
        self.up = up
        self.gain = gain
    }
}

/// What the whole world shares: OpenAL's `AL_DOPPLER_FACTOR` and `AL_SPEED_OF_SOUND`, and how
/// long one unit is (for air absorption, which is specified per metre).
public struct SpatialWorld: Sendable, BitwiseCopyable, Hashable {
    /// 0 turns doppler off; 1 is physical; more exaggerates it.
    public var dopplerFactor: Float
    /// In units per second; 343.3 is sound in air when a unit is a metre.
    public var speedOfSound: Float
    public var metersPerUnit: Float

    public init(dopplerFactor: Float = 1, speedOfSound: Float = 343.3, metersPerUnit: Float = 1) {
        self.dopplerFactor = dopplerFactor
        self.speedOfSound = speedOfSound
        self.metersPerUnit = metersPerUnit
    }
}

/// How a source's level falls with its distance from the listener: the OpenAL 1.1
/// specification's models (§3.4), by its formulas, with d the distance, d₀ the reference
/// distance, d₁ the maximum distance and r the rolloff factor:
///
/// | model | gain |
/// |---|---|
/// | `none` | 1 |
/// | `inverse` | d₀ / (d₀ + r·(d − d₀)) |
/// | `linear` | 1 − r·(d − d₀) / (d₁ − d₀), with d = min(d, d₁) |
/// | `exponent` | (d / d₀)^(−r) |
///
/// The clamped models first clamp d to d₀…d₁ (so a source nearer than d₀ is not louder than at
/// d₀, and attenuation stops at d₁). The gain is then kept within 0…1 as OpenAL keeps it within
/// the source's minimum and maximum gain (0 and 1 by default). Where a formula divides by zero
/// (d₀ = 0, or d₁ = d₀ for a linear model) the gain is 1 if d ≤ d₀ and the formula's limit otherwise.
public enum DistanceModel: UInt8, Sendable, BitwiseCopyable, Hashable, CaseIterable {
    case none, inverse, inverseClamped, linear, linearClamped, exponent, exponentClamped

    /// The gain at `distance` for a source with these parameters.
    public func gain(distance: Float, referenceDistance d0: Float, maximumDistance d1: Float, rolloffFactor r: Float) -> Float {
        var d = distance
        switch self {
        case .inverseClamped, .linearClamped, .exponentClamped:
            d = min(max(d, d0), d1)
        case .linear:
            d = min(d, d1)
        case .none, .inverse, .exponent:
            break
        }
        let gain: Float
        switch self {
        case .none:
            gain = 1
        case .inverse, .inverseClamped:
            let denominator = d0 + r * (d - d0)
            gain = denominator > 0 ? d0 / denominator : 1
        case .linear, .linearClamped:
            gain = d1 > d0 ? 1 - r * (d - d0) / (d1 - d0) : (d <= d0 ? 1 : 0)
        case .exponent, .exponentClamped:
            gain = d0 > 0 && d > 0 ? pow(d / d0, -r) : 1
        }
        return gain.isNaN ? 0 : min(max(gain, 0), 1)
    }

    /// The C API's and the protocol's names: "none", "inverse", "inverse-clamped", …
    public var name: String {
        switch self {
        case .none: "none"
        case .inverse: "inverse"
        case .inverseClamped: "inverse-clamped"
        case .linear: "linear"
        case .linearClamped: "linear-clamped"
        case .exponent: "exponent"
        case .exponentClamped: "exponent-clamped"
        }
    }
}

/// A directional source's cone (OpenAL's `AL_CONE_INNER_ANGLE`, `AL_CONE_OUTER_ANGLE`,
/// `AL_CONE_OUTER_GAIN`): full level within half the inner angle of the source's direction,
/// `outerGain` beyond half the outer angle, and a straight line in angle between the two
/// (OpenAL 1.1 §3.4.4). Angles in degrees, 0…360; 360 and 360 (the default) is no cone.
public struct Cone: Sendable, BitwiseCopyable, Hashable {
    public var innerAngle: Float
    public var outerAngle: Float
    public var outerGain: Float

    public init(innerAngle: Float = 360, outerAngle: Float = 360, outerGain: Float = 0) {
        self.innerAngle = innerAngle
        self.outerAngle = outerAngle
        self.outerGain = outerGain
    }

    /// The gain for a listener `angle` degrees off the source's direction (0…180).
    public func gain(atAngle angle: Float) -> Float {
        let inner = min(max(innerAngle, 0), 360) / 2
        let outer = max(min(max(outerAngle, 0), 360) / 2, inner)
        let outside = min(max(outerGain, 0), 1)
        if angle <= inner { return 1 }
        if angle >= outer { return outside }
        return 1 + (outside - 1) * (angle - inner) / (outer - inner)
    }
}

/// A positional voice's place in the world and how it carries: OpenAL's source properties.
public struct Source: Sendable, BitwiseCopyable, Hashable {
    public var position: Vector3
    public var velocity: Vector3
    /// The direction the source faces, for its cone; zero (the default) radiates equally everywhere.
    public var direction: Vector3
    /// Position, velocity and direction are in the listener's own frame (x right, y up, −z
    /// ahead) and follow it, as OpenAL's `AL_SOURCE_RELATIVE`: for sounds of the player or the UI.
    public var relative: Bool
    public var distanceModel: DistanceModel
    public var referenceDistance: Float
    public var maximumDistance: Float
    public var rolloffFactor: Float
    public var cone: Cone
    /// OpenAL's `AL_AIR_ABSORPTION_FACTOR`, 0…10: 0 (the default) is none, 1 is air at
    /// −0.05 dB per metre at 5 kHz.
    public var airAbsorptionFactor: Float

    public init(position: Vector3 = .zero, velocity: Vector3 = .zero, direction: Vector3 = .zero,
                relative: Bool = false, distanceModel: DistanceModel = .inverseClamped,
                referenceDistance: Float = 1, maximumDistance: Float = .greatestFiniteMagnitude,
                rolloffFactor: Float = 1, cone: Cone = Cone(), airAbsorptionFactor: Float = 0) {
        self.position = position
        self.velocity = velocity
        self.direction = direction
        self.relative = relative
        self.distanceModel = distanceModel
        self.referenceDistance = referenceDistance
        self.maximumDistance = maximumDistance
        self.rolloffFactor = rolloffFactor
        self.cone = cone
        self.airAbsorptionFactor = airAbsorptionFactor
    }

    /// Values brought into range: NaN and infinite positions to the origin, distances ≥ 0
    /// (the maximum at least the reference), rolloff ≥ 0, air absorption 0…10.
    public var clamped: Source {
        func finite(_ v: Vector3) -> Vector3 { v.x.isFinite && v.y.isFinite && v.z.isFinite ? v : .zero }
        var s = self
        s.position = finite(position)
        s.velocity = finite(velocity)
        s.direction = finite(direction)
        s.referenceDistance = referenceDistance.isNaN ? 1 : max(referenceDistance, 0)
        s.maximumDistance = maximumDistance.isNaN ? .greatestFiniteMagnitude : max(maximumDistance, s.referenceDistance)
        s.rolloffFactor = rolloffFactor.isNaN ? 1 : max(rolloffFactor, 0)
        s.airAbsorptionFactor = airAbsorptionFactor.isNaN ? 0 : min(max(airAbsorptionFactor, 0), 10)
        return s
    }
}

/// What a source sounds like from where the listener is: the result of `Spatializer.compute`.
public struct SpatialResult: Sendable, BitwiseCopyable, Hashable {
    /// Distance attenuation × cone gain, 0…1 (the listener's gain not included).
    public var gain: Float
    /// The doppler shift: the factor by which the source's pitch (and rate) is multiplied.
    public var pitch: Float
    /// Unit vector from the listener towards the source in the listener's head: x to the
    /// right, y up, z ahead. Zero when the source is at the listener.
    public var direction: Vector3
    public var distance: Float
    /// The equal-power stereo pan for `direction`: its rightward component, −1…1.
    public var pan: Float { min(max(direction.x, -1), 1) }
}

/// The OpenAL 1.1 specification's source computations, as pure functions.
public enum Spatializer {
    /// Gain, doppler pitch and head-relative direction of `source` for `listener` in `world`.
    ///
    /// Doppler follows §3.5.2: with SL the vector from source to listener, the listener's and the
    /// source's speeds along it, vls = LV·SL/|SL| and vss = SV·SL/|SL|, are each clamped to at
    /// most SS/DF, and f′ = f·(SS − DF·vls)/(SS − DF·vss). A relative source ignores the
    /// listener's velocity (both are in the listener's frame). The pitch is kept within 1/4…4.
    public static func compute(_ source: Source, listener: Listener, world: SpatialWorld) -> SpatialResult {
        compute(source, listener: listener, frame: frame(of: listener), world: world)
    }

    /// `compute` with the listener's `frame(of:)` worked out once for many sources.
    @inline(__always)
    static func compute(_ source: Source, listener: Listener, frame: (right: Vector3, up: Vector3, ahead: Vector3),
                        world: SpatialWorld) -> SpatialResult {
        let (right, up, ahead) = frame
        // Everything in the listener's head: x right, y up, z ahead.
        let offset: Vector3
        let sourceVelocity: Vector3
        let listenerVelocity: Vector3
        let coneAxis: Vector3
        if source.relative {
            offset = Vector3(source.position.x, source.position.y, -source.position.z)
            sourceVelocity = Vector3(source.velocity.x, source.velocity.y, -source.velocity.z)
            listenerVelocity = .zero
            coneAxis = Vector3(source.direction.x, source.direction.y, -source.direction.z)
        } else {
            func head(_ v: Vector3) -> Vector3 { Vector3(dot(v, right), dot(v, up), dot(v, ahead)) }
            offset = head(source.position - listener.position)
            sourceVelocity = head(source.velocity)
            listenerVelocity = head(listener.velocity)
            coneAxis = head(source.direction)
        }
        let distance = length(offset)
        let direction = distance > 0 ? offset / distance : .zero

        var gain = source.distanceModel.gain(distance: distance, referenceDistance: source.referenceDistance,
                                             maximumDistance: source.maximumDistance, rolloffFactor: source.rolloffFactor)
        let axisLength = length(coneAxis)
        if axisLength > 0 && distance > 0 {
            // The angle between the source's direction and the way to the listener (−offset).
            let cosine = min(max(dot(coneAxis / axisLength, -direction), -1), 1)
            gain *= source.cone.gain(atAngle: acos(cosine) * 180 / .pi)
        }

        var pitch: Float = 1
        let factor = world.dopplerFactor, speed = world.speedOfSound
        if factor > 0, speed > 0, distance > 0 {
            let towardsListener = -direction
            let limit = speed / factor
            let vls = min(dot(listenerVelocity, towardsListener), limit)
            let vss = min(dot(sourceVelocity, towardsListener), limit)
            let denominator = speed - factor * vss
            pitch = denominator > 0 ? (speed - factor * vls) / denominator : 4
            pitch = pitch.isNaN ? 1 : min(max(pitch, 0.25), 4)
        }
        return SpatialResult(gain: gain, pitch: pitch, direction: direction, distance: distance)
    }

    /// The listener's right, up and ahead unit vectors in world coordinates (OpenAL's "at" is
    /// ahead; up is made perpendicular to it). A degenerate orientation faces −z.
    public static func frame(of listener: Listener) -> (right: Vector3, up: Vector3, ahead: Vector3) {
        var ahead = listener.forward
        var right = cross(ahead, listener.up)
        if !(length(ahead) > 0) || !(length(right) > 0) {
            ahead = Vector3(0, 0, -1)
            right = Vector3(1, 0, 0)
        }
        ahead /= length(ahead)
        right /= length(right)
        return (right, cross(right, ahead), ahead)
    }

    @inline(__always) static func dot(_ a: Vector3, _ b: Vector3) -> Float { (a * b).sum() }
    @inline(__always) static func length(_ a: Vector3) -> Float { dot(a, a).squareRoot() }
    @inline(__always) static func cross(_ a: Vector3, _ b: Vector3) -> Vector3 {
        Vector3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
    }
}
