#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a `Biquad` does to the spectrum.
public enum FilterKind: UInt8, Sendable, BitwiseCopyable, Hashable {
    /// Passes below the cutoff, −12 dB per octave above it.
    case lowPass
    /// Passes above the cutoff, −12 dB per octave below it.
    case highPass
    /// Passes around the centre (peak gain 0 dB before `gain`); bandwidth = centre / Q.
    case bandPass
    /// Unity below the cutoff, `gain` above it, √gain at the cutoff.
    case highShelf
}

/// The parameters of one biquad: kind, frequency, resonance (or slope) and gain.
public struct FilterSettings: Sendable, BitwiseCopyable, Hashable {
    /// What the filter does.
    public var kind: FilterKind
    /// Hz: corner (low/high-pass), centre (band-pass), shelf midpoint (high shelf).
    /// In range: 10 … 0.45 × sampleRate.
    public var cutoff: Float
    /// Resonance (RBJ's Q); 0.7071 is Butterworth. In range 0.1 … 30. For the high shelf: the
    /// shelf slope S (1 = steepest without overshoot), in range 0.1 … 1.
    public var q: Float
    /// Linear gain, 0 … 1: for pass filters the filtered path's overall gain (b scaled by it); for
    /// the high shelf the gain above the cutoff (e.g. air absorption), at least 10⁻⁶ in effect.
    public var gain: Float

    /// Settings as given (bring them into range with `clamped(sampleRate:)`; `Biquad` and
    /// `BiquadCoefficients` do so themselves).
    public init(kind: FilterKind, cutoff: Float, q: Float = 0.7071, gain: Float = 1) {
        self.kind = kind
        self.cutoff = cutoff
        self.q = q
        self.gain = gain
    }

    /// A low-pass at `cutoff` Hz (−3.01 dB there for the Butterworth Q), times `gain`.
    public static func lowPass(cutoff: Float, q: Float = 0.7071, gain: Float = 1) -> FilterSettings {
        FilterSettings(kind: .lowPass, cutoff: cutoff, q: q, gain: gain)
    }

    /// A high-pass at `cutoff` Hz (−3.01 dB there for the Butterworth Q), times `gain`.
    public static func highPass(cutoff: Float, q: Float = 0.7071, gain: Float = 1) -> FilterSettings {
        FilterSettings(kind: .highPass, cutoff: cutoff, q: q, gain: gain)
    }

    /// A band-pass centred on `centre` Hz with peak gain `gain` there.
    public static func bandPass(centre: Float, q: Float = 0.7071, gain: Float = 1) -> FilterSettings {
        FilterSettings(kind: .bandPass, cutoff: centre, q: q, gain: gain)
    }

    /// A high shelf: unity below `cutoff` Hz, `gain` (linear, 0 … 1) above it, √gain at it;
    /// `slope` is RBJ's S (1 = steepest without overshoot).
    public static func highShelf(cutoff: Float, gain: Float, slope: Float = 1) -> FilterSettings {
        FilterSettings(kind: .highShelf, cutoff: cutoff, q: slope, gain: gain)
    }

    /// Values brought into range: cutoff 10 Hz … 0.45 × sampleRate, q 0.1 … 30 (the shelf's
    /// slope 0.1 … 1), gain 0 … 1. NaN becomes a default: for the cutoff the value at which the
    /// kind changes the sound least (0.45 × sampleRate for a low-pass, 10 Hz for a high-pass,
    /// 1 kHz for a band-pass, 5 kHz for a shelf), 0.7071 for q (1 for the slope), 1 for gain.
    public func clamped(sampleRate: Int) -> FilterSettings {
        let top = Float(max(sampleRate, 1)) * 0.45
        let bottom = min(Float(10), top)
        var c = self
        if cutoff.isNaN {
            switch kind {
            case .lowPass: c.cutoff = top
            case .highPass: c.cutoff = bottom
            case .bandPass: c.cutoff = 1_000
            case .highShelf: c.cutoff = 5_000
            }
        }
        c.cutoff = min(max(c.cutoff, bottom), top)
        let qTop: Float = kind == .highShelf ? 1 : 30
        let qDefault: Float = kind == .highShelf ? 1 : 0.7071
        c.q = q.isNaN ? qDefault : min(max(q, 0.1), qTop)
        c.gain = gain.isNaN ? 1 : min(max(gain, 0), 1)
        return c
    }
}

