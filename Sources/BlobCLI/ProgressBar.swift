import BlobSystem
import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A one-line progress display on standard error for transfers that take more than about a second.
///
/// It draws only when enabled (standard error is a terminal), first after ``delay``, then five times
/// a second, and erases itself when the transfer finishes, so short transfers and piped standard
/// error never see it. Counting (``add(_:)``) is cheap and thread-safe.
package final class ProgressBar: Sendable {
    private struct State {
        var done: Int64 = 0
        var drawn = false
        var finished = false
        var timer: (any DispatchSourceTimer)?
    }

    private let label: String
    private let total: Int64?
    private let draw: @Sendable (String) -> Void
    private let start = DispatchTime.now()
    /// Owned here; every access holds the mutex.
    private let state = Locked(State())
    private let queue = DispatchQueue(label: "blob.progress")
    private let width: Int

    /// Seconds before the bar first appears.
    package static let delay = 1.0

    /// A bar for `label` (`put photos/x`) of `total` bytes (`nil` when unknown); draws nothing unless `enabled`.
    package init(
        label: String, total: Int64?, enabled: Bool, width: Int? = nil,
        draw: (@Sendable (String) -> Void)? = nil
    ) {
        self.label = label
        self.total = total
        self.width = width ?? ProgressBar.terminalWidth()
        self.draw = draw ?? { text in
            let bytes = Array(text.utf8)
            _ = try? bytes.withUnsafeBytes { try FileDescriptor(rawValue: 2).writeAll($0) }
        }
        guard enabled else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + ProgressBar.delay, repeating: 0.2)
        timer.setEventHandler { [weak self] in self?.tick() }
        state.withLock { $0.timer = timer }
        timer.resume()
    }

    /// Counts `bytes` more as transferred.
    package func add(_ bytes: Int) {
        state.withLock { $0.done += Int64(bytes) }
    }

    /// Stops the bar and erases it if it was drawn; later calls do nothing.
    package func finish() {
        let stopped = state.withLock { state -> (timer: (any DispatchSourceTimer)?, drawn: Bool)? in
            if state.finished { return nil }
            state.finished = true
            defer { state.timer = nil }
            return (state.timer, state.drawn)
        }
        guard let (timer, drawn) = stopped else { return }
        timer?.cancel()
        // Erase on the timer's queue, after any draw already under way.
        queue.sync {
            if drawn || state.withLock({ $0.drawn }) { draw("\r\u{1B}[K") }
        }
    }

    private func tick() {
        let done: Int64? = state.withLock { state in
            guard !state.finished else { return nil }
            state.drawn = true
            return state.done
        }
        guard let done else { return }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        let text = ProgressBar.render(label: label, done: done, total: total, elapsed: elapsed, width: width)
        draw("\r" + text + "\u{1B}[K")
    }

    /// The bar's text: `put photos/x  [#####-----]  50%  5.0 MiB / 10.0 MiB  2.5 MiB/s  ETA 0:02`, fitted
    /// to `width` (the bar shrinks or goes first, then the label is cut). Without a total: the bytes so
    /// far, the rate and the time elapsed.
    package static func render(label: String, done: Int64, total: Int64?, elapsed: Double, width: Int) -> String {
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        let speed = Formatting.size(Int64(rate)) + "/s"
        var tail: String
        var bar = ""
        if let total, total > 0 {
            let fraction = min(1, max(0, Double(done) / Double(total)))
            let eta = rate > 0 ? duration(Double(max(0, total - done)) / rate) : "--:--"
            tail = "\(Int(fraction * 100))%  \(Formatting.size(done)) / \(Formatting.size(total))  \(speed)  ETA \(eta)"
            let room = width - label.count - tail.count - 8
            if room >= 10 {
                let cells = min(room, 40)
                let filled = Int(fraction * Double(cells))
                bar = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: cells - filled) + "]  "
            }
        } else {
            tail = "\(Formatting.size(done))  \(speed)  \(duration(elapsed))"
        }
        var line = label + "  " + bar + tail
        if line.count > width - 1 {
            // Keep the figures; cut the label.
            let keep = max(0, width - 1 - tail.count - 3)
            line = String(label.prefix(keep)) + "  " + tail
            if line.count > width - 1 { line = String(line.prefix(max(0, width - 1))) }
        }
        return line
    }

    /// `0:07`, `12:34`, `1:02:03`.
    static func duration(_ seconds: Double) -> String {
        let total = Int(min(seconds, 359_999).rounded(.up))
        let (hours, minutes, secs) = (total / 3600, total / 60 % 60, total % 60)
        let twoDigits = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(twoDigits(minutes)):\(twoDigits(secs))" : "\(minutes):\(twoDigits(secs))"
    }

    /// Standard error's width in columns (80 when unknown).
    static func terminalWidth() -> Int {
        var size = winsize()
        if ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init), columns > 0 { return columns }
        return 80
    }
}
