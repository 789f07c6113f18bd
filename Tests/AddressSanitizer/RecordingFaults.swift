// The recorder's encoders on their failure paths, built with AddressSanitizer by
// Tests/SFXRecordingTests/FaultTests.swift together with the SFXMedia sources they need (not a
// target of the package; it is compiled as the program's main.swift). It feeds a recording as Recorder's writer thread does: 4,096-frame
// pieces, a checkpoint every quarter second, and finish() after the first error, which on a
// full disk (or a file-size limit) comes from a real write.
//
//     RecordingFaults FORMAT CHANNELS SECONDS FILE
//
// Prints "failed: <the error's line>" when a write failed, then "frames: N" (frames given to the
// encoder); exits 0 once the file is finished, 1 when it cannot be created.
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 5, let format = RecordingFormat(rawValue: arguments[1]), let channels = Int(arguments[2]),
      let seconds = Double(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: RecordingFaults m4a|opus|mp3|flac|wav|vorbis CHANNELS SECONDS FILE\n".utf8))
    exit(2)
}
signal(SIGXFSZ, SIG_IGN)
let rate = 48_000
let encoder: any RecordingEncoder = {
    do {
        return try RecordingFile.create(URL(filePath: arguments[4]), encoding: RecordingEncoding(format: format, sampleRate: rate, channels: channels))
    } catch {
        print("cannot create: \(error)")
        exit(1)
    }
}()
let piece = 4_096
var samples = [Float](repeating: 0, count: piece * channels)
var frame = 0
var failure: (any Error)?
while failure == nil, frame < Int(seconds * Double(rate)) {
    for i in 0..<piece {
        let t = Double(frame + i) / Double(rate)
        for c in 0..<channels {
            samples[i * channels + c] = Float(0.3 * sin(2 * .pi * (440 + 110 * Double(c)) * t) + 0.2 * sin(2 * .pi * (200 + 300 * t) * t))
        }
    }
    frame += piece
    do {
        try samples.withUnsafeBufferPointer { try encoder.append($0) }
        if (frame / piece) % 3 == 0 { try encoder.checkpoint() }
    } catch {
        failure = error
    }
}
do { try encoder.finish() } catch { failure = failure ?? error }
if let failure { print("failed: \(failure)") }
print("frames: \(encoder.framesWritten)")
