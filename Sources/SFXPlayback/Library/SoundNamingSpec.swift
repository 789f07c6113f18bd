/// Stable numeric ids for the event names of the freedesktop Sound Naming Specification.
///
/// Like iOS's SystemSoundIDs, every system sound has a number that never changes. Sounds that
/// sfx bundles take their ids (1000–1999) from the bundled theme's `[X-SFX Sounds]` group; every
/// other name of the naming specification takes its id from this table, from 2000 on, whatever
/// installed theme provides the file. The table is append-only: a name keeps its id forever.
enum SoundNamingSpec {
    static let firstID: UInt32 = 2000

    /// In the specification's order (alerts, notifications, actions, input feedback, games).
    static let names: [String] = [
        // Alerts
        "network-connectivity-lost", "network-connectivity-error", "dialog-error", "battery-low",
        "suspend-error", "software-update-urgent", "power-unplug-battery-low",
        // Notifications
        "message-new-instant", "message-new-email", "complete-media-burn", "complete-media-burn-test",
        "complete-media-rip", "complete-media-format", "complete-download", "complete-copy",
        "complete-scan", "phone-incoming-call", "phone-outgoing-busy", "phone-hangup", "phone-failure",
        "network-connectivity-established", "system-bootup", "system-ready", "system-shutdown",
        "search-results", "search-results-empty", "desktop-login", "desktop-logout",
        "desktop-screen-lock", "desktop-screen-unlock", "service-login", "service-logout",
        "battery-caution", "battery-full", "dialog-warning", "dialog-information", "dialog-question",
        "software-update-available", "device-added", "device-added-audio", "device-added-media",
        "device-removed", "device-removed-audio", "device-removed-media", "window-new",
        "power-plug", "power-unplug", "suspend-start", "suspend-resume", "lid-open", "lid-close",
        "alarm-clock-elapsed", "window-attention-active", "window-attention-inactive",
        // Actions
        "phone-outgoing-calling", "message-sent-instant", "message-sent-email", "bell-terminal",
        "bell-window-system", "trash-empty", "item-deleted", "file-trash", "camera-shutter",
        "camera-focus", "screen-capture", "count-down", "completion-sucess", "completion-fail",
        "completion-partial", "completion-rotation", "audio-volume-change", "audio-channel-left",
        "audio-channel-right", "audio-channel-front-left", "audio-channel-front-right",
        "audio-channel-front-center", "audio-channel-rear-left", "audio-channel-rear-right",
        "audio-channel-rear-center", "audio-channel-lfe", "audio-channel-side-left",
        "audio-channel-side-right", "audio-test-signal", "theme-demo",
        // Input feedback
        "window-close", "window-slide-in", "window-slide-out", "window-minimized",
        "window-unminimized", "window-maximized", "window-unmaximized", "window-inactive-click",
        "window-move-start", "window-move-end", "window-resize-start", "window-resize-end",
        "desktop-switch-left", "desktop-switch-right", "window-switch", "notebook-tab-changed",
        "scroll-up", "scroll-down", "scroll-left", "scroll-right", "scroll-up-end",
        "scroll-down-end", "scroll-left-end", "scroll-right-end", "dialog-ok", "dialog-cancel",
        "drag-start", "drag-accept", "drag-fail", "link-pressed", "link-released",
        "button-pressed", "button-released", "menu-click", "button-toggle-on", "button-toggle-off",
        "expander-toggle-on", "expander-toggle-off", "menu-popup", "menu-popdown", "menu-replace",
        "tooltip-popup", "tooltip-popdown", "item-selected",
        // Games
        "game-over-winner", "game-over-loser", "game-card-shuffle", "game-human-move",
        "game-computer-move",
        // Installed by freedesktop's theme beyond the list above
        "bell", "message", "complete", "window-attention", "window-question",
    ]

    static let idByName: [String: UInt32] = Dictionary(
        uniqueKeysWithValues: names.enumerated().map { ($1, firstID + UInt32($0)) })
}
