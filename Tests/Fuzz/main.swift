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
// goes on after it.

struct Options {
    var iterations: Int? = nil
    var seconds: Double? = nil
    var seed: UInt64 = 1
    var batch = 250
    var keep = "sfx-fuzz-findings"
    var hangSeconds = 20.0
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
/// Vorbis, Opus, MP3), 0.1 s of a stereo chord each, written once per run.
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
    }
}

/// Input `n`: seed file n mod the encodings, damaged one way chosen by the generator.
func makeInput(_ n: Int, seed: UInt64, seeds: [[UInt8]]) -> (encoding: AudioFileEncoding, bytes: [UInt8]) {
    var random = Generator(seed: seed, input: n)
    let which = n % seeds.count
    var bytes = seeds[which]
    switch Int.random(in: 0..<6, using: &random) {
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
    default:  // the start of one format spliced onto the rest of another
        let other = seeds[Int.random(in: 0..<seeds.count, using: &random)]
        let cut = Int.random(in: 0..<min(other.count, bytes.count), using: &random)
        bytes = Array(other.prefix(cut)) + Array(bytes.dropFirst(cut))
    }
    return (encodings[which], bytes)
}

func readSeeds(_ directory: String) -> [[UInt8]] {
    encodings.map { encoding in
        [UInt8]((try? Data(contentsOf: URL(filePath: "\(directory)/seed-\(encoding.rawValue)"))) ?? Data([0]))
    }
}

/// Child: decodes inputs and reports each on stdout: "start N", then "loaded N", "refused N"
/// or "message N <the multi-line message, escaped>".
func runChild(from: Int, count: Int, directory: String, seed: UInt64, crashAt: Int?) -> Never {
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
        emit("\(outcome) \(n)")
    }
    try? FileManager.default.removeItem(at: file)
    exit(0)
}

struct Tally {
    var loaded = 0, refused = 0, crashes = 0, hangs = 0, messages = 0
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
    let arguments = [executable, "--child", String(from), String(end - from), directory, "--seed", String(options.seed)]
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
                default: break
                }
            }
        } else if Date().timeIntervalSince(lastProgress) > options.hangSeconds {
            hung = true
            kill(pid, SIGKILL)
            break
        }
    }
    close(pipeEnds[0])
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let signal = status & 0x7F
    if let n = current, hung || signal != 0 {
        if hung { tally.hangs += 1 } else { tally.crashes += 1 }
        tally.findings.append(save(n, hung ? "hang" : "crash (signal \(signal))", options, seeds))
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
    runChild(from: child.from, count: child.count, directory: child.directory, seed: options.seed, crashAt: options.crashAt)
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
let tried = tally.loaded + tally.refused + tally.crashes + tally.hangs + tally.messages
print(String(format: "sfx-fuzz: seed %llu, %d inputs in %.1f s (%.0f a second): %d loaded, %d refused, %d crashes, %d hangs, %d bad messages",
             options.seed, tried, elapsed, Double(tried) / max(elapsed, 0.001), tally.loaded, tally.refused, tally.crashes, tally.hangs, tally.messages))
for encoding in encodings {
    let counts = tally.perFormat[encoding, default: (0, 0)]
    print("  \(encoding.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0)) \(counts.loaded) loaded, \(counts.refused) refused")
}
for finding in tally.findings { print("  " + finding) }
try? FileManager.default.removeItem(atPath: directory)
exit(tally.crashes + tally.hangs + tally.messages == 0 ? 0 : 1)
