import Foundation
import SFXCore
import SFXMedia

// sfx-fuzz: feeds SFXMedia thousands of damaged sound files of every format sfx writes, in
// process, and counts what happened. Every input must load or be refused with a one-line
// MediaError: a crash, a hang or a message of more than one line is a finding.
//
//   swift build --product sfx-fuzz
//   .build/debug/sfx-fuzz --iterations 20000 --seed 7          # or --seconds 600
//
// Inputs are numbered; input n is made from the seed and n alone (a seed file, then one
// mutation), so any input can be made again. Batches run in a child process: when a child dies
// on a signal or stops answering, the input it was decoding is saved (see --keep) and the run
// goes on after it. One mutation in seven sets the sample rate or the channel count to a value
// at or past the limits sfx accepts (0, 1, 999, 1000, 768000, 768001, 2^32-1 Hz; 0, 1, 64, 65,
// 65535 channels). Memory is a finding too: an input whose decode takes the child's peak resident
// memory over --memory-limit (the peak is reset before each input) is saved like a crash.

struct Options {
    var iterations: Int? = nil
    var seconds: Double? = nil
    var seed: UInt64 = 1
    var batch = 250
    var keep = "sfx-fuzz-findings"
    var hangSeconds = 20.0
    /// Peak resident memory, in MB, that one input's decode may reach.
    var memoryLimit = 512
    /// Makes the child abort on this input: checks that crashes are caught and saved.
    var crashAt: Int? = nil
    // Child mode: decode inputs from..<from+count of `seed`, seed files in `directory`.
    var child: (from: Int, count: Int, directory: String)? = nil
}

func usage() -> Never {
    FileHandle.standardError.write(Data("""
    usage: sfx-fuzz [--iterations N | --seconds T] [--seed S] [--batch N] [--keep DIR] [--hang-seconds T]
      --iterations N   inputs to try (default 2000 when --seconds is not given)
      --seconds T      try inputs until T seconds have passed
      --seed S         the seed of the mutations (default 1): the same seed makes the same inputs
      --batch N        inputs per child process (default 250)
      --keep DIR       where crashing or hanging inputs are saved (default ./sfx-fuzz-findings)
      --hang-seconds T an input taking longer than this is a hang (default 20)
      --memory-limit M an input whose decode takes the peak resident memory over M MB is a finding (default 512)
      --crash-at N     abort on input N (checks that the harness catches and saves crashes)

    """.utf8))
    exit(64)
}

func parse(_ arguments: [String]) -> Options {
    var options = Options()
    var index = 0
    func value() -> String {
        index += 1
        guard index < arguments.count else { usage() }
        return arguments[index]
    }
    while index < arguments.count {
        switch arguments[index] {
        case "--iterations": guard let n = Int(value()), n > 0 else { usage() }; options.iterations = n
        case "--seconds": guard let t = Double(value()), t > 0 else { usage() }; options.seconds = t
        case "--seed": guard let s = UInt64(value()) else { usage() }; options.seed = s
        case "--batch": guard let n = Int(value()), n > 0 else { usage() }; options.batch = n
        case "--keep": options.keep = value()
        case "--hang-seconds": guard let t = Double(value()), t > 0 else { usage() }; options.hangSeconds = t
        case "--memory-limit": guard let m = Int(value()), m > 0 else { usage() }; options.memoryLimit = m
        case "--crash-at": guard let n = Int(value()) else { usage() }; options.crashAt = n
        case "--child":
            guard let from = Int(value()), let count = Int(value()) else { usage() }
            options.child = (from, count, value())
        case "-h", "--help": usage()
        default: usage()
        }
        index += 1
    }
    return options
}

/// xorshift64*: small, deterministic, the same on every machine.
struct Generator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64, input: Int) {
        state = (seed &+ 0x9E37_79B9_7F4A_7C15) &* 0xBF58_476D_1CE4_E5B9 ^ UInt64(input) &* 0x94D0_49BB_1331_11EB
        if state == 0 { state = 1 }
        for _ in 0..<4 { _ = next() }
    }
    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 2_685_821_657_736_338_717
    }
}

