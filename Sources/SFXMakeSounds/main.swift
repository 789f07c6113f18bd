// sfx-make-sounds: writes sfx's bundled sound theme (see SystemSoundTheme) into a folder.
//
//   sfx-make-sounds [OUTPUT_DIR]      default: ./Sounds
//
// Prints one line per sound. Running it twice gives byte-identical files.
import Foundation
import SFXSoundDesign

let usage = "usage: sfx-make-sounds [OUTPUT_DIR]   (writes the sfx sound theme; default OUTPUT_DIR: Sounds)"
let arguments = Array(CommandLine.arguments.dropFirst())

if arguments.contains("-h") || arguments.contains("--help") {
    print(usage)
    exit(0)
}
if arguments.count > 1 || arguments.first?.hasPrefix("-") == true {
    FileHandle.standardError.write(Data("sfx-make-sounds: expected at most one argument, the output folder\n\(usage)\n".utf8))
    exit(64)
}

let output = URL(fileURLWithPath: arguments.first ?? "Sounds", isDirectory: true)
let theme = SystemSoundTheme()
do {
    for file in theme.files {
        let url = output.appendingPathComponent(file.path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(file.bytes).write(to: url)
    }
} catch {
    FileHandle.standardError.write(Data("sfx-make-sounds: cannot write into \(output.path): \(error.localizedDescription); choose a writable folder\n".utf8))
    exit(1)
}
for sound in theme.sounds {
    let ms = Int((sound.duration * 1000).rounded())
    let name = sound.spec.name.padding(toLength: 20, withPad: " ", startingAt: 0)
    print("\(sound.spec.id)  \(name) \(String(repeating: " ", count: max(0, 5 - String(ms).count)))\(ms) ms  \(output.appendingPathComponent(sound.path).path)")
}
print("wrote \(theme.sounds.count) sounds, index.theme and README.md to \(output.path)")
