import Foundation
import XCTest
@testable import SFXMedia

final class SoundThemeTests: TemporaryDirectoryTestCase {
    var root: TemporaryDirectory { directory }
    var environment: [String: String] {
        ["HOME": root.url.appending(path: "home").path, "XDG_DATA_DIRS": root.url.appending(path: "usr/share").path]
    }
    var home: String { "home/.local/share/sounds" }
    var system: String { "usr/share/sounds" }

    private func theme(_ base: String, _ name: String, _ index: String) throws {
        try root.write("\(base)/\(name)/index.theme", Data(index.utf8))
    }

    private func resolver(_ theme: String = "freedesktop", profile: String = "stereo", locale: String = "C", extra: [String] = []) -> SoundThemeResolver {
        SoundThemeResolver(theme: theme, environment: environment, outputProfile: profile, locale: locale, extraBaseDirectories: extra)
    }

    private func found(_ lookup: SoundLookup) -> String? {
        guard case .found(let sound) = lookup else { return nil }
        return String(sound.path.dropFirst(root.url.path.count + 1))
    }

    func testBaseDirectoriesFollowXDG() {
        XCTAssertEqual(SoundThemeResolver.xdgSoundDirectories(environment: ["HOME": "/h"]),
                       ["/h/.local/share/sounds", "/usr/local/share/sounds", "/usr/share/sounds"])
        XCTAssertEqual(SoundThemeResolver.xdgSoundDirectories(environment: ["HOME": "/h", "XDG_DATA_HOME": "/d", "XDG_DATA_DIRS": "/a:relative:/b"]),
                       ["/d/sounds", "/a/sounds", "/b/sounds"])
        XCTAssertEqual(resolver(extra: ["/bundle"]).baseDirectories.last, "/bundle")
        let installed: (String) -> Bool = { ["de_DE", "fr_FR.UTF-8"].contains($0) }
        XCTAssertEqual(SoundThemeResolver.messagesLocale(environment: ["LANG": "fr_FR.UTF-8", "LC_MESSAGES": "de_DE"], isInstalled: installed), "de_DE")
        XCTAssertEqual(SoundThemeResolver.messagesLocale(environment: [:]), "C")
    }

    /// libcanberra takes the locale the program got (setlocale), and the specification says
    /// LC_MESSAGES: a LANG naming a locale that is not installed gives C, not its text.
    func testALocaleThatIsNotInstalledIsC() {
        XCTAssertFalse(SoundThemeResolver.isInstalledLocale("xx_YY.UTF-8"))
        XCTAssertTrue(SoundThemeResolver.isInstalledLocale("C.UTF-8"))
        XCTAssertEqual(SoundThemeResolver.messagesLocale(environment: ["LANG": "xx_YY.UTF-8"]), "C")
        XCTAssertEqual(SoundThemeResolver.messagesLocale(environment: ["LANG": "C.UTF-8"]), "C.UTF-8")
        // The first variable set decides, installed or not: LC_MESSAGES is not skipped for LANG.
        XCTAssertEqual(SoundThemeResolver.messagesLocale(environment: ["LC_MESSAGES": "xx_YY", "LANG": "C.UTF-8"]), "C")
    }

    /// `Inherits=a # comment`: the comment is not theme names.
    func testACommentAfterAValueIsNotThemeNames() throws {
        try theme(system, "kiosk", "[Sound Theme]\nInherits=brand # our parent theme\nDirectories=stereo # the only one\n")
        try theme(system, "brand", "[Sound Theme]\nDirectories=stereo\n")
        try theme(system, "freedesktop", "[Sound Theme]\nDirectories=stereo\n")
        let chain = resolver("kiosk")
        XCTAssertEqual(chain.themes, ["kiosk", "brand", "freedesktop"])
        XCTAssertEqual(chain.directories.filter { $0.theme == "kiosk" }.map(\.directory), ["stereo"])
        XCTAssertEqual(IniFile.list("a, b # c d"), ["a", "b"])
    }

