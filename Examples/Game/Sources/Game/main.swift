import Foundation                                       // URL
import SFX

let engine = try SoundEngine()                          // ALSA "default", 48 kHz, 128-frame periods × 3
engine.onEvent = { event in print(event) }              // no device yet, xruns, device lost/back… (or `engine.events`)
let tock = try engine.systemSound(named: "tock")        // a system sound: never disposed
let coin = try engine.load(contentsOf: URL(filePath: "coin.ogg"))   // a custom sound: a new SoundID

engine.play(tock)                                       // fire and forget, from any thread
let voice = engine.play(coin, volume: 0.8, pan: -0.3, group: .ui, priority: .high) { outcome in
    print(outcome)                                      // .finished, .stopped, .stolen or .rejected(why)
}                                                       // …delivered off the real-time thread
try voice.setVolume(0.4)                                // smoothed; out-of-range numbers throw
try voice.stop(fade: .milliseconds(20))

engine.alert(try engine.systemSound(named: "bell"))     // vibrates instead when muted
do { try engine.vibrate(.default) } catch { print(error) }   // one 400 ms buzz; .click, .doubleClick, waveforms
try engine.dispose(coin)                                // its voices fade out; freed once no voice reads it

engine.waitUntilIdle()                                  // before the program ends: let the bell ring out
engine.close()                                          // the device plays what it holds, then closes
