// HRTFTable and HRTFVoice against their laws, on synthetic tables whose every tap and delay is a
// formula of the direction (the real file's numbers are SFXMediaTests/SOFAFileTests' business).
// Expected samples are computed in Double from the laws in HRTFVoice.swift, without calling the
// renderer, and compared within 1e-5; two renders are compared bit for bit.
import Foundation
import XCTest
@testable import SFXCore

/// Renders mono `input` through a fresh voice in blocks of `block` frames, block b heading
/// `direction(b)` with gain `gain(b)`; returns the interleaved stereo output.
func renderHRTF(_ table: HRTFTable, _ input: [Float], block: Int, maximumFrames: Int = 1024, headroom: Int = 0,
                direction: (Int) -> SIMD3<Float>, gain: (Int) -> Float = { _ in 1 }) -> [Float] {
    let memory = UnsafeMutablePointer<Float>.allocate(capacity: HRTFVoice.memoryFloats(table: table, maximumFrames: maximumFrames, rewindHeadroomFrames: headroom))
    let scratch = UnsafeMutablePointer<Float>.allocate(capacity: HRTFVoice.scratchFloats(table: table, maximumFrames: maximumFrames))
    defer { memory.deallocate(); scratch.deallocate() }
    var voice = HRTFVoice()
    voice.reset(memory: memory, table: table, maximumFrames: maximumFrames, rewindHeadroomFrames: headroom)
    var output = [Float](repeating: 0, count: 2 * input.count)
    var start = 0, b = 0
    while start < input.count {
        let count = min(block, input.count - start)
        input.withUnsafeBufferPointer { i in
            output.withUnsafeMutableBufferPointer { o in
                voice.render(i.baseAddress! + start, frames: count, toward: direction(b), gain: gain(b), table: table,
                             memory: memory, scratch: scratch, addingInto: o.baseAddress! + 2 * start)
            }
        }
        start += count
        b += 1
    }
    return output
}

final class HRTFRendererTests: XCTestCase {
    /// One tap per ear, at tap 0: left 1 − x/2, right 1 + x/2; a source to the right (x > 0)
    /// reaches the right ear first: delays 10 + 6x (left) and 10 − 6x (right), so removedDelay = 4
    /// and maximumDelay = 13.
    static func pointTable(irLength: Int = 1, azimuthStep: Float = 10) -> HRTFTable {
        HRTFTable(name: "point", sampleRate: 48_000, irLength: irLength, azimuthStep: azimuthStep, elevations: -40...90, elevationStep: 10) { d, left, right in
            left[0] = 1 - d.x / 2
            right[0] = 1 + d.x / 2
            return (10 + 6 * d.x, 10 - 6 * d.x)
        }
    }

    /// Taps that vary with direction in every tap (a decaying, direction-shaped noise), for the
    /// tests that need real filters.
    static func noiseTable(irLength: Int = 64) -> HRTFTable {
        HRTFTable(name: "noise", sampleRate: 48_000, irLength: irLength, azimuthStep: 5, elevations: -40...90, elevationStep: 10) { d, left, right in
            for k in 0..<irLength {
                let decay = exp(-Float(k) / 12)
                left[k] = decay * sin(Float(k) * (1.3 + d.x) + d.y)
                right[k] = decay * cos(Float(k) * (1.1 - d.x) + d.z)
            }
            return (8 + 12 * max(0, d.x), 8 + 12 * max(0, -d.x))
        }
    }

    func testGridAndDelays() {
        let table = Self.pointTable()
        XCTAssertEqual(table.azimuthCount, 36)
        XCTAssertEqual(table.elevationCount, 14)
        XCTAssertEqual(table.removedDelay, 4, accuracy: 1e-5)
        XCTAssertEqual(table.maximumDelay, 13)
        var l: Float = 0, r: Float = 0
        // Straight ahead: x = 0.
        var (dl, dr) = table.filter(toward: [0, 0, 1], left: &l, right: &r)
        XCTAssertEqual(l, 1, accuracy: 1e-6); XCTAssertEqual(r, 1, accuracy: 1e-6)
        XCTAssertEqual(dl, 6, accuracy: 1e-5); XCTAssertEqual(dr, 6, accuracy: 1e-5)
        // To the right (a grid point): x = 1.
        (dl, dr) = table.filter(toward: [1, 0, 0], left: &l, right: &r)
        XCTAssertEqual(l, 0.5, accuracy: 1e-6); XCTAssertEqual(r, 1.5, accuracy: 1e-6)
        XCTAssertEqual(dl, 12, accuracy: 1e-5); XCTAssertEqual(dr, 0, accuracy: 1e-5)
        // Behind-left at 225°, halfway between the columns of 220° and 230°: their mean.
        let x = Float(sin(220 * Double.pi / 180) + sin(230 * Double.pi / 180)) / 2
        (dl, dr) = table.filter(toward: [-1, 0, -1], left: &l, right: &r)
        XCTAssertEqual(l, 1 - x / 2, accuracy: 1e-5)
        XCTAssertEqual(dr, 6 - 6 * x, accuracy: 1e-4)
    }

