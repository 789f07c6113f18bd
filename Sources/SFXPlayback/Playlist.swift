import FoundationEssentials
import Dispatch
import Glibc
import Synchronization
import SFXCore
import SFXMedia

/// Sound files played one after another, gaplessly: the next file's first frame comes right
/// after the previous one's last, at the mixer's rate (each file resampled on its own when its
/// rate is not the device's). One `Player` streams them all: its reader opens the next file
/// when the current one ends, on the reader thread, so the output thread never waits.
///
/// ```swift
/// let list = try Playlist(engine: engine, items: [intro, level1, level2])
/// list.repeats = true                         // back to the first after the last
/// list.onItemChanged = { index in print("now", index) }
/// try list.play()
/// try list.next(); try list.previous()
/// ```
///
/// `onItemChanged` is called (on a queue of the playlist's) when the mixer has reached an item's
/// first frame, within about 10 ms (the watch's period); `didFinish` once the last item ends
/// (never with `repeats`).
/// The player's settings (volume, loops of one item…) are those of `player` while it plays.
public final class Playlist: @unchecked Sendable {
    public let items: [URL]
    public let group: SoundGroup
    private let engine: SoundEngine

    private struct State {
        var repeats = false
        var crossfade = Duration.zero
        /// A crossfade to the next item is under way (or the list is at its end).
        var handingOver = false
        var player: Player?
        /// The voice a crossfade at the end hands over from, until it ends (stopped and paused
        /// with the playlist).
        var outgoing: Voice?
        /// The item the current player began with, and the items its reader was handed since.
        var first = 0
        var queued = 0
        var reported = -1
        var current = 0
        var onItemChanged: (@Sendable (Int) -> Void)?
        var didFinish: (@Sendable (Bool) -> Void)?
    }
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "sfx-playlist")
    private var timer: DispatchSourceTimer?

    /// A playlist of sound files (file URLs: a download streams alone, in a `Player`). Throws a
    /// `SettingError` for an empty list or a URL that is not a file's.
    public init(engine: SoundEngine, items: [URL], group: SoundGroup = .music) throws {
        guard !items.isEmpty else { throw SettingError(setting: "playlist", value: "no items", allowed: "one or more sound files") }
        if let remote = items.first(where: { !$0.isFileURL }) {
            throw SettingError(setting: "playlist item", value: remote.absoluteString,
                               allowed: "sound files (file URLs); play a URL alone with makePlayer(url:)")
        }
        self.engine = engine
        self.items = items
        self.group = group
    }

    deinit {
        timer?.cancel()
        state.withLock { $0.player }?.stop()
    }

    /// After the last item, the first again (until stopped).
    public var repeats: Bool {
        get { state.withLock { $0.repeats } }
        set { state.withLock { $0.repeats = newValue } }
    }
    /// 0 (the default): items follow gaplessly. Longer (0.01…60 s): each item crossfades into the
    /// next over that time (equal-power), the fade ending on the item's last frame: the playlist
    /// hands over (`Player.crossfadeAtEnd(to:duration:)`) a second before the fade is due and the
    /// mixer starts it on the exact frame; an item shorter than the fade fades for what it has.
    public var crossfade: Duration {
        get { state.withLock { $0.crossfade } }
        set { state.withLock { $0.crossfade = min(max(newValue, .zero), .seconds(60)) } }
    }
    /// Called with an item's index when the play reaches its first frame.
    public var onItemChanged: (@Sendable (Int) -> Void)? {
        get { state.withLock { $0.onItemChanged } }
        set { state.withLock { $0.onItemChanged = newValue } }
    }
    /// Called when the last item has ended (true) or a file could not be played (false).
    public var didFinish: (@Sendable (Bool) -> Void)? {
        get { state.withLock { $0.didFinish } }
        set { state.withLock { $0.didFinish = newValue } }
    }
    /// The item playing (or the one `play` starts with).
    public var currentIndex: Int { state.withLock { $0.current } }
    /// The player of the items (nil before the first play).
    public var player: Player? { state.withLock { $0.player } }
    public var isPlaying: Bool { player?.isPlaying ?? false }

    /// Plays from the current item (resumes a paused playlist).
    public func play() throws {
        if let player = state.withLock({ $0.player }) {
            if player.isPlaying { return }
            if player.currentReader != nil {
                state.withLock { $0.outgoing }?.resume()
                return player.resume()
            }
        }
        try start(at: currentIndex)
    }

    public func pause() {
        let (player, outgoing) = state.withLock { ($0.player, $0.outgoing) }
        outgoing?.pause()
        player?.pause()
    }

    /// Stops; `play` starts the current item again from its beginning.
    public func stop() {
        let (player, outgoing) = state.withLock { state -> (Player?, Voice?) in
            defer { state.player = nil; state.outgoing = nil }
            return (state.player, state.outgoing)
        }
        outgoing?.stop()
        player?.stop()
    }

    /// Goes to the next item (the first after the last with `repeats`; past the last, stops).
    public func next() throws {
        let (index, count, repeats) = state.withLock { ($0.current, items.count, $0.repeats) }
        guard index + 1 < count || repeats else { return stop() }
        try start(at: (index + 1) % count)
    }

    /// Goes to the previous item (the last from the first with `repeats`, else the first again).
    public func previous() throws {
        let (index, count, repeats) = state.withLock { ($0.current, items.count, $0.repeats) }
        try start(at: index > 0 ? index - 1 : (repeats ? count - 1 : 0))
    }

    /// A new player beginning with item `index`, whose reader is handed the following items.
    private func start(at index: Int) throws {
        stop()
        let player = try makePlayer(index)
        begin(player, at: index)
        startWatching()
        try player.play()
    }

    private func makePlayer(_ index: Int) throws -> Player {
        let player = try engine.makePlayer(contentsOf: items[index], group: group)
        player.configureReader = { [weak self] reader in
            reader.next = { [weak self] in self?.nextFile() }
        }
        player.didFinish = { [weak self] ok in self?.ended(player, ok) }
        return player
    }

    private func begin(_ player: Player, at index: Int) {
        state.withLock { state in
            state.player = player
            state.first = index
            state.queued = index
            state.current = index
            state.reported = -1
            state.handingOver = false
        }
    }

    /// With `crossfade`: a second before the fade is due, the next item's player is made and
    /// handed over to at the end (the mixer begins the fade on its frame).
    private func handOverIfDue(_ player: Player) {
        let (fade, index, repeats, busy) = state.withLock { ($0.crossfade, $0.current, $0.repeats, $0.handingOver) }
        guard fade > .zero, !busy, player.isPlaying, player.isDurationKnown, case let duration = player.duration,
              index + 1 < items.count || repeats else { return }
        let remaining = duration - player.currentTime
        guard remaining <= fade.seconds + Self.handOverLead else { return }
        state.withLock { $0.handingOver = true }
        let following = (index + 1) % items.count
        do {
            let next = try makePlayer(following)
            next.volume = player.volume
            begin(next, at: following)
            state.withLock { $0.current = index }        // until the next item plays (poll)
            let outgoing = try player.handOver(to: next, duration: fade, atEnd: true)
            state.withLock { $0.outgoing = outgoing }
            if let outgoing {
                Task.detached { [weak self] in
                    _ = await outgoing.outcome
                    self?.state.withLock { if $0.outgoing?.id == outgoing.id { $0.outgoing = nil } }
                }
            }
        } catch {
            let callback = state.withLock { state -> (@Sendable (Bool) -> Void)? in
                state.player = nil
                return state.didFinish
            }
            player.stop()
            callback?(false)
        }
    }

    /// How long before a crossfade is due the playlist hands over (the command must reach the
    /// mixer before the frame; the next file opens and decodes ahead meanwhile).
    static let handOverLead = 1.0

    /// The file after the last one handed to the reader (reader thread).
    private func nextFile() -> RawFilePath? {
        state.withLock { state -> RawFilePath? in
            let following = state.queued + 1
            guard state.crossfade == .zero, following < items.count || state.repeats else { return nil }
            state.queued = following % items.count
            return RawFilePath(items[state.queued])
        }
    }

    private func ended(_ player: Player, _ ok: Bool) {
        let (callback, following) = state.withLock { state -> ((@Sendable (Bool) -> Void)?, Int?) in
            guard state.player === player else { return (nil, nil) }
            // A crossfade the watch did not begin in time (a held-up machine): the next item
            // starts at once rather than the list ending early.
            if ok, state.crossfade > .zero, state.current + 1 < items.count || state.repeats {
                return (nil, (state.current + 1) % items.count)
            }
            state.player = nil
            return (state.didFinish, nil)
        }
        if let following {
            queue.async { [weak self] in
                guard let self else { return }
                do { try start(at: following) } catch { state.withLock { $0.didFinish }?(false) }
            }
            return
        }
        callback?(ok)
    }

    /// Reports item changes: the mixer has reached the ring frame where the reader began one.
    private func startWatching() {
        guard timer == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now(), repeating: .milliseconds(10))
        timer.setEventHandler { [weak self] in self?.poll() }
        self.timer = timer
        timer.resume()
    }

    private func poll() {
        guard let player = state.withLock({ $0.player }), let reader = player.currentReader else { return }
        let played = reader.ring.releasedFrames
        // A player handed over to at the end waits in the mixer: its item begins when it plays.
        guard played > 0 else { return }
        let passed = reader.sourceStarts.count(where: { $0 <= played })
        let callback = state.withLock { state -> ((@Sendable (Int) -> Void)?, Int)? in
            let index = (state.first + passed) % items.count
            state.current = index
            guard state.reported != passed else { return nil }
            state.reported = passed
            return (state.onItemChanged, index)
        }
        if let (call, index) = callback { call?(index) }
        handOverIfDue(player)
    }
}
