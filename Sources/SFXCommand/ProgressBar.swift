import FoundationEssentials
import SFXSystem
import Glibc

/// `sfx play`'s progress line on a terminal: one line, redrawn in place (carriage return and
/// erase to the end of the line), on standard error so standard output stays clean:
///
///     ▶ 1:02 / 4:10 [=========>                          ]  25%  ↓ 61%
///
/// `▶` playing, `‖` paused; the total is `?:??` when the length is unknown; `↓` is how much of a
/// URL has arrived. Not on a terminal nothing is drawn.
struct ProgressBar {
    /// Columns the line may take.
    var width: Int

    /// The line for a state (no carriage return): what tests check.
    static func line(elapsed: Double, total: Double?, paused: Bool, downloaded: Double?, width: Int) -> String {
        let state = paused ? "‖" : "▶"
        let times = "\(clock(elapsed)) / \(total.map(clock) ?? "?:??")"
        let fraction = total.map { $0 > 0 ? min(1, max(0, elapsed / $0)) : 0 }
        let percent = fraction.map { String(cFormat: "%3d%%", Int(($0 * 100).rounded(.down))) } ?? ""
        let download = downloaded.map { String(cFormat: "  ↓ %d%%", Int(($0 * 100).rounded(.down))) } ?? ""
        let fixed = 2 + times.count + 2 + 2 + 1 + percent.count + download.count
        let barWidth = max(0, min(50, width - fixed - 1))
        var bar = ""
        if barWidth >= 5 {
            let filled = Int((Double(barWidth) * (fraction ?? 0)).rounded(.down))
            bar = " [" + String(repeating: "=", count: max(0, filled - 1)) + (filled > 0 ? ">" : "")
                + String(repeating: " ", count: barWidth - filled) + "]"
        }
        return "\(state) \(times)\(bar) \(percent)\(download)"
    }

    /// m:ss, or h:mm:ss from an hour.
    static func clock(_ seconds: Double) -> String {
        let whole = Int(max(0, seconds.isFinite ? seconds : 0).rounded(.down))
        let (h, m, s) = (whole / 3600, whole / 60 % 60, whole % 60)
        return h > 0 ? String(cFormat: "%d:%02d:%02d", h, m, s) : String(cFormat: "%d:%02d", m, s)
    }

    /// The terminal's width on standard error, or 80.
    static func terminalWidth() -> Int {
        var size = winsize()
        guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }

    func draw(elapsed: Double, total: Double?, paused: Bool, downloaded: Double?) {
        let text = "\r" + Self.line(elapsed: elapsed, total: total, paused: paused, downloaded: downloaded, width: width) + "\u{1B}[K"
        writeToStandardError(text)
    }

    /// Ends the line, so what follows starts on a new one.
    func finish() { writeToStandardError("\n") }
}