/// The seed files: every encoding sfx writes (WAV PCM16/24/float, AIFF, FLAC 16/24, CAF, Ogg
/// Vorbis, Opus, MP3), 0.1 s of a stereo chord each, and a short one of 20 frames of it (which
/// at a tiny sample rate still fits the cue limit, so it reaches the conversion), written once
/// per run.
let encodings = AudioFileEncoding.allCases

func writeSeeds(to directory: String) throws {
    let frames = 4_800
    var chord: [Float] = []
    for frame in 0..<frames {
        let t = Double(frame) / 48_000
        let left = 0.3 * sin(2 * .pi * 440 * t) + 0.2 * sin(2 * .pi * 660 * t)
        chord += [Float(left), Float(0.4 * sin(2 * .pi * 550 * t))]
    }
    for encoding in encodings {
        try AudioFileWriter.write(chord, sampleRate: 48_000, channels: 2,
                                  to: URL(filePath: "\(directory)/seed-\(encoding.rawValue)"), as: encoding)
        try AudioFileWriter.write(Array(chord.prefix(40)), sampleRate: 48_000, channels: 2,
                                  to: URL(filePath: "\(directory)/short-\(encoding.rawValue)"), as: encoding)
    }
}

/// Input `n`: seed file n mod the encodings, damaged one way chosen by the generator.
func makeInput(_ n: Int, seed: UInt64, seeds: [[UInt8]]) -> (encoding: AudioFileEncoding, bytes: [UInt8]) {
    var random = Generator(seed: seed, input: n)
    let which = n % encodings.count
    var bytes = seeds[which]
    switch Int.random(in: 0..<7, using: &random) {
    case 0:  // cut short
        bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random)))
    case 1, 2:  // a few bytes changed, half of them in the first 64 (headers matter most)
        for _ in 0..<Int.random(in: 1...8, using: &random) {
            let limit = Bool.random(using: &random) ? min(64, bytes.count) : bytes.count
            bytes[Int.random(in: 0..<limit, using: &random)] = UInt8.random(in: 0...255, using: &random)
        }
    case 3:  // a run overwritten with 0x00 or 0xFF (sizes and counts at their extremes)
        let start = Int.random(in: 0..<bytes.count, using: &random)
        let length = min(bytes.count - start, Int.random(in: 1...16, using: &random))
        let fill: UInt8 = Bool.random(using: &random) ? 0xFF : 0x00
        for i in start..<(start + length) { bytes[i] = fill }
    case 4:  // a piece removed or repeated
        let start = Int.random(in: 0..<bytes.count, using: &random)
        let length = min(bytes.count - start, Int.random(in: 1...512, using: &random))
        if Bool.random(using: &random) {
            bytes.removeSubrange(start..<(start + length))
        } else {
            bytes.insert(contentsOf: bytes[start..<(start + length)], at: start)
        }
    case 5:  // the start of one format spliced onto the rest of another
        let other = seeds[Int.random(in: 0..<seeds.count, using: &random)]
        let cut = Int.random(in: 0..<min(other.count, bytes.count), using: &random)
        bytes = Array(other.prefix(cut)) + Array(bytes.dropFirst(cut))
    default:  // the sample rate or the channel count at or past its limits, of the seed or its short twin
        if Bool.random(using: &random) { bytes = seeds[which + encodings.count] }
        if Bool.random(using: &random) {
            setSampleRate(limitRates.randomElement(using: &random)!, in: &bytes)
        } else {
            setChannels(limitChannels.randomElement(using: &random)!, in: &bytes)
        }
    }
    return (encodings[which], bytes)
}

/// Sample rates and channel counts at and past the limits sfx accepts (SoundFile.sampleRates,
/// SoundFile.maximumChannels).
let limitRates: [UInt32] = [0, 1, 2, 999, 1_000, 1_001, 8_000, 767_999, 768_000, 768_001, 0x7FFF_FFFF, 0xFFFF_FFFF]
let limitChannels: [UInt16] = [0, 1, 2, 63, 64, 65, 255, 1_024, 0xFFFF]