    func testInterpolationIsBilinearBetweenTheFourCorners() {
        let table = Self.pointTable()
        // Azimuth 34°, elevation 17°: corners (30°, 10°), (40°, 10°), (30°, 20°), (40°, 20°).
        let azimuth: Double = 34, elevation: Double = 17
        let radians = { (a: Double, e: Double) in (a * .pi / 180, e * .pi / 180) }
        let (a, e) = radians(azimuth, elevation)
        let direction = SIMD3<Float>(Float(sin(a) * cos(e)), Float(sin(e)), Float(cos(a) * cos(e)))
        func x(_ az: Double, _ el: Double) -> Double { let (a, e) = radians(az, el); return sin(a) * cos(e) }
        let wa = 0.4, we = 0.7
        let xMixed = (1 - wa) * (1 - we) * x(30, 10) + wa * (1 - we) * x(40, 10) + (1 - wa) * we * x(30, 20) + wa * we * x(40, 20)
        var l: Float = 0, r: Float = 0
        let (dl, dr) = table.filter(toward: direction, left: &l, right: &r)
        XCTAssertEqual(Double(l), 1 - xMixed / 2, accuracy: 1e-5)
        XCTAssertEqual(Double(r), 1 + xMixed / 2, accuracy: 1e-5)
        XCTAssertEqual(Double(dl), 6 + 6 * xMixed, accuracy: 1e-4)
        XCTAssertEqual(Double(dr), 6 - 6 * xMixed, accuracy: 1e-4)
        // Above the grid's top row and below its bottom one: the nearest row.
        var l2: Float = 0, r2: Float = 0
        _ = table.filter(toward: [0, -1, 0.2], left: &l, right: &r)
        let down = Float(-40 * Double.pi / 180)
        _ = table.filter(toward: [0, sin(down), cos(down)], left: &l2, right: &r2)
        XCTAssertEqual(l, l2, accuracy: 1e-6)
    }

    func testTheAnglesOfHeadCoordinates() {
        func check(_ d: SIMD3<Float>, _ azimuth: Float, _ elevation: Float, line: UInt = #line) {
            let (a, e) = HRTFTable.angles(of: d)
            XCTAssertEqual(a, azimuth, accuracy: 1e-3, line: line)
            XCTAssertEqual(e, elevation, accuracy: 1e-3, line: line)
        }
        check([0, 0, 1], 0, 0)       // ahead
        check([1, 0, 0], 90, 0)      // right
        check([0, 0, -1], 180, 0)    // behind
        check([-1, 0, 0], 270, 0)    // left
        check([0, 1, 0], 0, 90)      // up
        check([0, 0, 0], 0, 0)       // nowhere: ahead
        check([0, 2, 2], 0, 45)
    }

    /// The law with one tap per ear: an impulse comes out at each ear's delay, split between the
    /// two frames around it as linear interpolation says, times the tap.
    func testImpulseAtAFractionalDelay() {
        let table = Self.pointTable()
        let a = 20 * Double.pi / 180   // azimuth 20°, on the grid: x = sin 20°
        let direction = SIMD3<Float>(Float(sin(a)), 0, Float(cos(a)))
        var input = [Float](repeating: 0, count: 64)
        input[3] = 1
        let out = renderHRTF(table, input, block: 64, direction: { _ in direction }, gain: { _ in 0.5 })
        let x = sin(a)
        for (ear, tap, delay) in [(0, 1 - x / 2, 6 + 6 * x), (1, 1 + x / 2, 6 - 6 * x)] {
            let whole = Int(delay.rounded(.down)), f = delay - Double(whole)
            for n in 0..<64 {
                var expected = 0.0
                if n == 3 + whole { expected = 0.5 * tap * (1 - f) }
                if n == 3 + whole + 1 { expected = 0.5 * tap * f }
                XCTAssertEqual(Double(out[2 * n + ear]), expected, accuracy: 1e-5, "ear \(ear) frame \(n)")
            }
        }
    }