/// Biquad coefficients, normalised by a0 (a0 = 1), from the RBJ Audio EQ Cookbook: LPF, HPF,
/// BPF (constant 0 dB peak gain) and highShelf (with S), as written in `Biquad`'s documentation. Held
/// and computed in Double: Float would move the poles of low cutoffs audibly (see `Biquad`).
public struct BiquadCoefficients: Sendable, BitwiseCopyable, Equatable {
    /// Feed-forward: y[n] = b0·x[n] + b1·x[n−1] + b2·x[n−2] − a1·y[n−1] − a2·y[n−2].
    public var b0, b1, b2: Double
    /// Feedback (a0 = 1 divided out).
    public var a1, a2: Double

    /// The coefficients of `settings` (brought into range first) at `sampleRate` Hz.
    public init(_ settings: FilterSettings, sampleRate: Int) {
        let s = settings.clamped(sampleRate: sampleRate)
        let w0 = 2 * Double.pi * Double(s.cutoff) / Double(max(sampleRate, 1))
        let cw = cos(w0)
        let sw = sin(w0)
        let g = Double(s.gain)
        var b0, b1, b2, a0, a1, a2: Double
        switch s.kind {
        case .lowPass, .highPass, .bandPass:
            let alpha = sw / (2 * Double(s.q))
            a0 = 1 + alpha
            a1 = -2 * cw
            a2 = 1 - alpha
            switch s.kind {
            case .lowPass:
                b1 = g * (1 - cw); b0 = b1 / 2; b2 = b0
            case .highPass:
                b0 = g * (1 + cw) / 2; b1 = -2 * b0; b2 = b0
            default:
                b0 = g * alpha; b1 = 0; b2 = -b0
            }
        case .highShelf:
            let A = max(g, 1e-6).squareRoot()
            let slope = Double(s.q)
            let alpha = sw / 2 * max((A + 1 / A) * (1 / slope - 1) + 2, 0).squareRoot()
            let k = 2 * A.squareRoot() * alpha
            b0 = A * ((A + 1) + (A - 1) * cw + k)
            b1 = -2 * A * ((A - 1) + (A + 1) * cw)
            b2 = A * ((A + 1) + (A - 1) * cw - k)
            a0 = (A + 1) - (A - 1) * cw + k
            a1 = 2 * ((A - 1) - (A + 1) * cw)
            a2 = (A + 1) - (A - 1) * cw - k
        }
        self.b0 = b0 / a0
        self.b1 = b1 / a0
        self.b2 = b2 / a0
        self.a1 = a1 / a0
        self.a2 = a2 / a0
    }

    /// |H(e^{iw})| at `frequency` Hz: the gain a steady sine of that frequency gets.
    public func magnitude(at frequency: Double, sampleRate: Int) -> Double {
        let w = 2 * Double.pi * frequency / Double(sampleRate)
        let (c1, s1, c2, s2) = (cos(w), sin(w), cos(2 * w), sin(2 * w))
        let nr = b0 + b1 * c1 + b2 * c2, ni = -(b1 * s1 + b2 * s2)
        let dr = 1 + a1 * c1 + a2 * c2, di = -(a1 * s1 + a2 * s2)
        return ((nr * nr + ni * ni) / (dr * dr + di * di)).squareRoot()
    }
}

