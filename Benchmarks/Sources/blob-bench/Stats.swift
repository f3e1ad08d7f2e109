/// Order statistics over a handful of repetitions.
///
/// Medians, not means: on a shared machine single repetitions are sometimes slowed a lot by other
/// tenants, and one such outlier should not move the reported figure.
enum Stats {
    /// The median of `values` (the mean of the middle two for an even count); 0 for none.
    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// Median, smallest and largest of `values`.
    static func summary(_ values: [Double]) -> Summary {
        Summary(median: median(values), low: values.min() ?? 0, high: values.max() ?? 0)
    }

    /// Median and range of a set of repetitions.
    struct Summary: Codable, Sendable {
        var median: Double
        var low: Double
        var high: Double
    }
}

/// Where a timed run leaves its request-latency percentiles for the harness to collect.
/// Shared between the run (writer) and the harness (reader), one after the other; the lock only
/// makes that hand-over visible across threads.
final class LatencySink: Sendable {
    /// Percentiles of one run, in microseconds.
    struct Percentiles: Sendable {
        var p50: Double
        var p99: Double
    }

    private let stored = Locked<Percentiles?>(nil)

    init() {}

    /// Records the percentiles of a run's latencies (any unit; `microsecondsPerUnit` converts).
    func record(_ latencies: [Double], microsecondsPerUnit: Double = 1) {
        guard !latencies.isEmpty else { return }
        let sorted = latencies.sorted()
        func at(_ fraction: Double) -> Double {
            sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.down)))] * microsecondsPerUnit
        }
        stored.withLock { $0 = Percentiles(p50: at(0.50), p99: at(0.99)) }
    }

    /// The last recorded percentiles, cleared.
    func take() -> Percentiles? {
        stored.withLock { value in
            defer { value = nil }
            return value
        }
    }
}