    /// Gain glides per sample over the block (g₀ + (g₁ − g₀)(n+1)/N), the filter crossfades
    /// ((1 − t) old + t new, t = (n+1)/N), and the first block after reset starts where it is told.
    func testGainGlideAndCrossfade() {
        // Direction-independent delays: the same table but with x only in the taps.
        let table = HRTFTable(name: "flat", sampleRate: 48_000, irLength: 1, azimuthStep: 10, elevations: 0...0, elevationStep: 10) { d, left, right in
            left[0] = 1 - d.x / 2
            right[0] = 1 + d.x / 2
            return (0, 0)
        }
        XCTAssertEqual(table.maximumDelay, 1)
        let n = 100
        let input = [Float](repeating: 1, count: 3 * n)
        let directions: [SIMD3<Float>] = [[0, 0, 1], [1, 0, 0], [1, 0, 0]]
        let gains: [Float] = [0.5, 0.5, 0.25]
        let out = renderHRTF(table, input, block: n, direction: { directions[$0] }, gain: { gains[$0] })
        for i in 0..<(3 * n) {
            let b = i / n, k = Double(i % n + 1) / Double(n)
            let g0 = Double(b == 0 ? gains[0] : gains[b - 1]), g1 = Double(gains[b])
            let gain = g0 + (g1 - g0) * k
            let x0 = Double(b == 0 ? directions[0].x : directions[b - 1].x), x1 = Double(directions[b].x)
            let left = (1 - k) * (1 - x0 / 2) + k * (1 - x1 / 2)
            let right = (1 - k) * (1 + x0 / 2) + k * (1 + x1 / 2)
            XCTAssertEqual(Double(out[2 * i]), gain * left, accuracy: 1e-5, "frame \(i)")
            XCTAssertEqual(Double(out[2 * i + 1]), gain * right, accuracy: 1e-5, "frame \(i)")
        }
    }