/// Second-order (biquad) filters for voices and groups: low-pass, high-pass, band-pass and a high
/// shelf, with coefficients from Robert Bristow-Johnson's Audio EQ Cookbook, whose parameters
/// glide so that a change never clicks.
///
/// ```swift
/// var filter = Biquad(.lowPass(cutoff: 800), sampleRate: 48_000, smoothingFrames: 240)
/// filter.process(block, frames: 256, channels: 2)          // on the real-time thread
/// filter.set(.lowPass(cutoff: 8_000, q: 2))                  // glides over 240 frames
/// ```
///
/// ## The filters (RBJ's cookbook, normalised so that a0 = 1)
/// With w0 = 2π·cutoff / sampleRate, α = sin(w0) / (2Q), c = cos(w0) and g the linear gain:
/// - **Low-pass**: b = g·((1−c)/2, 1−c, (1−c)/2), a = (1+α, −2c, 1−α). DC passes at g; at the
///   cutoff the gain is g·Q (−3.01 dB for Q = 0.7071, Butterworth).
/// - **High-pass**: b = g·((1+c)/2, −(1+c), (1+c)/2), a as the low-pass. DC is blocked; the
///   Nyquist frequency passes at g; at the cutoff the gain is g·Q.
/// - **Band-pass** (constant 0 dB peak): b = g·(α, 0, −α), a as the low-pass. The centre passes
///   at g; DC and Nyquist are blocked; Q is centre / bandwidth.
/// - **High shelf** (slope S in `q`): with A = √g and α = sin(w0)/2·√((A + 1/A)(1/S − 1) + 2),
///   b = (A((A+1) + (A−1)c + 2√A·α), −2A((A−1) + (A+1)c), A((A+1) + (A−1)c − 2√A·α)),
///   a = ((A+1) − (A−1)c + 2√A·α, 2((A−1) − (A+1)c), (A+1) − (A−1)c − 2√A·α).
///   DC passes at 1, Nyquist at g, the cutoff (the shelf's midpoint) at A = √g. The shelf gain is
///   at least 10⁻⁶ (−120 dB, so √g ≥ 10⁻³: OpenAL Soft's −60 dB at the midpoint).
///
/// ## Ranges
/// `FilterSettings.clamped(sampleRate:)` brings every value into range before coefficients are
/// computed: cutoff 10 Hz … 0.45 × sampleRate, Q 0.1 … 30 (the shelf's slope 0.1 … 1, where the
/// cookbook's square root stays real and the shelf stays monotonic), gain 0 … 1. NaN becomes the
/// value that changes the sound least: for the cutoff the top of the range (low-pass), the bottom
/// (high-pass), 1 kHz (band-pass) or 5 kHz (high shelf); 0.7071 for Q, 1 for the slope and gain.
///
/// ## Processing
/// Direct form I in Double: y[n] = b0·x[n] + b1·x[n−1] + b2·x[n−2] − a1·y[n−1] − a2·y[n−2], one
/// history per channel, samples read and written as Float in place. Double keeps the filters
/// exact where Float is not (a 100 Hz low-pass at 48 kHz has 1 + a1 + a2 ≈ 1.7·10⁻⁴, which Float
/// coefficients would get wrong by parts in 10⁴); the output matches `scipy.signal.lfilter` in
/// float64 to 10⁻⁵. A history whose outputs fell below 10⁻²⁹⁰ is set to zero at the end of a
/// call, so silence never reaches Double's subnormals (slow on x86) and the output, in Float, is
/// unchanged by it.
///
/// ## Gliding
/// `set` to new settings of the same kind glides the *parameters* over `smoothingFrames`, from
/// `current` (a change in the middle of a glide starts where the filter is, and its first
/// stretch starts from the coefficients in use, so nothing jumps): at frame k of L = `smoothingFrames`, cutoff = from·(to/from)^(k/L) (straight in
/// log-frequency), Q and gain = from + (to − from)·k/L. Coefficients are computed from the
/// parameters once per 16 frames of the glide: at the start of each stretch s = 0, 16, 32 …
/// those of k = min(s + 16, L); within the stretch each frame's coefficients are the straight
/// line from those in use when the stretch began to those (frame j of a stretch of n gets
/// from + (to − from)·j/n), so the filter changes a little every frame instead of stepping every
/// 16 (a gain glide would otherwise zip). Every filter in between is stable: a1 and a2 move in a
/// straight line inside the stability triangle (|a2| < 1, |a1| < 1 + a2), which is convex. The last
/// stretch ends at the target itself, so after exactly L frames the coefficients are those of
/// the target and `isGliding` is false. The stretches are counted from the `set`, not from the
/// start of a `process` call, so the output does not depend on how the frames are split into
/// calls. A settled filter never recomputes its coefficients.
///
/// A change of kind (low-pass to high-pass, say) cannot be glided in parameters; instead the old
/// filter, frozen at the coefficients it had, keeps running beside the new one (at the target,
/// history starting from zero) and the output crossfades linearly from old to new over
/// `smoothingFrames`: frame k is (1 − k/L)·old + (k/L)·new. A further change of kind during that
/// crossfade drops the filter fading out and starts a new crossfade from the one fading in. With
/// `smoothingFrames` = 0 every change takes effect at once, history kept.
///
/// ## Real time and rewind
/// `Biquad` is plain data (BitwiseCopyable, no pointers, no references): it can live inside a
/// mixer voice slot and be memcpy'd into a rewind snapshot; restoring a copy and processing the
/// same input again gives bit-identical output. `process`, `set` and `reset` never allocate,
/// lock, log or retain; `set` and the glide call sin, cos, pow and square roots, nothing else.
public struct Biquad: Sendable, BitwiseCopyable {
    /// One channel's direct-form-I memory.
    struct History: Sendable, BitwiseCopyable, Equatable {
        var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0

