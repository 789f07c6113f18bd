// The mixer's real-time contract: its output does not depend on how rendering is split into
// calls, the same commands give the same bits, and steady-state rendering allocates nothing.
//
// The allocation audit uses two independent meters: the Swift runtime's allocation hook
// (`_swift_allocObject`, the entry point of every Swift heap object: arrays, strings, boxes,
// closure contexts), counted on the rendering thread only, and glibc's `malloc_stats()` (bytes in
// use by malloc in the whole process). Each meter is first shown to see an allocation, so the
// audit can fail.
import Foundation
import Glibc
import XCTest
@testable import SFXCore

final class MixerRealTimeTests: XCTestCase {
    /// A busy script: overlapping, looping, panned voices of mono and stereo cues, gain, pan,
    /// group and master changes, stops, steals and a cue release.
    func busyScript() -> (script: [ScheduledCommand], cues: [Cue]) {
        let a = monoCue(frames: 700) { i in 0.2 * sin(Double(i) * 0.07) }
        let b = stereoCue(frames: 333) { i in (0.1 * cos(Double(i) * 0.02), Double(i % 50) / 500) }
        let c = monoCue(frames: 64) { i in Double(i) / 640 }
        var script: [ScheduledCommand] = []
        var random = SplitMix64(state: 42)
        for v in 0..<120 {
            let frame = Int(random.next() % 9000)
            let cue = [a, b, c][v % 3]
            script.append(at(frame, play(
                UInt64(v), cue, gain: Float(random.next() % 100) / 100, pan: Float(Int(random.next() % 200) - 100) / 100,
                loops: Int(random.next() % 5) - 1, group: SoundGroup(rawValue: UInt8(v % 4))!,
                priority: VoicePriority(rawValue: UInt8(random.next() % 256)), maxInstances: v % 2 == 0 ? 3 : 0)))
            script.append(at(frame + Int(random.next() % 2000), .setGain(VoiceID(UInt64(v)), 0.3)))
            script.append(at(frame + Int(random.next() % 2000), .setPan(VoiceID(UInt64(v)), -0.4)))
            script.append(at(frame + Int(random.next() % 3000), .stop(VoiceID(UInt64(v)), fadeFrames: Int(random.next() % 500))))
        }
        script += [
            at(2000, .setGroupGain(.ui, 0.3)), at(3000, .setGroupMuted(.alerts, true)),
            at(5000, .setGroupMuted(.alerts, false)), at(4000, .setMasterGain(1.5)),
            at(6000, .releaseCue(c.key)), at(8000, .stopGroup(.music, fadeFrames: 300)),
        ]
        return (script, [a, b, c])
    }

    func testOutputDoesNotDependOnHowRenderingIsSplit() {
        var configuration = testConfiguration(maxVoices: 12)
        configuration.maxFramesPerRender = 1024
        let (script, cues) = busyScript()
        for format in [stereo, mono] {
            let whole = renderScript(script, frames: 12_000, format: format, configuration: configuration)
            XCTAssertGreaterThan(whole.stolenCount, 0)
            XCTAssertGreaterThan(whole.samples.map(abs).max() ?? 0, 0.1)
            for chunks in [[1], [7], [64], [1024], [5, 300, 1, 97, 2048]] {
                let split = renderInChunks(script, frames: 12_000, chunks: chunks, format: format, configuration: configuration)
                XCTAssertTrue(split.samples.elementsEqual(whole.samples) { $0.bitPattern == $1.bitPattern },
                              "\(format), chunks \(chunks)")
                XCTAssertEqual(split.events, whole.events.map(\.event), "\(format), chunks \(chunks)")
            }
        }
        withExtendedLifetime(cues) {}
    }

    func testSameCommandsGiveIdenticalOutput() {
        let (script, cues) = busyScript()
        let first = renderScript(script, frames: 12_000, configuration: testConfiguration(maxVoices: 12))
        let second = renderScript(script, frames: 12_000, configuration: testConfiguration(maxVoices: 12))
        XCTAssertTrue(first.samples.elementsEqual(second.samples) { $0.bitPattern == $1.bitPattern })
        XCTAssertEqual(first.events.map(\.frame), second.events.map(\.frame))
        XCTAssertEqual(first.events.map(\.event), second.events.map(\.event))
        withExtendedLifetime(cues) {}
    }