    /// A direct-form FIR: an impulse reproduces the table's taps at the ear's delay, and a
    /// render adds into what the output held.
    func testAnImpulseReproducesTheTapsAndAddsIntoTheOutput() {
        let table = Self.noiseTable()
        let direction = SIMD3<Float>(1, 0, 0)   // on the grid: integer delays 20 − 8 = 12 (left) and 0
        var taps = [Float](repeating: 0, count: 2 * table.irLength)
        let (dl, dr) = taps.withUnsafeMutableBufferPointer { table.filter(toward: direction, left: $0.baseAddress!, right: $0.baseAddress! + table.irLength) }
        XCTAssertEqual(dl, 12, accuracy: 1e-5)
        XCTAssertEqual(dr, 0, accuracy: 1e-5)
        var input = [Float](repeating: 0, count: 300)
        input[0] = 1
        var out = renderHRTF(table, input, block: 300, direction: { _ in direction })
        for k in 0..<table.irLength {
            XCTAssertEqual(out[2 * (12 + k)], taps[k], accuracy: 1e-6)
            XCTAssertEqual(out[2 * k + 1], taps[table.irLength + k], accuracy: 1e-6)
        }
        XCTAssertEqual(out[2 * (12 + table.irLength)], 0)
        // Adding: render again into the same output.
        let memory = UnsafeMutablePointer<Float>.allocate(capacity: HRTFVoice.memoryFloats(table: table, maximumFrames: 512, rewindHeadroomFrames: 0))
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: HRTFVoice.scratchFloats(table: table, maximumFrames: 512))
        defer { memory.deallocate(); scratch.deallocate() }
        var voice = HRTFVoice()
        voice.reset(memory: memory, table: table, maximumFrames: 512, rewindHeadroomFrames: 0)
        let once = out
        voice.render(input, frames: 300, toward: direction, gain: 1, table: table, memory: memory, scratch: scratch, addingInto: &out)
        for i in 0..<600 { XCTAssertEqual(out[i], 2 * once[i], accuracy: 1e-6) }
    }

    /// A call longer than maximumFrames is processed in pieces with the same law: the same
    /// samples, bit for bit, as with room for the whole call.
    func testLongCallsSplitWithoutChangingTheOutput() {
        let table = Self.noiseTable()
        var random = SystemRandomNumberGenerator()
        let input = (0..<3000).map { _ in Float.random(in: -1...1, using: &random) }
        let turn = { (b: Int) -> SIMD3<Float> in let a = Float(b) * 0.7; return [sin(a), 0.2, cos(a)] }
        let whole = renderHRTF(table, input, block: 1000, maximumFrames: 1024, direction: turn, gain: { 0.3 + 0.2 * Float($0) })
        let pieces = renderHRTF(table, input, block: 1000, maximumFrames: 96, direction: turn, gain: { 0.3 + 0.2 * Float($0) })
        XCTAssertEqual(whole, pieces)
    }

    /// Rewind safety: only the struct is saved; rendering up to the headroom, restoring it and
    /// rendering the same input again gives the same samples, bit for bit.
    func testRewindRestoresFromTheStructAlone() {
        let table = Self.noiseTable()
        let maximumFrames = 256, headroom = 1024
        let memory = UnsafeMutablePointer<Float>.allocate(capacity: HRTFVoice.memoryFloats(table: table, maximumFrames: maximumFrames, rewindHeadroomFrames: headroom))
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: HRTFVoice.scratchFloats(table: table, maximumFrames: maximumFrames))
        defer { memory.deallocate(); scratch.deallocate() }
        var random = SystemRandomNumberGenerator()
        let input = (0..<8192).map { _ in Float.random(in: -1...1, using: &random) }
        var voice = HRTFVoice()
        voice.reset(memory: memory, table: table, maximumFrames: maximumFrames, rewindHeadroomFrames: headroom)
        let blocks = [200, 256, 77, 256, 235]   // 1024 frames: the whole headroom
        func pass(_ voice: inout HRTFVoice, from start: Int) -> [Float] {
            var out = [Float](repeating: 0, count: 2 * 1024)
            var at = 0
            input.withUnsafeBufferPointer { i in
                out.withUnsafeMutableBufferPointer { o in
                    for (b, count) in blocks.enumerated() {
                        let a = Float(start + at) / 500
                        voice.render(i.baseAddress! + start + at, frames: count, toward: [sin(a), Float(b) / 10, cos(a)],
                                     gain: 0.2 + Float(b) / 10, table: table, memory: memory, scratch: scratch, addingInto: o.baseAddress! + 2 * at)
                        at += count
                    }
                }
            }
            return out
        }
        // Some history first, so the ring has wrapped.
        var start = 0
        for _ in 0..<5 { _ = pass(&voice, from: start); start += 1024 }
        let saved = voice
        let first = pass(&voice, from: start)
        voice = saved
        let again = pass(&voice, from: start)
        XCTAssertEqual(first, again)
        XCTAssertTrue(first.contains { $0 != 0 })
    }

    /// The real-time contract: rendering, moving or still, allocates nothing (AllocationAudit:
    /// Swift objects on this thread and malloc's bytes in use; MixerRealTimeTests shows it sees one).
    func testRenderingAllocatesNothing() {
        let table = Self.noiseTable()
        let memory = UnsafeMutablePointer<Float>.allocate(capacity: HRTFVoice.memoryFloats(table: table, maximumFrames: 256, rewindHeadroomFrames: 512))
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: HRTFVoice.scratchFloats(table: table, maximumFrames: 256))
        let input = UnsafeMutablePointer<Float>.allocate(capacity: 600)
        let output = UnsafeMutablePointer<Float>.allocate(capacity: 1200)
        defer { memory.deallocate(); scratch.deallocate(); input.deallocate(); output.deallocate() }
        for i in 0..<600 { input[i] = sin(Float(i) * 0.1) }
        output.initialize(repeating: 0, count: 1200)
        var voice = HRTFVoice()
        voice.reset(memory: memory, table: table, maximumFrames: 256, rewindHeadroomFrames: 512)
        var b = 0
        func blocks(_ n: Int) {
            for _ in 0..<n {
                let a = Float(b % 40) * 0.2
                // SIMD3(x, y, z), not an array literal, which makes an array in a debug build.
                let direction = b % 5 == 0 ? SIMD3<Float>(0, 0, 1) : SIMD3<Float>(sin(a), 0.3, cos(a))
                voice.render(input, frames: b % 3 == 0 ? 600 : 256, toward: direction,
                             gain: Float(b % 4) / 4, table: table, memory: memory, scratch: scratch, addingInto: output)
                if b % 7 == 0 { voice.reset(memory: memory, table: table, maximumFrames: 256, rewindHeadroomFrames: 512) }
                b += 1
            }
        }
        blocks(50)
        let audit = AllocationAudit()
        var attempts: [AllocationAudit.Measurement] = []
        for _ in 0..<3 {
            let m = audit.measure { blocks(500) }
            attempts.append(m)
            if m.bytes == 0 { break }
        }
        XCTAssertTrue(attempts.allSatisfy { $0.swiftObjects == 0 }, "\(attempts)")
        XCTAssertTrue(attempts.contains { ($0.bytes ?? 0) == 0 }, "\(attempts)")
    }

    func testSizes() {
        let table = Self.noiseTable()
        XCTAssertEqual(table.maximumDelay, 13)
        // History 64 + 13 − 1 = 76, plus 256 + 1024: 1356 → 2048.
        XCTAssertEqual(HRTFVoice.memoryFloats(table: table, maximumFrames: 256, rewindHeadroomFrames: 1024), 2048)
        XCTAssertEqual(HRTFVoice.scratchFloats(table: table, maximumFrames: 256), 4 * 65 + 128 + 76 + 256 + 512)
        XCTAssertTrue(_isPOD(HRTFVoice.self))
    }
}
