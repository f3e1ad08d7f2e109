/// Order statistics over a handful of repetitions.
///
/// Medians, not means: on this shared machine single repetitions are sometimes slowed by 1.5× or
/// more by other tenants, and one such outlier should not move the reported figure.
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
