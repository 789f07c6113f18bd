// swift-tools-version:6.0
// A game that embeds sfx, as the README shows: `swift build` here builds it against this checkout.
//   Game         the README's example (plays tock, coin.ogg from the working directory, and bell)
//   PlaySounds   plays the system sounds named on its command line, or every bundled one
//   GameTests    the headless test of docs/virtual-card.md, on sfx's virtual sound card (swift test)
import PackageDescription

let package = Package(
    name: "Game",
    dependencies: [
        .package(name: "sfx", path: "../.."),
    ],
    targets: [
        .executableTarget(name: "Game", dependencies: [.product(name: "SFX", package: "sfx")]),
        .executableTarget(name: "PlaySounds", dependencies: [.product(name: "SFX", package: "sfx")]),
        .testTarget(name: "GameTests", dependencies: [
            .product(name: "SFX", package: "sfx"),
            .product(name: "SFXTesting", package: "sfx"),
        ]),
    ]
)
