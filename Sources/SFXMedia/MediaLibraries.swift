import CSFXMedia

/// The audio libraries sfx loads on first use (Sources/CSFXMedia/on_demand.c).
public enum MediaLibraries {
    /// Loads libsndfile on a thread of its own, for a command that is about to decode while it
    /// does the rest of its start-up; a decode that comes first waits for it.
    public static func preload() { sfx_media_preload() }
}
