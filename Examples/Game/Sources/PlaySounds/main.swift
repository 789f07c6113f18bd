// PlaySounds [NAME…]: plays the system sounds named, one after another, or every bundled one at
// once; prints each sound's id, name and where it came from (a file, or /dev/null/built-in/… when
// it was synthesised because no Sounds directory is near the program).
import SFX

let engine = try SoundEngine()
let bundled = engine.library.systemSounds().filter { $0.id.map { $0.rawValue < 2000 } ?? false }.map(\.name)
let names = CommandLine.arguments.count > 1 ? Array(CommandLine.arguments.dropFirst()) : bundled
for name in names {
    let id = try engine.systemSound(named: name)
    print(id, name, try engine.library.systemSoundFile(named: name).file)
    engine.play(id)
    if CommandLine.arguments.count > 1 { engine.waitUntilIdle() }
}
engine.waitUntilIdle()
engine.close()
