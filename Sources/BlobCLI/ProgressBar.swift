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
public final class ProgressBar: Sendable {
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
    private let counting: Bool

    /// Seconds before the bar first appears.
    public static let delay = 1.0

    /// A bar for `label` (`put photos/x`) of `total` bytes (`nil` when unknown); draws nothing unless `enabled`.
    /// With `counting: false` the transfer's bytes are not seen (a store's own download): the bar shows
    /// the total and the time elapsed.
    public init(
        label: String, total: Int64?, enabled: Bool, counting: Bool = true, width: Int? = nil,
        draw: (@Sendable (String) -> Void)? = nil
    ) {
        self.label = label
        self.total = total
        self.counting = counting
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
    public func add(_ bytes: Int) {
        state.withLock { $0.done += Int64(bytes) }
    }

    /// Stops the bar and erases it if it was drawn.
    public func finish() {
        let (timer, drawn) = state.withLock { state -> ((any DispatchSourceTimer)?, Bool) in
            state.finished = true
            defer { state.timer = nil }
            return (state.timer, state.drawn)
        }
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
        let text = counting
            ? ProgressBar.render(label: label, done: done, total: total, elapsed: elapsed, width: width)
            : ProgressBar.render(label: label, total: total, elapsed: elapsed, width: width)
        draw("\r" + text + "\u{1B}[K")
    }

    /// The bar's text: `put photos/x  [#####-----]  50%  5.0 MiB / 10.0 MiB  2.5 MiB/s`, fitted to `width`.
    public static func render(label: String, done: Int64, total: Int64?, elapsed: Double, width: Int) -> String {
        let rate = elapsed > 0 ? Int64(Double(done) / elapsed) : 0
        let speed = Formatting.size(rate) + "/s"
        var tail: String
        var bar = ""
        if let total, total > 0 {
            let fraction = min(1, max(0, Double(done) / Double(total)))
            tail = "\(Int(fraction * 100))%  \(Formatting.size(done)) / \(Formatting.size(total))  \(speed)"
            let room = width - label.count - tail.count - 8
            if room >= 10 {
                let cells = min(room, 40)
                let filled = Int(fraction * Double(cells))
                bar = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: cells - filled) + "]  "
            }
        } else {
            tail = "\(Formatting.size(done))  \(speed)  \(Int(elapsed))s"
        }
        var line = label + "  " + bar + tail
        if line.count > width - 1 { line = String(line.prefix(max(0, width - 1))) }
        return line
    }

    /// The text while the bytes are not counted: `get photos/x → out.bin  1.2 GiB  3s`.
    public static func render(label: String, total: Int64?, elapsed: Double, width: Int) -> String {
        var line = label + "  " + (total.map { Formatting.size($0) + "  " } ?? "") + "\(Int(elapsed))s"
        if line.count > width - 1 { line = String(line.prefix(max(0, width - 1))) }
        return line
    }

    /// Standard error's width in columns (80 when unknown).
    static func terminalWidth() -> Int {
        var size = winsize()
        if ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init), columns > 0 { return columns }
        return 80
    }
}