/// Every place a seed holds its rate (48,000 Hz), in the encodings the formats use: 32-bit
/// little-endian (WAV's fmt, Vorbis and Opus headers), 32-bit big-endian, AIFF's 80-bit
/// extended float, CAF's 64-bit float, and FLAC's 20-bit STREAMINFO field.
func setSampleRate(_ rate: UInt32, in bytes: inout [UInt8]) {
    func replace(_ pattern: [UInt8], with value: [UInt8]) {
        var i = 0
        while i + pattern.count <= bytes.count {
            if Array(bytes[i..<(i + pattern.count)]) == pattern {
                bytes.replaceSubrange(i..<(i + pattern.count), with: value)
                i += pattern.count
            } else {
                i += 1
            }
        }
    }
    let le = withUnsafeBytes(of: UInt32(48_000).littleEndian, Array.init)
    replace(le, with: withUnsafeBytes(of: rate.littleEndian, Array.init))
    replace(le.reversed(), with: withUnsafeBytes(of: rate.bigEndian, Array.init))
    replace(extended80(48_000), with: extended80(Double(rate)))
    replace(withUnsafeBytes(of: Double(48_000).bitPattern.bigEndian, Array.init),
            with: withUnsafeBytes(of: Double(rate).bitPattern.bigEndian, Array.init))
    if bytes.count > 21, bytes.starts(with: Array("fLaC".utf8)) {
        // STREAMINFO starts at byte 8; the rate is the 20 bits from byte 18.
        let r = rate & 0xF_FFFF
        bytes[18] = UInt8(r >> 12)
        bytes[19] = UInt8((r >> 4) & 0xFF)
        bytes[20] = UInt8((r & 0xF) << 4) | (bytes[20] & 0x0F)
    }
}

/// The channel count where the formats keep it: WAV's fmt chunk, AIFF's COMM chunk, FLAC's
/// STREAMINFO (3 bits), the Vorbis and Opus identification headers.
func setChannels(_ channels: UInt16, in bytes: inout [UInt8]) {
    func index(of pattern: String) -> Int? {
        let p = Array(pattern.utf8)
        guard bytes.count >= p.count else { return nil }
        return (0...(bytes.count - p.count)).first { Array(bytes[$0..<($0 + p.count)]) == p }
    }
    if let fmt = index(of: "fmt "), fmt + 12 <= bytes.count {
        bytes[fmt + 10] = UInt8(channels & 0xFF); bytes[fmt + 11] = UInt8(channels >> 8)
    }
    if let comm = index(of: "COMM"), comm + 10 <= bytes.count {
        bytes[comm + 8] = UInt8(channels >> 8); bytes[comm + 9] = UInt8(channels & 0xFF)
    }
    if bytes.count > 21, bytes.starts(with: Array("fLaC".utf8)) {
        bytes[20] = (bytes[20] & 0xF1) | UInt8((UInt32(max(channels, 1) - 1) & 0x7) << 1)
    }
    if let vorbis = index(of: "\u{01}vorbis"), vorbis + 12 <= bytes.count {
        bytes[vorbis + 11] = UInt8(channels & 0xFF)
    }
    if let opus = index(of: "OpusHead"), opus + 10 <= bytes.count {
        bytes[opus + 9] = UInt8(channels & 0xFF)
    }
}

/// An IEEE 754 80-bit extended float, big-endian, as AIFF stores its sample rate.
func extended80(_ value: Double) -> [UInt8] {
    guard value > 0 else { return [UInt8](repeating: 0, count: 10) }
    let exponent = Int(log2(value).rounded(.down))
    let mantissa = UInt64(value / pow(2, Double(exponent - 63)))
    let biased = UInt16(exponent + 16_383)
    return [UInt8(biased >> 8), UInt8(biased & 0xFF)] + withUnsafeBytes(of: mantissa.bigEndian, Array.init)
}

/// This process's peak resident memory in kB (VmHWM), or 0 when /proc cannot tell.
func peakResidentKB() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return 0 }
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
}

/// Resets the peak (VmHWM) to the current resident size (Linux 4.0 and later).
func resetPeakResident() {
    let fd = open("/proc/self/clear_refs", O_WRONLY)
    guard fd >= 0 else { return }
    _ = write(fd, "5", 1)
    close(fd)
}

/// `pid`'s resident memory in kB (VmRSS), or 0.
func residentKB(of pid: pid_t) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
}

