// What HRTFVoice costs per frame and voice, optimised as a release build is: compile the two
// HRTF files with this one and run it (no SwiftPM target: it would build the whole package).
//
//     swiftc -O -wmo -module-name HRTFCost Sources/SFXCore/Spatial/HRTF*.swift Tests/Support/hrtf/cost/main.swift -o /tmp/hrtf-cost
//     /tmp/hrtf-cost [irLength]        # 128 by default, as SOFAFile loads at 48 kHz
//
// A synthetic table (the cost does not depend on the taps' values, only on their number and on
// the delays' range, here up to 44 frames), 48 kHz, blocks of 256 frames, 4 s of audio per run,
// the best of 5 runs in thread CPU time: "still" runs one filter per ear, "moving" turns the
// source every block, so every block crossfades two filters and interpolates two from the table.
import Foundation

func now() -> UInt64 { var t = timespec(); clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec) }
let args = CommandLine.arguments
let irLength = args.count > 1 ? Int(args[1])! : 128
var rng = SystemRandomNumberGenerator()
let table = HRTFTable(name: "cost", sampleRate: 48_000, irLength: irLength, azimuthStep: 5, elevations: -40...90, elevationStep: 10) { d, l, r in
    for k in 0..<irLength { l[k] = Float.random(in: -1...1, using: &rng) * exp(-Float(k) / 20); r[k] = Float.random(in: -1...1, using: &rng) * exp(-Float(k) / 20) }
    return (28 + 16 * max(0, d.x), 28 + 16 * max(0, -d.x))
}
let block = 256, seconds = 4, frames = 48_000 * seconds
let memory = UnsafeMutablePointer<Float>.allocate(capacity: HRTFVoice.memoryFloats(table: table, maximumFrames: 1024, rewindHeadroomFrames: 4096))
let scratch = UnsafeMutablePointer<Float>.allocate(capacity: HRTFVoice.scratchFloats(table: table, maximumFrames: 1024))
let input = (0..<block).map { _ in Float.random(in: -1...1, using: &rng) }
let output = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block); output.initialize(repeating: 0, count: 2 * block)
for moving in [false, true] {
    var best = Double.infinity
    for _ in 0..<5 {
        var voice = HRTFVoice()
        voice.reset(memory: memory, table: table, maximumFrames: 1024, rewindHeadroomFrames: 4096)
        let t0 = now()
        var b = 0
        for _ in 0..<(frames / block) {
            let a = moving ? Float(b) * 0.0335 : 0.7
            voice.render(input, frames: block, toward: [sin(a), 0.1, cos(a)], gain: 0.5, table: table, memory: memory, scratch: scratch, addingInto: output)
            b += 1
        }
        best = min(best, Double(now() - t0) / Double(frames))
    }
    print("irLength \(irLength) \(moving ? "moving (crossfade every block)" : "still (one filter)"): \(String(format: "%.1f", best)) ns per frame per voice (best of 5 × \(seconds) s at 48 kHz, blocks of \(block); output[0] \(output[0]), kept so the work is not optimised away)")
}