    /// A key given twice warns, naming the file and lines; every Directories line counts, the
    /// last Inherits holds.
    func testDuplicateKeysWarnAndDirectoriesAddUp() throws {
        try theme(system, "kiosk", "[Sound Theme]\nInherits=old\nDirectories=stereo\nInherits=brand\nDirectories=extra\n")
        try theme(system, "brand", "[Sound Theme]\nDirectories=stereo\n")
        try theme(system, "old", "[Sound Theme]\nDirectories=stereo\n")
        try root.write("\(system)/kiosk/extra/bell.oga")
        let chain = resolver("kiosk")
        XCTAssertEqual(chain.themes, ["kiosk", "brand"])
        XCTAssertEqual(chain.directories.filter { $0.theme == "kiosk" }.map(\.directory), ["stereo", "extra"])
        XCTAssertEqual(found(chain.lookup("bell")), "\(system)/kiosk/extra/bell.oga")
        let index = root.url.appending(path: "\(system)/kiosk/index.theme").path
        XCTAssertEqual(chain.warnings.count, 2, "\(chain.warnings)")
        XCTAssertTrue(chain.warnings.contains { $0.hasPrefix("\(index):2,4: Inherits is given 2 times") }, "\(chain.warnings)")
        XCTAssertTrue(chain.warnings.contains { $0.hasPrefix("\(index):3,5: Directories is given 2 times") }, "\(chain.warnings)")
        XCTAssertEqual(resolver("brand").warnings, [])
    }

    func testHomeThemeWinsOverSystemAndInheritsDepthFirstThenFreedesktop() throws {
        try theme(home, "kiosk", "[Sound Theme]\nInherits=brand, mid\nDirectories=stereo\n[stereo]\nOutputProfile=stereo\n")
        try theme(system, "kiosk", "[Sound Theme]\nDirectories=ignored\n")
        try theme(system, "brand", "[Sound Theme]\nInherits=base\nDirectories=stereo\n")
        try theme(system, "mid", "[Sound Theme]\nDirectories=stereo\n")
        try theme(system, "base", "[Sound Theme]\nInherits=kiosk\nDirectories=stereo\n")
        try theme(system, "freedesktop", "[Sound Theme]\nDirectories=stereo\n")
        let chain = resolver("kiosk")
        XCTAssertEqual(chain.themes, ["kiosk", "brand", "base", "mid", "freedesktop"])
        XCTAssertFalse(chain.directories.contains { $0.directory == "ignored" })

        try root.write("\(system)/freedesktop/stereo/bell.oga")
        try root.write("\(system)/mid/stereo/bell.oga")
        XCTAssertEqual(found(chain.lookup("bell")), "\(system)/mid/stereo/bell.oga")
        try root.write("\(system)/brand/stereo/bell.wav")
        XCTAssertEqual(found(chain.lookup("bell")), "\(system)/brand/stereo/bell.wav")
        try root.write("\(home)/kiosk/stereo/bell.ogg")
        guard case .found(let sound) = chain.lookup("bell") else { return XCTFail("bell not found") }
        XCTAssertEqual(sound.theme, "kiosk")
        XCTAssertEqual(sound.matchedName, "bell")
    }

    func testMissingThemeFallsBackToFreedesktopAndUnthemedFiles() throws {
        try theme(system, "freedesktop", "[Sound Theme]\nDirectories=stereo\n")
        try root.write("\(system)/freedesktop/stereo/bell.oga")
        try root.write("\(system)/loose.wav")
        let chain = resolver("no-such-theme")
        XCTAssertEqual(chain.themes, ["freedesktop"])
        XCTAssertEqual(found(chain.lookup("bell")), "\(system)/freedesktop/stereo/bell.oga")
        guard case .found(let loose) = chain.lookup("loose") else { return XCTFail("unthemed file not found") }
        XCTAssertNil(loose.theme)
        XCTAssertEqual(chain.lookup("nothing"), .notFound)
        XCTAssertEqual(chain.lookup("../escape"), .notFound)
    }

    func testOutputProfileOrder() throws {
        try theme(system, "t", """
            [Sound Theme]
            Directories=stereo 5.1 any
            [stereo]
            OutputProfile=stereo
            [5.1]
            OutputProfile=5.1
            """)
        try root.write("\(system)/t/stereo/a.oga")
        try root.write("\(system)/t/5.1/a.oga")
        try root.write("\(system)/t/any/b.oga")
        try root.write("\(system)/t/stereo/b.oga")
        try root.write("\(system)/t/c.oga")
        let surround = resolver("t", profile: "5.1")
        XCTAssertEqual(found(surround.lookup("a")), "\(system)/t/5.1/a.oga")
        XCTAssertEqual(found(resolver("t").lookup("a")), "\(system)/t/stereo/a.oga")
        // A directory without OutputProfile matches any profile, in list order.
        XCTAssertEqual(found(surround.lookup("b")), "\(system)/t/any/b.oga")
        XCTAssertEqual(found(resolver("t").lookup("b")), "\(system)/t/stereo/b.oga")
        XCTAssertEqual(found(surround.lookup("c")), "\(system)/t/c.oga")
        try root.write("\(system)/t/stereo/d.oga")
        XCTAssertEqual(found(resolver("t", profile: "quad").lookup("d")), "\(system)/t/stereo/d.oga")
    }

