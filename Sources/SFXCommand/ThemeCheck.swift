import SFXMedia

/// `--theme NAME` checked before it is used: a theme that is not installed fails in one line
/// (the library would quietly fall back to freedesktop), and a theme's index.theme problems
/// are warnings.
enum ThemeCheck {
    /// Throws unless `theme` is the library's own (`defaultTheme`, always there) or an
    /// installed theme: `<sounds directory>/<theme>/index.theme` in an XDG data directory.
    static func installed(_ theme: String, default defaultTheme: String, environment: [String: String]) throws {
        guard theme != defaultTheme else { return }
        let resolver = SoundThemeResolver(theme: theme, environment: environment)
        guard resolver.themes.first != theme else { return }
        let places = resolver.baseDirectories.map { "\($0)/\(theme)/index.theme" }.joined(separator: ", ")
        throw Failure("sound theme '\(theme)' is not installed (no \(places)); `sfx list` without --theme lists the sounds there are")
    }

    /// What the theme chain's index.theme files get wrong, one line each.
    static func warnings(theme: String, environment: [String: String]) -> [String] {
        SoundThemeResolver(theme: theme, environment: environment).warnings
    }
}