    func testSteadyStateRenderingAndCommandsAllocateNothing() {
        let cues = [monoCue(frames: 4000) { i in sin(Double(i) * 0.01) }, stereoCue(frames: 2500) { i in (0.1, Double(i % 7) / 7) }]
        let mixer = Mixer(format: stereo, configuration: testConfiguration(maxVoices: 32))
        let commands = SPSCRing<MixerCommand>(capacity: 64)
        let output = UnsafeMutablePointer<Float>.allocate(capacity: 256 * 2)
        defer { output.deallocate() }
        var voice: UInt64 = 0
        var blocks = 0
        var busiest = 0   // the most voices sounding after any one period of the audited batches
        // One period of the audio thread: queued commands, a render, the events drained. Voices
        // come and go (steals, stops, instance caps, a cue release), so every path is exercised.
        func period() {
            voice += 1
            _ = commands.push(play(voice, cues[Int(voice % 2)], gain: 0.1, pan: 0.3, loops: Int(voice % 3),
                                   group: SoundGroup(rawValue: UInt8(voice % 8))!, maxInstances: Int(voice % 5)))
            _ = commands.push(.setGain(VoiceID(voice &- 3), 0.05))
            _ = commands.push(.setPan(VoiceID(voice &- 2), -1))
            _ = commands.push(.stop(VoiceID(voice &- 5), fadeFrames: 200))
            _ = commands.push(.setGroupGain(SoundGroup(rawValue: UInt8(voice % 8))!, Float(voice % 3)))
            _ = commands.push(.setGroupMuted(.music, voice % 4 == 0))
            _ = commands.push(.setMasterGain(voice % 2 == 0 ? 1 : 0.8))
            if voice % 50 == 0 { _ = commands.push(.releaseCue(cues[0].key)) }
            if voice % 97 == 0 { _ = commands.push(.stopAll(fadeFrames: 100)) }
            while let command = commands.pop() { mixer.apply(command) }
            mixer.render(into: output, frameCount: 256)
            mixer.drainEvents { _, _ in blocks += 1 }
            busiest = max(busiest, mixer.activeVoiceCount)
        }
        for _ in 0..<500 { period() }   // warm-up: every path taken once
        busiest = 0

        // The meters must see an allocation when there is one.
        let audit = AllocationAudit()
        let controlObject = audit.measure { blackHole([voice, voice]) }
        XCTAssertGreaterThan(controlObject.swiftObjects, 0)
        var block: UnsafeMutableRawPointer?
        let controlBytes = audit.measure { block = malloc(100_000) }
        free(block)
        XCTAssertGreaterThanOrEqual(controlBytes.bytes ?? 100_000, 100_000)

        // malloc_stats counts the whole process, so another thread could move it; a render that
        // allocates would move it in every attempt.
        var attempts: [AllocationAudit.Measurement] = []
        for _ in 0..<3 {
            let m = audit.measure { for _ in 0..<2000 { period() } }
            attempts.append(m)
            if m.bytes == 0 { break }
        }
        XCTAssertTrue(attempts.allSatisfy { $0.swiftObjects == 0 }, "\(attempts)")
        XCTAssertTrue(attempts.contains { ($0.bytes ?? 0) == 0 }, "\(attempts)")
        XCTAssertGreaterThan(mixer.stolenCount, 0)
        XCTAssertGreaterThan(blocks, 1000)
        // Coverage of the audited batches, whatever period they end on (a batch may end just
        // after a `stopAll` or a cue release, with no voice left).
        XCTAssertGreaterThan(busiest, 1)
        withExtendedLifetime(cues) {}
    }
}

@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// Measures the allocations made by a block: Swift heap objects allocated on the calling thread,
/// through the Swift runtime's instrumentation hook, and the change in malloc's bytes in use.
final class AllocationAudit {
    struct Measurement: CustomStringConvertible {
        var swiftObjects: Int
        /// nil if malloc's statistics could not be read.
        var bytes: Int?
        var description: String {
            "\(swiftObjects) Swift objects, \(bytes.map(String.init) ?? "?") bytes"
        }
    }

