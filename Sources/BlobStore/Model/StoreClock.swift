import Foundation

/// The time a store judges expiry by (``BlobExpiry``, ``StorePolicy/defaultTimeToLive``) and records
/// as a version's `modified` date: the system's wall clock, or one a test sets and advances without
/// sleeping.
///
/// Two clocks are equal when they are the same clock (made by the same call), so a
/// ``StoreConfiguration`` holding one stays `Hashable`.
public struct StoreClock: Hashable, Sendable {
    private final class Source: Sendable {
        let now: @Sendable () -> Date
        init(_ now: @escaping @Sendable () -> Date) { self.now = now }
    }

    private let source: Source?

    /// A clock that reads the time from `now` (called on any thread, so it must be thread-safe).
    public init(_ now: @escaping @Sendable () -> Date) { source = Source(now) }

    private init(system: Void) { source = nil }

    /// The system's wall clock.
    public static let system = StoreClock(system: ())

    /// The current time.
    public func now() -> Date { source?.now() ?? Date() }

    /// The current time in nanoseconds since 1970, as blob headers record it.
    func nowNanoseconds() -> Int64 {
        guard let source else { return SystemTime.nanosecondsSince1970() }
        return source.now().nanosecondsSince1970
    }

    /// Whether two clocks are the same clock.
    public static func == (lhs: StoreClock, rhs: StoreClock) -> Bool { lhs.source === rhs.source }

    /// Hashes the clock's identity.
    public func hash(into hasher: inout Hasher) {
        if let source { hasher.combine(ObjectIdentifier(source)) } else { hasher.combine(0) }
    }
}

/// The wall clock read directly (`clock_gettime`), without building a `Date`: reads of blobs with an
/// expiry compare against it.
enum SystemTime {
    static func nanosecondsSince1970() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }
}

extension StorePolicy {
    /// Whether the policy limits nothing and expires nothing.
    var isUnlimited: Bool { maximumBytes == nil && maximumCount == nil && defaultTimeToLive == nil }

    /// Whether it has a byte or count limit (eviction has work to do).
    var hasLimits: Bool { maximumBytes != nil || maximumCount != nil }
}

extension Duration {
    /// Whole nanoseconds, clamped to `Int64`.
    package var clampedNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflow2) = product.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflow2 ? (product < 0 ? .min : .max) : sum
    }
}
