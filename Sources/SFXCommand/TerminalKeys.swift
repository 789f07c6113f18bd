import FoundationEssentials
import Glibc
import Synchronization

/// Keys for `sfx play` on a terminal: standard input in non-canonical mode without echo (Ctrl-C
/// still interrupts), read without waiting. The terminal's settings are put back by `restore()`,
/// which every exit path calls (the end of the play, q, an error, SIGINT and SIGTERM through
/// `Interruption`); calling it twice is harmless.
final class TerminalKeys: @unchecked Sendable {
    enum Key: Equatable {
        case space, left, right, quit
    }

    private var saved = termios()
    private let restored = Atomic<Bool>(false)
    private var pending: [UInt8] = []

    /// Takes the terminal when standard input is one; nil otherwise.
    static func open() -> TerminalKeys? {
        guard isatty(STDIN_FILENO) == 1 else { return nil }
        let keys = TerminalKeys()
        guard tcgetattr(STDIN_FILENO, &keys.saved) == 0 else { return nil }
        var raw = keys.saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0 else { return nil }
        return keys
    }

    /// Puts the terminal back as it was.
    func restore() {
        guard !restored.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var settings = saved
        tcsetattr(STDIN_FILENO, TCSANOW, &settings)
    }

    /// The keys typed since the last call.
    func poll() -> [Key] {
        var descriptor = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        var bytes = [UInt8](repeating: 0, count: 64)
        while Glibc.poll(&descriptor, 1, 0) > 0, descriptor.revents & Int16(POLLIN) != 0 {
            let got = read(STDIN_FILENO, &bytes, bytes.count)
            guard got > 0 else { break }
            pending += bytes[0..<got]
        }
        let (keys, rest) = Self.parse(pending)
        pending = rest
        return keys
    }

    /// Keys in `bytes`, and an incomplete escape sequence left at the end.
    static func parse(_ bytes: [UInt8]) -> ([Key], [UInt8]) {
        var keys: [Key] = []
        var i = 0
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: " "): keys.append(.space)
            case UInt8(ascii: "q"), UInt8(ascii: "Q"): keys.append(.quit)
            case 0x1B:
                // ESC [ C / ESC [ D (or ESC O C / D): the arrow keys.
                guard i + 2 < bytes.count else { return (keys, Array(bytes[i...])) }
                if bytes[i + 1] == UInt8(ascii: "[") || bytes[i + 1] == UInt8(ascii: "O") {
                    if bytes[i + 2] == UInt8(ascii: "C") { keys.append(.right) }
                    if bytes[i + 2] == UInt8(ascii: "D") { keys.append(.left) }
                    i += 2
                }
            default: break
            }
            i += 1
        }
        return (keys, [])
    }
}