        /// Zeroes outputs too small to matter before they become subnormal.
        @inline(__always)
        mutating func flushTiny() {
            if abs(y1) < 1e-290 && abs(y2) < 1e-290 { y1 = 0; y2 = 0 }
        }
    }

    /// Frames per coefficient update during a glide.
    static let updateInterval = 16

    /// Hz.
    public let sampleRate: Int
    /// Frames over which a change glides (0: changes take effect at once).
    public let smoothingFrames: Int
    /// The target, in range (`clamped(sampleRate:)` of what was last given).
    public private(set) var settings: FilterSettings
    /// The parameters the current 16-frame stretch of a glide ends at: `settings` once settled.
    public private(set) var current: FilterSettings
    /// The coefficients of `current`: those in use once settled, and those the current stretch
    /// of a glide ends at.
    public private(set) var coefficients: BiquadCoefficients

    /// Where the parameter glide started, and how far it has come (length 0: not gliding).
    private var glideFrom: FilterSettings
    private var glideElapsed = 0
    private var glideLength = 0
    /// The coefficients the current stretch started from (those in use when it began).
    private var stretchFrom: BiquadCoefficients

    /// The filter fading out after a change of kind, and how far the crossfade has come.
    private var fadeCoefficients: BiquadCoefficients
    private var fadeElapsed = 0
    private var fadeLength = 0

    private var left = History()
    private var right = History()
    /// The outputs of the filter fading out (its inputs are the same as the main filter's).
    private var fadeLeft = History()
    private var fadeRight = History()

    /// How many times coefficients were computed since `init` (for tests of the cost).
    internal private(set) var coefficientComputations = 0

    /// A filter settled at `settings` (brought into range), history zero.
    public init(_ settings: FilterSettings, sampleRate: Int, smoothingFrames: Int) {
        self.sampleRate = max(sampleRate, 1)
        self.smoothingFrames = max(smoothingFrames, 0)
        let s = settings.clamped(sampleRate: self.sampleRate)
        self.settings = s
        current = s
        glideFrom = s
        coefficients = BiquadCoefficients(s, sampleRate: self.sampleRate)
        stretchFrom = coefficients
        fadeCoefficients = coefficients
    }

    /// True while parameters glide or a change of kind crossfades.
    public var isGliding: Bool { glideLength > 0 || fadeLength > 0 }

    /// Frames until the glide and the crossfade are both over (0 when settled).
    public var framesUntilSettled: Int {
        max(glideLength > 0 ? glideLength - glideElapsed : 0, fadeLength > 0 ? fadeLength - fadeElapsed : 0)
    }

    /// Glides to `settings` (brought into range) over `smoothingFrames`, from where the filter
    /// is now; settings equal to the target change nothing. A new kind crossfades instead.
    public mutating func set(_ settings: FilterSettings) {
        let target = settings.clamped(sampleRate: sampleRate)
        guard target != self.settings else { return }
        self.settings = target
        if smoothingFrames == 0 {
            current = target
            updateCoefficients(target)
            stretchFrom = coefficients
            glideLength = 0
            fadeLength = 0
            return
        }
        let inUse = coefficientsInUse
        if target.kind != current.kind {
            fadeCoefficients = inUse
            fadeLeft = left
            fadeRight = right
            left.y1 = 0; left.y2 = 0
            right.y1 = 0; right.y2 = 0
            fadeElapsed = 0
            fadeLength = smoothingFrames
            current = target
            glideLength = 0
            glideElapsed = 0
            updateCoefficients(target)
            stretchFrom = coefficients
        } else {
            glideFrom = current
            stretchFrom = inUse
            glideElapsed = 0
            glideLength = smoothingFrames
        }
    }

    /// History to zero (e.g. a voice that was virtual becomes audible); glides go on.
    public mutating func reset() {
        left = History()
        right = History()
        fadeLeft = History()
        fadeRight = History()
    }