/// The seeds, then their short twins: `encodings.count` of each.
func readSeeds(_ directory: String) -> [[UInt8]] {
    ["seed", "short"].flatMap { kind in
        encodings.map { encoding in
            [UInt8]((try? Data(contentsOf: URL(filePath: "\(directory)/\(kind)-\(encoding.rawValue)"))) ?? Data([0]))
        }
    }
}

/// Child: decodes inputs and reports each on stdout: "start N", then "loaded N", "refused N",
/// "message N" (a multi-line message) or "memory N KB" (the decode's peak went over the limit).
func runChild(from: Int, count: Int, directory: String, seed: UInt64, crashAt: Int?, memoryLimitKB: Int) -> Never {
    let seeds = readSeeds(directory)
    let decoder = AudioDecoder(format: .standard)
    let file = URL(filePath: "\(directory)/input-\(getpid())")
    // Unbuffered, so the parent knows the input in hand if this process dies.
    func emit(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    }
    for n in from..<(from + count) {
        let input = makeInput(n, seed: seed, seeds: seeds)
        emit("start \(n)")
        do {
            try Data(input.bytes).write(to: file)
        } catch {
            emit("setup \(n) \(error)")
            exit(2)
        }
        if n == crashAt { abort() }
        resetPeakResident()
        var outcome = "loaded"
        do {
            let cue = try decoder.decode(contentsOf: file)
            if !cue.samples.allSatisfy(\.isFinite) { outcome = "message" }
            _ = try? AudioFileInfo(contentsOf: file)
        } catch let error as MediaError {
            outcome = error.description.contains("\n") ? "message" : "refused"
        } catch {
            outcome = "message"
        }
        let peak = peakResidentKB()
        if peak > memoryLimitKB { outcome = "memory" }
        emit("\(outcome) \(n)" + (outcome == "memory" ? " \(peak)" : ""))
    }
    try? FileManager.default.removeItem(at: file)
    exit(0)
}

struct Tally {
    var loaded = 0, refused = 0, crashes = 0, hangs = 0, messages = 0, memory = 0
    var perFormat: [AudioFileEncoding: (loaded: Int, refused: Int)] = [:]
    var findings: [String] = []
}

/// Runs one child over inputs from..<end; returns the next input to try.
func runBatch(from: Int, end: Int, options: Options, directory: String, seeds: [[UInt8]], tally: inout Tally) -> Int {
    let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var pipeEnds: [Int32] = [0, 0]
    guard pipe(&pipeEnds) == 0 else { fatalError("pipe: \(String(cString: strerror(errno)))") }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
    posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let arguments = [executable, "--child", String(from), String(end - from), directory, "--seed", String(options.seed),
                     "--memory-limit", String(options.memoryLimit)]
        + (options.crashAt.map { ["--crash-at", String($0)] } ?? [])
    let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
    close(pipeEnds[1])
    guard spawned == 0 else { fatalError("posix_spawn: \(String(cString: strerror(spawned)))") }

    var current: Int? = nil
    var next = from
    var pending = ""
    var buffer = [UInt8](repeating: 0, count: 4096)
    var hung = false
    var runaway = false
    var lastProgress = Date()
    while true {
        var poller = pollfd(fd: pipeEnds[0], events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, 200)
        if ready > 0 {
            let got = read(pipeEnds[0], &buffer, buffer.count)
            if got <= 0 { break }
            pending += String(decoding: buffer[0..<got], as: UTF8.self)
            while let newline = pending.firstIndex(of: "\n") {
                let line = pending[..<newline].split(separator: " ")
                pending = String(pending[pending.index(after: newline)...])
                guard line.count >= 2, let n = Int(line[1]) else { continue }
                lastProgress = Date()
                let encoding = encodings[n % encodings.count]
                switch line[0] {
                case "start": current = n
                case "loaded": tally.loaded += 1; tally.perFormat[encoding, default: (0, 0)].loaded += 1; current = nil; next = n + 1
                case "refused": tally.refused += 1; tally.perFormat[encoding, default: (0, 0)].refused += 1; current = nil; next = n + 1
                case "message": tally.messages += 1; tally.findings.append(save(n, "message", options, seeds)); current = nil; next = n + 1
                case "memory":
                    let peak = line.count > 2 ? "\(Int(line[2]).map { $0 / 1024 } ?? 0) MB" : "over the limit"
                    tally.memory += 1
                    tally.findings.append(save(n, "memory (peak \(peak))", options, seeds)); current = nil; next = n + 1
                default: break
                }
            }
        } else if Date().timeIntervalSince(lastProgress) > options.hangSeconds {
            hung = true
            kill(pid, SIGKILL)
            break
        }
        // A decode running away with memory is stopped before it takes the machine down.
        if current != nil, residentKB(of: pid) > 4 * options.memoryLimit * 1024 {
            runaway = true
            kill(pid, SIGKILL)
            break
        }
    }
    close(pipeEnds[0])
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let signal = status & 0x7F
    if let n = current, hung || runaway || signal != 0 {
        if runaway {
            tally.memory += 1
            tally.findings.append(save(n, "memory (over \(4 * options.memoryLimit) MB, stopped)", options, seeds))
        } else if hung {
            tally.hangs += 1
            tally.findings.append(save(n, "hang", options, seeds))
        } else {
            tally.crashes += 1
            tally.findings.append(save(n, "crash (signal \(signal))", options, seeds))
        }
        return n + 1
    }
    if signal != 0 || (status >> 8) & 0xFF != 0 {
        FileHandle.standardError.write(Data("sfx-fuzz: a child failed outside an input (status \(status)); stopping\n".utf8))
        exit(2)
    }
    return max(next, end)
}

