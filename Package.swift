// swift-tools-version:6.0
// sfx — a low-latency sound-effects and alert engine for Linux.
//
// Layers (each target imports only the layers below it):
//   1. C       CALSA, CSndFile, CSoxr, CEBUR128, CFFmpeg, CGPIOD (system libraries; all but alsa-lib loaded on first use
//              by CSFXMedia, CSFXFFmpeg, CSFXHaptics; libcurl by CSFXCurl; libpulse by CSFXPulse; libmysofa by CSFXMySofa; libudev by CSFXUdev; libspeexdsp by CSFXVoice; each through CSFXOnDemand); CSFXSystem, CSFXALSA, CSFXHaptics (shims), SFXSystem (typed checks over them);
//              SFXCard (the virtual sound card plugin, linked as libsfxcard.so by SFXCardPlugin) and SFXCardSupport (its Swift side); SFXTesting (both, for games' tests)
//   2. Core    SFXCore: cues, the mixer, lock-free queues — no devices, no files
//   3. Media   SFXSoundDesign (the bundled sounds' synthesis), SFXMedia (decode, resample, encode, themes)
//   4. Device  SFXDevice: the playback and capture device protocols; ALSA, the null device, mixer control
//   5. Haptics SFXHaptics: vibration patterns and backends (evdev rumble, GPIO, sysfs, command, callback)
//   6. Engine  SFXPlayback (SoundEngine, the sound library, alerts, the output thread), SFXRecording (Recorder, meters,
//              upload), SFX: the public face, both re-exported with the settings that configure them
//   7. Front ends  the C API (CSFXAPI's sfx.h, SFXC, the product libsfx.so); the `sfx` command, the sound generator
import PackageDescription

/// What Debian's hardening asks of a shipped ELF file (lintian's hardening-no-relro): the
/// relocated data made read-only once the loader has relocated it (RELRO), and every symbol
/// bound at load (so the table is read-only too). Linked by lld: GNU ld makes no RELRO
/// segment here, as swiftc marks `.rodata` writable, and gold cannot pack relocations.
let hardening = ["-Xlinker", "-z", "-Xlinker", "relro", "-Xlinker", "-z", "-Xlinker", "now"]

/// Linker flags that link the Swift runtime, FoundationEssentials (no target links Foundation, so
/// no ICU) and the C++ runtime they need from their archives, their symbols hidden in the result
/// (SFXCommand, SFXC). The modules are compiled
/// against the toolchain's shared-library modules, whose link entries name fewer archives than
/// the static ones need: the group names them all; -lstdc++ means libstdc++'s archive
/// (Sources/SFXCommand/link).
let staticSwiftRuntime: [String] = [
    "-static-stdlib", "-use-ld=lld", "-L\(Context.packageDirectory)/Sources/SFXCommand/link", "-Xclang-linker", "-static-libgcc",
    "-Xlinker", "--exclude-libs", "-Xlinker", "ALL",
    "-Xlinker", "--start-group", "-Xlinker", "-l:libstdc++.a",
    "-lFoundationEssentials", "-l_FoundationCShims", "-l_FoundationCollections",
    "-lswiftDispatch", "-ldispatch", "-lBlocksRuntime",
    "-lswiftSynchronization", "-lswift_Concurrency", "-lswift_StringProcessing", "-lswift_RegexParser", "-lswiftGlibc",
    "-lswiftCore", "-Xlinker", "--end-group",
]