    /// Filters `frames` interleaved frames of `channels` (1 or 2) samples in place; 0 frames does
    /// nothing. Channels beyond the second are left as they are.
    public mutating func process(_ samples: UnsafeMutablePointer<Float>, frames: Int, channels: Int) {
        guard frames > 0, channels > 0 else { return }
        var done = 0
        while done < frames {
            let block = samples + done * channels
            if glideLength == 0 && fadeLength == 0 {
                if channels == 1 {
                    Self.mono(block, frames: frames - done, from: coefficients, to: coefficients, into: 0, of: 0, &left)
                } else {
                    Self.stereo(block, frames: frames - done, stride: channels, from: coefficients, to: coefficients,
                                into: 0, of: 0, &left, &right)
                }
                break
            }
            var n = frames - done
            if glideLength > 0 {
                let stretchStart = glideElapsed / Self.updateInterval * Self.updateInterval
                if glideElapsed == stretchStart {
                    if glideElapsed > 0 { stretchFrom = coefficients }
                    let k = min(stretchStart + Self.updateInterval, glideLength)
                    current = k == glideLength ? settings : interpolated(at: k)
                    updateCoefficients(current)
                }
                n = min(n, min(stretchStart + Self.updateInterval, glideLength) - glideElapsed)
            }
            if fadeLength > 0 {
                n = min(n, fadeLength - fadeElapsed)
            }
            if fadeLength > 0 {
                crossfading(block, frames: n, channels: channels)
            } else {
                let (start, length) = stretch
                if channels == 1 {
                    Self.mono(block, frames: n, from: stretchFrom, to: coefficients, into: glideElapsed - start,
                              of: length, &left)
                } else {
                    Self.stereo(block, frames: n, stride: channels, from: stretchFrom, to: coefficients,
                                into: glideElapsed - start, of: length, &left, &right)
                }
            }
            if fadeLength > 0 {
                fadeElapsed += n
                if fadeElapsed >= fadeLength { fadeLength = 0; fadeElapsed = 0 }
            }
            if glideLength > 0 {
                glideElapsed += n
                if glideElapsed >= glideLength {
                    glideLength = 0
                    glideElapsed = 0
                    stretchFrom = coefficients
                }
            }
            done += n
        }
        left.flushTiny()
        right.flushTiny()
        fadeLeft.flushTiny()
        fadeRight.flushTiny()
    }

    /// Where the current stretch of the glide starts and how long it is (frames of the glide).
    private var stretch: (start: Int, length: Int) {
        let start = glideElapsed / Self.updateInterval * Self.updateInterval
        return (start, min(start + Self.updateInterval, glideLength) - start)
    }

    /// The coefficients of the frame just processed.
    private var coefficientsInUse: BiquadCoefficients {
        guard glideLength > 0 else { return coefficients }
        let (start, length) = stretch
        guard glideElapsed > start else { return glideElapsed == 0 ? stretchFrom : coefficients }
        return Self.between(stretchFrom, coefficients, Double(glideElapsed - start) / Double(length))
    }

    @inline(__always)
    private static func between(_ a: BiquadCoefficients, _ b: BiquadCoefficients, _ t: Double) -> BiquadCoefficients {
        var c = a
        c.b0 += (b.b0 - a.b0) * t
        c.b1 += (b.b1 - a.b1) * t
        c.b2 += (b.b2 - a.b2) * t
        c.a1 += (b.a1 - a.a1) * t
        c.a2 += (b.a2 - a.a2) * t
        return c
    }

    /// The parameters at frame k of the glide (0 < k < glideLength).
    private func interpolated(at k: Int) -> FilterSettings {
        let t = Double(k) / Double(glideLength)
        let from = glideFrom, to = settings
        var s = to
        s.cutoff = Float(Double(from.cutoff) * pow(Double(to.cutoff) / Double(from.cutoff), t))
        s.q = Float(Double(from.q) + (Double(to.q) - Double(from.q)) * t)
        s.gain = Float(Double(from.gain) + (Double(to.gain) - Double(from.gain)) * t)
        return s
    }

    private mutating func updateCoefficients(_ s: FilterSettings) {
        coefficients = BiquadCoefficients(s, sampleRate: sampleRate)
        coefficientComputations &+= 1
    }

    // The kernels. The feedback term a1·y[n−1] comes last, so that the chain from one output to
    // the next is one multiply and one subtraction. With `of` > 0 (a glide) the coefficients of
    // frame j = into + i + 1 of the stretch are from + (to − from)·j/of, as `between` computes
    // them; with `of` = 0 they are `to` throughout (settled). Called with a constant `of` = 0
    // for the settled path, which the compiler specialises into a loop without the glide.