    typealias AllocObject = @convention(c) (UnsafeRawPointer?, Int, Int) -> UnsafeMutableRawPointer?

    private let runtime = dlopen(nil, RTLD_NOW)
    private func symbol<T>(_ name: String, as type: T.Type) -> UnsafeMutablePointer<T> {
        dlsym(runtime, name)!.assumingMemoryBound(to: T.self)
    }

    func measure(_ body: () -> Void) -> Measurement {
        let allocSlot = symbol("_swift_allocObject", as: AllocObject?.self)
        let enabled = symbol("_swift_enableSwizzlingOfAllocationAndRefCountingFunctions_forInstrumentsOnly", as: Bool.self)
        let beforeBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 1)
        let afterBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 1)
        defer {
            beforeBuffer.deallocate()
            afterBuffer.deallocate()
        }
        auditedThread = pthread_self()
        auditedObjects = 0
        originalAllocObject = allocSlot.pointee
        let beforeCount = captureMallocReport(into: beforeBuffer)
        allocSlot.pointee = countingAllocObject
        enabled.pointee = true
        body()
        enabled.pointee = false
        allocSlot.pointee = originalAllocObject
        let afterCount = captureMallocReport(into: afterBuffer)
        let before = Self.bytesInUse(Array(beforeBuffer.prefix(beforeCount)))
        let after = Self.bytesInUse(Array(afterBuffer.prefix(afterCount)))
        return Measurement(swiftObjects: auditedObjects, bytes: before.flatMap { b in after.map { $0 - b } })
    }

    /// malloc's statistics report: glibc's `malloc_stats()` prints it to standard error
    /// (malloc.h is not part of the Glibc module, so it is looked up by name). The report is
    /// caught through a pipe into `buffer`, allocated beforehand, so taking it allocates nothing.
    /// Returns the report's length.
    private func captureMallocReport(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        typealias MallocStats = @convention(c) () -> Void
        let mallocStats = unsafeBitCast(dlsym(runtime, "malloc_stats")!, to: MallocStats.self)
        var ends: (Int32, Int32) = (0, 0)
        let opened = withUnsafeMutablePointer(to: &ends) { $0.withMemoryRebound(to: Int32.self, capacity: 2) { pipe($0) } }
        guard opened == 0 else { return 0 }
        let savedError = dup(2)
        dup2(ends.1, 2)
        // malloc_stats prints while it holds malloc's lock: a standard error with no buffer yet
        // would allocate one there and wait for itself for ever. stderr is unbuffered unless a
        // library loaded earlier in this process made it line-buffered (the suite hung so once).
        // (`stderr` looked up by name, as a global C variable Swift 6 does not let a test touch.)
        if let standardError = dlsym(runtime, "stderr")?.assumingMemoryBound(to: UnsafeMutablePointer<FILE>?.self).pointee {
            setvbuf(standardError, nil, _IONBF, 0)
        }
        mallocStats()
        dup2(savedError, 2)
        close(savedError)
        close(ends.1)
        let count = read(ends.0, buffer.baseAddress, buffer.count)
        close(ends.0)
        return max(count, 0)
    }

    /// The "in use bytes" of the report's total.
    private static func bytesInUse(_ report: [UInt8]) -> Int? {
        let text = String(decoding: report, as: UTF8.self)
        guard let total = text.range(of: "Total (incl. mmap):") else { return nil }
        let line = text[total.upperBound...].split(separator: "\n").first { $0.contains("in use bytes") }
        return line.flatMap { Int($0.split(separator: "=").last!.trimmingCharacters(in: .whitespaces)) }
    }
}

private nonisolated(unsafe) var auditedThread: pthread_t?
private nonisolated(unsafe) var auditedObjects = 0
private nonisolated(unsafe) var originalAllocObject: AllocationAudit.AllocObject?

private func onAuditedThread() -> Bool {
    auditedThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
}

private func countingAllocObject(
    _ metadata: UnsafeRawPointer?, _ size: Int, _ alignMask: Int
) -> UnsafeMutableRawPointer? {
    if onAuditedThread() { auditedObjects += 1 }
    return originalAllocObject!(metadata, size, alignMask)
}
