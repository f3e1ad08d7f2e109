import BlobStore
import Foundation
import Synchronization

/// A clock for cache-mode tests: starts at a fixed instant and moves only when the test says, so
/// expiry is tested without sleeping.
package final class TestClock: Sendable {
    private final class Box: Sendable {
        let date: Mutex<Date>
        init(_ date: Date) { self.date = Mutex(date) }
    }

    private let box: Box
    /// The clock as a store takes it (one clock, so configurations holding it compare equal).
    package let storeClock: StoreClock

    /// A clock at `start` (default: 2030-01-01, whole seconds so dates round-trip exactly).
    package init(_ start: Date = Date(timeIntervalSince1970: 1_893_456_000)) {
        let box = Box(start)
        self.box = box
        storeClock = StoreClock { box.date.withLock { $0 } }
    }

    /// The time now.
    package var now: Date { box.date.withLock { $0 } }

    /// Moves the clock forward by `duration`.
    package func advance(by duration: Duration) {
        let (seconds, attoseconds) = duration.components
        box.date.withLock { $0 = $0.addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18) }
    }
}