    func testNameShorteningLocalesSuffixesAndDisabled() throws {
        try theme(system, "t", "[Sound Theme]\nDirectories=stereo\n")
        let dir = "\(system)/t/stereo"
        try root.write("\(dir)/message.oga")
        let chain = resolver("t", locale: "de_DE.UTF-8@euro")
        guard case .found(let shortened) = chain.lookup("message-new-instant") else { return XCTFail("not shortened") }
        XCTAssertEqual(shortened.matchedName, "message")
        XCTAssertEqual(shortened.requestedName, "message-new-instant")
        // Each file added is more specific than the last and must win: locale variants for the
        // shortened name, then the full name with no locale (name shortening is outside the
        // locale loop), then suffixes in reverse order of preference (.oga before .ogg before .wav).
        for added in ["C/message-new.oga", "de/message-new.oga", "de_DE.UTF-8/message-new.oga",
                      "de_DE.UTF-8@euro/message-new.wav", "message-new-instant.wav",
                      "message-new-instant.ogg", "message-new-instant.oga"] {
            try root.write("\(dir)/\(added)")
            XCTAssertEqual(found(chain.lookup("message-new-instant")), "\(dir)/\(added)")
        }
        try root.write("\(dir)/message-new-instant.disabled")
        guard case .disabled(let off) = chain.lookup("message-new-instant") else { return XCTFail("not disabled") }
        XCTAssertTrue(off.path.hasSuffix(".disabled"))
    }

    func testBaseDirectoryIsOutsideNameLoop() throws {
        // libcanberra tries every base directory for a place before shortening the name there.
        try theme(home, "t", "[Sound Theme]\nDirectories=stereo\n")
        try root.write("\(home)/t/stereo/bell.oga")
        try root.write("\(system)/t/stereo/bell-ring.oga")
        XCTAssertEqual(found(resolver("t").lookup("bell-ring")), "\(home)/t/stereo/bell.oga")
        // An extra base directory (the bundled Sounds/) is searched last.
        let bundle = root.url.appending(path: "bundle").path
        try root.write("bundle/t/stereo/tock.wav")
        XCTAssertEqual(found(resolver("t", extra: [bundle]).lookup("tock")), "bundle/t/stereo/tock.wav")
    }

    func testAllSoundsListsWhatLookupGives() throws {
        try theme(system, "t", "[Sound Theme]\nInherits=freedesktop\nDirectories=stereo\n")
        try theme(system, "freedesktop", "[Sound Theme]\nDirectories=stereo\n")
        try root.write("\(system)/t/stereo/bell.wav")
        try root.write("\(system)/freedesktop/stereo/bell.oga")
        try root.write("\(system)/freedesktop/stereo/dialog-error.oga")
        try root.write("\(system)/t/stereo/camera-shutter.disabled")
        try root.write("\(system)/t/stereo/readme.txt")
        let listed = resolver("t").allSounds()
        XCTAssertEqual(listed.map { $0.sound!.requestedName }, ["bell", "camera-shutter", "dialog-error"])
        XCTAssertEqual(listed[0].sound?.theme, "t")
        XCTAssertEqual(listed[2].sound?.theme, "freedesktop")
        guard case .disabled = listed[1] else { return XCTFail("camera-shutter should be disabled") }
    }

    func testInstalledFreedesktopTheme() throws {
        guard FileManager.default.fileExists(atPath: "/usr/share/sounds/freedesktop/index.theme") else {
            throw MissingDependency(description: "sound-theme-freedesktop is not installed; script/test installs it")
        }
        let system = SoundThemeResolver(theme: "freedesktop", environment: ["HOME": root.url.path, "XDG_DATA_DIRS": "/usr/share"])
        XCTAssertEqual(system.lookup("bell"), .found(ThemedSound(requestedName: "bell", matchedName: "bell",
                                                                  path: "/usr/share/sounds/freedesktop/stereo/bell.oga", theme: "freedesktop")))
        guard case .found(let shortened) = system.lookup("message-new-instant-foo") else { return XCTFail("no match") }
        XCTAssertEqual(shortened.matchedName, "message-new-instant")
        XCTAssertEqual(shortened.path, "/usr/share/sounds/freedesktop/stereo/message-new-instant.oga")
        let cue = try AudioDecoder(format: .standard).decode(contentsOf: URL(filePath: shortened.path))
        XCTAssertGreaterThan(cue.frameCount, 0)
        XCTAssertGreaterThan(system.allSounds().count, 20)
    }
}
