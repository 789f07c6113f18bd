import SFXDevice
import FoundationEssentials
import SFXSystem
import Glibc
import SFXHaptics

/// When `alert` vibrates, as the `vibrate-with-alert` setting says.
public enum AlertVibration: String, Sendable, CaseIterable {
    case never
    /// Vibrate instead of playing when the output is muted (the default, like a phone).
    case whenMuted = "when-muted"
    /// Vibrate with every alert.
    case always
}

/// What an alert did. If it could neither play nor vibrate, `problem` says why, and the engine
/// reports `.alertUnheard`.
public struct AlertResult: Sendable, CustomStringConvertible {
    public var played: Bool
    public var vibrated: Bool
    public var mute: MuteState
    /// Why it could not vibrate (no backend, a permission), when it tried.
    public var vibrationProblem: String?
    /// The voice that plays the sound, when it played.
    public var voice: Voice?
    /// A flash was started.
    public var flashed = false
    /// The do-not-disturb window held the alert to its caption.
    public var quiet = false
    /// What `onAlert` receives (also when the policy turns captions off).
    public var notice: AlertNotice?

    public var wasNoticed: Bool { played || vibrated || flashed }

    public var description: String {
        var parts: [String] = []
        parts.append(played ? "played" : "not played (\(mute))")
        if vibrated { parts.append("vibrated") }
        if flashed { parts.append("flashed") }
        if quiet { parts.append("quiet hours: captioned only") }
        if let vibrationProblem { parts.append("could not vibrate: \(vibrationProblem)") }
        return parts.joined(separator: "; ")
    }
}

extension SoundEngine {
    /// Whether the output is muted, and why, by the one rule `MuteState.reading` states (which
    /// `sfx mute status` follows too): sfx's mute flag; when the output goes to a sound server
    /// that answers, the server's view (its sink muted or at zero volume, sfx's own stream muted
    /// or at zero volume in the mixer — which the server remembers and applies to every later
    /// sfx stream); otherwise the output's ALSA mixer switch off or volume at zero; or no usable
    /// output device. Reading the server takes a round trip (at most 500 ms when it does not
    /// answer): call it from an ordinary thread.
    public func muteState() -> MuteState {
        MuteState.reading(output: configuration.output.device, flag: configuration.muteFlag,
                          outputOpen: metrics.deviceOpen, deviceLost: metrics.deviceLost, master: { self.outputMaster() })
    }

    /// What the sound server behind the output says about the sink and sfx's stream, or nil when
    /// the output is not a server's ALSA PCM (`pipewire`, `pulse`, or a `default` that is one)
    /// or no server answers.
    public func soundServerState() -> SoundServerState? {
        guard SoundServer.server(behind: configuration.output.device) != nil else { return nil }
        return SoundServer.state(timeout: .milliseconds(500))
    }

    /// The caption a theme's description of a system sound gives: its meaning after the colon
    /// ("A warm struck bell: the generic alert" → "The generic alert"), or nil for a sound the
    /// theme does not describe.
    func themeCaption(_ name: String) -> String? {
        guard let description = try? library.systemSoundFile(named: name).description, !description.isEmpty else { return nil }
        let meaning = description.firstRange(of: ": ").map { String(description[$0.upperBound...]) } ?? description
        return meaning.prefix(1).uppercased() + meaning.dropFirst()
    }

    /// Plays an alert sound, like AudioServicesPlayAlertSound, and reaches those who cannot hear
    /// it: per `Configuration.alertPolicy` (by default: sound always, vibration and flash when
    /// muted, caption always; from `alertVibration` when no policy is set) it plays, vibrates,
    /// flashes (`flashBackend`, on a queue of its own: this never waits for the flash) and sends
    /// `onAlert` an `AlertNotice` with the caption — `caption`, else the theme's description of the
    /// system sound (its meaning), else one made from `name` — and
    /// how it reached the user. During the policy's do-not-disturb window an alert below its
    /// priority is captioned only. Never silent without saying so: the result, and an
    /// `.alertUnheard` event, tell why.
    @discardableResult
    public func alert(_ id: SoundID, volume: Float = 1, name: String? = nil, caption: String? = nil,
                      priority: AlertPriority = .normal,
                      completion: (@Sendable (PlayOutcome) -> Void)? = nil) -> AlertResult {
        let mute = muteState()
        let policy = configuration.alertPolicy ?? AlertPolicy(vibration: configuration.alertVibration)
        let channels = policy.channels(muted: mute.isMuted, priority: priority)
        var result = AlertResult(played: false, vibrated: false, mute: mute)
        // The caption's words: the name given, else a system sound's own name ("bell"), else the id.
        let soundName = name ?? (id.isSystem ? library.name(ofSystemID: id) : nil) ?? id.description
        let text = caption ?? themeCaption(soundName) ?? AlertNotice.caption(forName: soundName)
        if channels.sound {
            result.voice = play(id, volume: volume, group: .alerts, priority: .critical, completion: completion)
            result.played = true
        } else {
            reject(completion, .muted(mute))
        }
        if channels.vibrate {
            do {
                try self.vibrate(.default)
                result.vibrated = true
            } catch {
                result.vibrationProblem = error.description
            }
        }
        if channels.flash, let flasher = alertFlasher() {
            flasher.flash(configuration.flashPattern, caption: text)
            result.flashed = true
        }
        result.quiet = channels.quiet
        result.notice = AlertNotice(caption: text, sound: soundName, heard: result.played, felt: result.vibrated,
                                    flashed: result.flashed, captioned: channels.caption, quiet: channels.quiet,
                                    priority: priority)
        if !result.wasNoticed && !channels.quiet {
            report(.alertUnheard(result.description))
        }
        if channels.caption, let notice = result.notice { delivery.publish(notice) }
        return result
    }

    /// The flasher for `flashBackend`, made on first use; nil without a backend.
    func alertFlasher() -> Flasher? {
        guard let backend = configuration.flashBackend else { return nil }
        return flasher.withLock { flasher in
            if let flasher { return flasher }
            let made = Flasher(backend: backend) { [weak self] error in self?.report(.alertUnheard("could not flash: \(error.description)")) }
            flasher = made
            return made
        }
    }

    /// Waits until the flashes asked for so far have ended.
    public func waitForFlash() {
        flasher.withLock { $0 }?.waitUntilIdle()
    }

    /// Vibrates, like kSystemSoundID_Vibrate: by default one buzz of about 400 ms. A new
    /// vibration replaces the running one. Throws when there is no haptic backend, naming why.
    public func vibrate(_ pattern: VibrationPattern = .default) throws(HapticError) {
        try vibrator().vibrate(pattern)
    }

    /// Waits until the running vibration, if any, has ended.
    public func waitForVibration() {
        existingVibrator()?.waitUntilIdle()
    }

    /// Stops the running vibration; the actuator is left off.
    public func cancelVibration() {
        existingVibrator()?.cancel()
    }
}
