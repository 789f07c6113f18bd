// SFXTesting: the virtual sound card for a game's own tests, headless, through the real alsa-lib.
//
//     // Package.swift: .testTarget(name: "GameTests", dependencies: [
//     //     .product(name: "SFX", package: "sfx"), .product(name: "SFXTesting", package: "sfx")])
//     import SFXTesting
//
//     let card = try VirtualCard()          // a private directory; the plugin is libSFXTesting.so itself
//     card.makeCurrent()                    // ALSA's "default" is now the card
//     let engine = try SoundEngine()        // … play …
//     let onsets = try card.events()        // when each sound reached the card's "DAC"
//     let played = try WAVAudio(contentsOf: card.recordingURL)
//     try card.remove()
//
// The product is a dynamic library holding both the card's Swift side (SFXCardSupport, re-exported
// here) and its ALSA plugin (SFXCard), so SwiftPM builds libSFXTesting.so beside the test binary
// and `VirtualCard.locatePlugin()` finds it there.
@_exported import SFXCardSupport
