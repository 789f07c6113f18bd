import Foundation
import SFXSoundDesign

/// The whole theme rendered once and shared by every test (rendering takes a few seconds).
let renderedTheme = SystemSoundTheme()

/// The repository's committed `Sounds/` folder, found from this file's location.
let committedSounds = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()   // SFXSoundDesignTests
    .deletingLastPathComponent()   // Tests
    .deletingLastPathComponent()   // the repository
    .appendingPathComponent("Sounds")

/// Linear level of a dBFS value.
func amplitude(dBFS: Double) -> Double { pow(10, dBFS / 20) }

/// The power spectrum of `samples` (zero-padded to a power of two): `power[k]` is the energy at
/// `k * sampleRate / power.count / 2` hertz. A plain iterative radix-2 FFT.
func powerSpectrum(_ samples: [Float]) -> [Double] {
    var n = 1
    while n < samples.count { n *= 2 }
    var re = samples.map(Double.init) + Array(repeating: 0, count: n - samples.count)
    var im = Array(repeating: 0.0, count: n)
    var j = 0
    for i in 1..<n {                        // bit-reversal permutation
        var bit = n >> 1
        while j & bit != 0 { j ^= bit; bit >>= 1 }
        j |= bit
        if i < j { re.swapAt(i, j); im.swapAt(i, j) }
    }
    var length = 2
    while length <= n {
        let angle = -2 * Double.pi / Double(length)
        for start in stride(from: 0, to: n, by: length) {
            for k in 0..<length / 2 {
                let (wr, wi) = (cos(angle * Double(k)), sin(angle * Double(k)))
                let (a, b) = (start + k, start + k + length / 2)
                let tr = re[b] * wr - im[b] * wi
                let ti = re[b] * wi + im[b] * wr
                (re[b], im[b]) = (re[a] - tr, im[a] - ti)
                (re[a], im[a]) = (re[a] + tr, im[a] + ti)
            }
        }
        length *= 2
    }
    return (0...n / 2).map { re[$0] * re[$0] + im[$0] * im[$0] }
}

/// The 16-bit samples of a canonical WAV file's data.
func pcm16(_ wav: [UInt8]) -> [Int16] {
    stride(from: 44, to: wav.count - 1, by: 2).map { Int16(bitPattern: UInt16(wav[$0]) | UInt16(wav[$0 + 1]) << 8) }
}