    @inline(__always)
    private static func mono(_ p: UnsafeMutablePointer<Float>, frames: Int, from: BiquadCoefficients,
                             to c: BiquadCoefficients, into: Int, of length: Int, _ h: inout History) {
        var (b0, b1, b2, a1, a2) = (c.b0, c.b1, c.b2, c.a1, c.a2)
        let (d0, d1, d2, e1, e2) = (c.b0 - from.b0, c.b1 - from.b1, c.b2 - from.b2, c.a1 - from.a1, c.a2 - from.a2)
        var (x1, x2, y1, y2) = (h.x1, h.x2, h.y1, h.y2)
        for i in 0..<frames {
            if length > 0 {
                let t = Double(into + i + 1) / Double(length)
                b0 = from.b0 + d0 * t; b1 = from.b1 + d1 * t; b2 = from.b2 + d2 * t
                a1 = from.a1 + e1 * t; a2 = from.a2 + e2 * t
            }
            let x = Double(p[i])
            let y = (b0 * x + b1 * x1 + b2 * x2 - a2 * y2) - a1 * y1
            x2 = x1; x1 = x
            y2 = y1; y1 = y
            p[i] = Float(y)
        }
        h = History(x1: x1, x2: x2, y1: y1, y2: y2)
    }

    @inline(__always)
    private static func stereo(_ p: UnsafeMutablePointer<Float>, frames: Int, stride: Int, from: BiquadCoefficients,
                               to c: BiquadCoefficients, into: Int, of length: Int,
                               _ l: inout History, _ r: inout History) {
        var (b0, b1, b2, a1, a2) = (c.b0, c.b1, c.b2, c.a1, c.a2)
        let (d0, d1, d2, e1, e2) = (c.b0 - from.b0, c.b1 - from.b1, c.b2 - from.b2, c.a1 - from.a1, c.a2 - from.a2)
        var (lx1, lx2, ly1, ly2) = (l.x1, l.x2, l.y1, l.y2)
        var (rx1, rx2, ry1, ry2) = (r.x1, r.x2, r.y1, r.y2)
        var q = p
        for i in 0..<frames {
            if length > 0 {
                let t = Double(into + i + 1) / Double(length)
                b0 = from.b0 + d0 * t; b1 = from.b1 + d1 * t; b2 = from.b2 + d2 * t
                a1 = from.a1 + e1 * t; a2 = from.a2 + e2 * t
            }
            let xl = Double(q[0]), xr = Double(q[1])
            let yl = (b0 * xl + b1 * lx1 + b2 * lx2 - a2 * ly2) - a1 * ly1
            let yr = (b0 * xr + b1 * rx1 + b2 * rx2 - a2 * ry2) - a1 * ry1
            lx2 = lx1; lx1 = xl; ly2 = ly1; ly1 = yl
            rx2 = rx1; rx1 = xr; ry2 = ry1; ry1 = yr
            q[0] = Float(yl)
            q[1] = Float(yr)
            q += stride
        }
        l = History(x1: lx1, x2: lx2, y1: ly1, y2: ly2)
        r = History(x1: rx1, x2: rx2, y1: ry1, y2: ry2)
    }

    /// The slow path, for frames of a crossfade after a change of kind (never past its end, nor
    /// past the end of the current stretch of a glide): the output is (1 − w)·old + w·new, w = k/L
    /// at frame k of it, and the new filter's coefficients glide as in the kernels.
    private mutating func crossfading(_ p: UnsafeMutablePointer<Float>, frames: Int, channels: Int) {
        let gliding = glideLength > 0
        let (start, length) = gliding ? stretch : (0, 1)
        let into = glideElapsed - start
        let from = stretchFrom, to = coefficients, old = fadeCoefficients
        let fading = fadeLength > 0
        let fadeLength = Double(self.fadeLength)
        let used = min(channels, 2)
        for i in 0..<frames {
            let c = gliding ? Self.between(from, to, Double(into + i + 1) / Double(length)) : to
            let w = fading ? Double(fadeElapsed + i + 1) / fadeLength : 1
            for ch in 0..<used {
                let x = Double(p[i * channels + ch])
                var h = ch == 0 ? left : right
                let y = (c.b0 * x + c.b1 * h.x1 + c.b2 * h.x2 - c.a2 * h.y2) - c.a1 * h.y1
                var out = y
                if fading {
                    var f = ch == 0 ? fadeLeft : fadeRight
                    let z = (old.b0 * x + old.b1 * h.x1 + old.b2 * h.x2 - old.a2 * f.y2) - old.a1 * f.y1
                    f.y2 = f.y1; f.y1 = z
                    if ch == 0 { fadeLeft = f } else { fadeRight = f }
                    out = (1 - w) * z + w * y
                }
                h.x2 = h.x1; h.x1 = x; h.y2 = h.y1; h.y1 = y
                if ch == 0 { left = h } else { right = h }
                p[i * channels + ch] = Float(out)
            }
        }
    }
}