let package = Package(
    name: "sfx",
    products: [
        .library(name: "SFX", targets: ["SFX"]),
        .executable(name: "sfx", targets: ["SFXCommand"]),
        .executable(name: "sfx-make-sounds", targets: ["SFXMakeSounds"]),
        // `sfx` as installed: a small C front that plays through the daemon without Swift's
        // start-up and runs the Swift program (installed as libexec/sfx) for everything else.
        .executable(name: "sfx-front", targets: ["SFXFront"]),
        .executable(name: "sfx-bench", targets: ["SFXBench"]),
        .executable(name: "sfx-fuzz", targets: ["SFXFuzz"]),
        // The virtual sound card: an ALSA external plugin (ioplug PCM + ctl_ext mixer), linked
        // without the Swift runtime (SFXCardPlugin).
        .library(name: "sfxcard", type: .dynamic, targets: ["SFXCardPlugin"]),
        // For games' own tests: the virtual card (VirtualCard) and, in the same library, its plugin,
        // so a test target that depends on it gets libSFXTesting.so built beside its test binary.
        .library(name: "SFXTesting", type: .dynamic, targets: ["SFXTesting"]),
        // The C API: sfx.h and libSFXC.so, whose SONAME is libsfx.so.0 (a product cannot share the
        // command's name); script/install installs it as libsfx.so.0.x.y with its links.
        .library(name: "SFXC", type: .dynamic, targets: ["SFXC"]),
    ],
    targets: [
        // 1. C libraries from Debian.
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CSndFile", providers: [.apt(["libsndfile1-dev"])]),   // headers only: see CSoxr
        // Headers only, like CFFmpeg: CSFXMedia loads libsndfile, libsoxr and libebur128 on first
        // use, and CSFXHaptics libgpiod (linked, they cost every command about 1 ms at start-up).
        .systemLibrary(name: "CSoxr", providers: [.apt(["libsoxr-dev"])]),
        .systemLibrary(name: "CEBUR128", providers: [.apt(["libebur128-dev"])]),
        // FFmpeg's headers only: sfx does not link FFmpeg (its libraries cost every command ~35 ms
        // to load); CSFXFFmpeg loads them on first use and defines the functions sfx calls.
        .systemLibrary(name: "CFFmpeg", providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswresample-dev"])]),
        // A library loaded on first use, once, with its one-line error (a header, sfx_on_demand.h):
        // the loaders of CSFXFFmpeg, CSFXCurl, SFXCard, CSFXPulse, CSFXMedia, CSFXHaptics and CSFXMySofa.
        .target(name: "CSFXOnDemand"),
        .target(name: "CSFXFFmpeg", dependencies: ["CFFmpeg", "CSFXOnDemand"]),
        // HTTP(S) downloads and uploads over libcurl, whose functions it defines, loading
        // libcurl.so.4 at the first call (checked against curl.h: libcurl4-openssl-dev, in
        // script/common.sh); nothing links libcurl, so no program loads it at start-up.
        .target(name: "CSFXCurl", dependencies: ["CSFXOnDemand"]),
        .target(
            name: "SFXCard",
            dependencies: ["CSFXOnDemand"],
            cSettings: [.define("PIC"), .unsafeFlags(["-fvisibility=default"])],
            // libsndfile and libsoxr (a capture file's decoding and resampling) are loaded when a
            // capture stream with a file opens: pcm.c.
            linkerSettings: [.linkedLibrary("asound"), .linkedLibrary("m")]
        ),

        // libsfxcard.so as ALSA loads it into any client (aplay too): C alone. swiftc, which links
        // every product, would add the Swift runtime (libswiftCore.so, about 2 ms to load and start
        // in a C program, as much as all of aplay) and its start-up object; -nostartfiles leaves
        // the object out and -static-stdlib takes the runtime from archives, of which nothing is
        // used, so nothing is linked; the libstdc++ its arguments name is linked only if needed
        // (Sources/SFXCardPlugin/link), and it is not. These flags are this product's alone:
        // SFXTesting, which holds the plugin beside Swift code, links the card without them.
        .target(name: "SFXCardPlugin", dependencies: ["SFXCard"], publicHeadersPath: ".",
                linkerSettings: [.unsafeFlags(["-nostartfiles", "-static-stdlib", "-L\(Context.packageDirectory)/Sources/SFXCardPlugin/link"])]),

        // The virtual card's Swift side: writes its configuration, reads its recordings and events.
        .target(name: "SFXCardSupport", dependencies: ["CSFXSystem", "SFXSystem"]),
        // What games' tests import: SFXCardSupport, with the plugin linked in.
        .target(name: "SFXTesting", dependencies: ["SFXCardSupport", "SFXCard"]),

        // Small C shims for what Swift cannot import.
        .target(name: "CSFXSystem"),
        // Typed checks over system calls shared by the layers above (which files may be loaded).
        .target(name: "SFXSystem", dependencies: ["CSFXSystem"]),
        .target(name: "CSFXALSA", linkerSettings: [.linkedLibrary("asound")]),
        // Sound servers: libpulse introspection (PulseAudio, or PipeWire through pipewire-pulse).
        .target(name: "CSFXPulse", dependencies: ["CSFXOnDemand"]),   // libpulse: loaded on first use
        // SOFA files (HRTF sets) through libmysofa, loaded on first use (checked against mysofa.h:
        // libmysofa-dev, in script/common.sh).
        .target(name: "CSFXMySofa", dependencies: ["CSFXOnDemand"]),
        // The kernel's sound devices through a libudev netlink monitor (libudev.so.1 loaded on
        // first use, checked against libudev.h: libudev-dev, in script/common.sh): CardWatcher.
        .target(name: "CSFXUdev", dependencies: ["CSFXOnDemand"]),
        // Voice processing (noise suppression, automatic gain) through speexdsp's preprocessor,
        // libspeexdsp.so.1 loaded on first use (checked against speex_preprocess.h:
        // libspeexdsp-dev, in script/common.sh): RecorderSettings.voiceProcessing.
        .target(name: "CSFXVoice", dependencies: ["CSFXOnDemand"]),

        // Test support: counts heap calls made on one chosen thread (the real-time thread).
        .target(name: "CAllocationTrap", path: "Tests/Support/CAllocationTrap"),
        // Test support in Swift (Foundation only, no engine layer): running a program to its end,
        // the built products beside the test bundle, an ELF file's links and symbols.
        .target(name: "SFXTestSupport", path: "Tests/Support/SFXTestSupport"),

        // 2. Core.
        // Mixing kernels for AVX2, chosen at run time (the same samples as SFXCore's portable code).
        .target(name: "CSFXKernels"),
        .target(name: "SFXCore", dependencies: ["CSFXKernels"]),

        // 3. Media.
        .target(name: "SFXSoundDesign"),
        // Keeps libmpg123 (under libsndfile) from printing to stderr: see mpg123_quiet.c; its
        // mpg123_new must be the one libsndfile finds, also now that libsndfile is loaded on
        // first use (on_demand.c) rather than linked, which made the linker export it.
        .target(name: "CSFXMedia", dependencies: ["CSFXOnDemand"], linkerSettings: [.unsafeFlags(["-Xlinker", "--export-dynamic-symbol=mpg123_new"])]),
        .target(name: "SFXMedia", dependencies: ["SFXCore", "CSndFile", "CSoxr", "CEBUR128", "CFFmpeg", "CSFXFFmpeg", "CSFXCurl", "CSFXMedia", "CSFXMySofa", "SFXSystem"]),

        // 4. Device.
        .target(name: "SFXDevice", dependencies: ["SFXCore", "SFXSystem", "CALSA", "CSFXALSA", "CSFXPulse", "CSFXUdev"]),

        // 5. Haptics.
        .systemLibrary(name: "CGPIOD", providers: [.apt(["libgpiod-dev"])]),   // headers only: see CSoxr
        .target(name: "CSFXHaptics", dependencies: ["CSFXOnDemand"]),
        .target(name: "SFXHaptics", dependencies: ["CSFXHaptics", "CGPIOD", "CSFXSystem", "SFXSystem"]),

        // 6. Engine. SFXPlayback: the engine, its sound library and alerts, the output thread;
        // SFXRecording: the recorder, its capture loop, meters and upload (over SFXPlayback, for the
        // prompt tone and the engine's device choice); SFX: both, re-exported, and the settings
        // that configure both. `import SFX` is what applications, the C API, the daemon and the
        // command import.
        .target(name: "SFXPlayback", dependencies: ["SFXCore", "SFXMedia", "SFXSoundDesign", "SFXDevice", "SFXHaptics", "CSFXSystem", "SFXSystem"]),
        .target(name: "SFXRecording", dependencies: ["SFXPlayback", "SFXCore", "SFXMedia", "SFXDevice", "CSFXCurl", "CSFXSystem", "SFXSystem", "CSFXVoice", "SFXCardSupport"]),
        .target(name: "SFX", dependencies: ["SFXPlayback", "SFXRecording", "SFXSystem"]),

        // 7. Front ends. The C API: sfx.h and what needs no engine in C, the rest in Swift
        // (@_cdecl). The SONAME flag is SFXC's alone: no other product links SFXC.
        .target(name: "CSFXAPI"),
        // libsfx.map exports sfx.h's functions alone.
        // The Swift runtime and FoundationEssentials are linked in, and hidden (`--exclude-libs ALL`), as for
        // the command: a C game ships libsfx.so without a Swift toolchain beside it, and another
        // Swift library in the same process keeps its own runtime. `-z nodelete`: dlclose leaves
        // it loaded, since that runtime's threads (Dispatch's workers) outlive any engine.
        .target(name: "SFXC", dependencies: ["SFX", "CSFXAPI", "SFXSystem"], exclude: ["libsfx.map"],
                linkerSettings: [.unsafeFlags(["-Xlinker", "-soname=libsfx.so.0", "-Xlinker", "-z", "-Xlinker", "nodelete"] + hardening + [
                                               "-Xlinker", "--version-script=\(Context.packageDirectory)/Sources/SFXC/libsfx.map"]
                                              + staticSwiftRuntime)]),
        // The daemon (`sfx serve`): its wire protocol in C (shared with the front), server and client.
        .target(name: "CSFXProtocol"),
        .target(name: "SFXDaemon", dependencies: ["SFX", "CSFXProtocol", "CSFXSystem", "SFXSystem"]),
        // The front (bin/sfx, a C program) is the first thing every `sfx` command runs: the Swift
        // runtime swiftc links into every product (libswiftCore.so and libstdc++) made up most of
        // its round trip to the daemon (2.5 ms; 1.1 ms without, `perf stat -r 30 sfx-front play
        // tock`). As for the card's plugin: no Swift start-up object, the runtime's archives of
        // which nothing is used, and libstdc++ only if needed (Sources/SFXCardPlugin/link).
        .executableTarget(name: "SFXFront", dependencies: ["CSFXProtocol"],
                          linkerSettings: [.unsafeFlags(["-nostartfiles", "-static-stdlib", "-L\(Context.packageDirectory)/Sources/SFXCardPlugin/link"])]),
        // The Swift program links the Swift runtime and FoundationEssentials statically: loading and
        // relocating them as shared libraries took about 7 of the 21 ms before its first line ran
        // (sfx-bench --exec). The modules are compiled against the toolchain's shared-library
        // modules, whose link entries name fewer archives than the static ones need: the group
        // names them all. (script/install copies the program alone; it needs no Swift runtime.)
        // Its 88,000 relative relocations are packed (DT_RELR: lld, glibc 2.36 as on Debian
        // 12): 15 KB read at start instead of 1.9 MB, about 0.2 ms. The C++ runtime the Swift
        // runtime needs comes from its archives too (libstdc++.a through Sources/SFXCommand/link,
        // -static-libgcc): loading and relocating libstdc++.so.6 took about 0.5 ms of every start.
        .executableTarget(name: "SFXCommand", dependencies: ["SFX", "SFXCardSupport", "SFXDaemon", "SFXSystem"], exclude: ["link"],
                          linkerSettings: [.unsafeFlags(["-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"] + hardening + ["-Xlinker", "--version-script=\(Context.packageDirectory)/Sources/SFXCommand/link/exports.map"] + staticSwiftRuntime)]),
        .executableTarget(name: "SFXMakeSounds", dependencies: ["SFXSoundDesign"]),
        // The voice-message flow as a program (Examples/VoiceMessage): record with a prompt, meter
        // and count-up, a standard M4A, a form upload with a token, a download played with a bell.
        .executableTarget(name: "VoiceMessage", dependencies: ["SFX"], path: "Examples/VoiceMessage/Sources/VoiceMessage"),
        // The benchmarks: sfx beside OpenAL Soft, SDL_mixer and a raw-ALSA floor (Bench/run).
        .executableTarget(name: "SFXBench", dependencies: ["SFX", "SFXCardSupport", "SFXBenchMethod"], path: "Bench/Sources/SFXBench"),
        // The benchmark's statistics and rules, pure functions (Bench/Tests/SFXBenchMethodTests).
        .target(name: "SFXBenchMethod", path: "Bench/Sources/SFXBenchMethod"),

        // Damaged sound files of every format, for as long as you like (Tests/Fuzz/main.swift).
        .executableTarget(name: "SFXFuzz", dependencies: ["SFXMedia"], path: "Tests/Fuzz"),

        .testTarget(name: "SFXCoreTests", dependencies: ["SFXCore", "CSFXKernels"]),
        .testTarget(name: "SFXSoundDesignTests", dependencies: ["SFXSoundDesign", "SFXMedia"]),
        .testTarget(name: "SFXMediaTests", dependencies: ["SFXMedia", "SFXTestSupport"]),
        .testTarget(name: "SFXCardTests", dependencies: ["CALSA", "SFXCardSupport", "SFXTestSupport"]),
        .testTarget(name: "SFXDeviceTests", dependencies: ["SFXDevice", "SFXCardSupport"]),
        .testTarget(name: "SFXPlaybackTests", dependencies: ["SFX", "SFXPlayback", "SFXCardSupport", "CAllocationTrap", "SFXTestSupport"]),
        .testTarget(name: "SFXHapticsTests", dependencies: ["SFXHaptics", "CSFXHaptics", "SFXTestSupport"]),
        .testTarget(name: "SFXCommandTests", dependencies: ["SFXMedia", "SFXTestSupport"]),
        // The recorder, meters and upload through the virtual card's capture (and `sfx record`).
        .testTarget(name: "SFXRecordingTests", dependencies: ["SFX", "SFXRecording", "SFXPlayback", "SFXMedia", "SFXCardSupport", "CSndFile", "CFFmpeg", "CAllocationTrap", "SFXTestSupport"]),
        // The daemon in-process and as `sfx serve`, on the virtual card: protocol, fuzzing, peers, fallback.
        .testTarget(name: "SFXDaemonTests", dependencies: ["SFXDaemon", "CSFXProtocol", "SFXCardSupport", "SFXTestSupport"]),
        // A separate game package that depends on this checkout by path, built and run on the virtual card.
        .testTarget(name: "SFXEmbeddingTests", dependencies: ["SFXTesting", "SFXMedia", "SFXTestSupport"]),
        // Against a private PipeWire (Tests/server/pipewire-session), through the pipewire and pulse ALSA plugins.
        .testTarget(name: "SFXServerTests", dependencies: ["SFX", "SFXDevice", "SFXTestSupport"]),
        // The C API from C: script/install into a temporary prefix, C programs built with its
        // pkg-config file and run on the virtual card; sfx.h as C99 and C++17.
        .testTarget(name: "SFXCAPITests", dependencies: ["SFXCardSupport", "SFXTestSupport"], exclude: ["C"]),
        .testTarget(name: "SFXBenchMethodTests", dependencies: ["SFXBenchMethod"], path: "Bench/Tests/SFXBenchMethodTests"),
    ]
)