/// Saves input `n` under options.keep and returns a line describing the finding.
func save(_ n: Int, _ kind: String, _ options: Options, _ seeds: [[UInt8]]) -> String {
    let input = makeInput(n, seed: options.seed, seeds: seeds)
    try? FileManager.default.createDirectory(atPath: options.keep, withIntermediateDirectories: true)
    let path = "\(options.keep)/seed\(options.seed)-input\(n)-\(input.encoding.rawValue)"
    try? Data(input.bytes).write(to: URL(filePath: path))
    return "\(kind): input \(n) (\(input.encoding.rawValue)), saved as \(path)"
}

let options = parse(Array(CommandLine.arguments.dropFirst()))
if let child = options.child {
    runChild(from: child.from, count: child.count, directory: child.directory, seed: options.seed, crashAt: options.crashAt,
             memoryLimitKB: options.memoryLimit * 1024)
}

// A private directory for the seed files and the inputs (mkdtemp: mode 0700, unpredictable name).
var template = Array((FileManager.default.temporaryDirectory.path + "/sfx-fuzz-XXXXXX").utf8CString)
guard let made = mkdtemp(&template) else { fatalError("mkdtemp: \(String(cString: strerror(errno)))") }
let directory = String(cString: made)
do {
    try writeSeeds(to: directory)
} catch {
    FileHandle.standardError.write(Data("sfx-fuzz: cannot write the seed files: \(error)\n".utf8))
    try? FileManager.default.removeItem(atPath: directory)
    exit(1)
}
let seeds = readSeeds(directory)
let iterations = options.iterations ?? (options.seconds == nil ? 2_000 : Int.max)
let started = Date()
var tally = Tally()
var next = 0
while next < iterations {
    if let seconds = options.seconds, Date().timeIntervalSince(started) >= seconds { break }
    next = runBatch(from: next, end: min(iterations, next + options.batch), options: options, directory: directory, seeds: seeds, tally: &tally)
}
let elapsed = Date().timeIntervalSince(started)
let tried = tally.loaded + tally.refused + tally.crashes + tally.hangs + tally.messages + tally.memory
print(String(format: "sfx-fuzz: seed %llu, %d inputs in %.1f s (%.0f a second): %d loaded, %d refused, %d crashes, %d hangs, %d bad messages, %d over %d MB",
             options.seed, tried, elapsed, Double(tried) / max(elapsed, 0.001), tally.loaded, tally.refused, tally.crashes, tally.hangs,
             tally.messages, tally.memory, options.memoryLimit))
for encoding in encodings {
    let counts = tally.perFormat[encoding, default: (0, 0)]
    print("  \(encoding.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0)) \(counts.loaded) loaded, \(counts.refused) refused")
}
for finding in tally.findings { print("  " + finding) }
try? FileManager.default.removeItem(atPath: directory)
exit(tally.crashes + tally.hangs + tally.messages + tally.memory == 0 ? 0 : 1)
