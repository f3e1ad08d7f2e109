import BlobStore
import Foundation

/// Aborts abandoned multipart uploads (``S3StaleUploads``) under a set of prefixes, once when
/// started and then every ``Schedule/period``, on a thread of its own, until ``stop()``.
///
/// blobd on S3 runs one for its location: the prefixes are those of the stores whose markers exist
/// (`PREFIX/NAME/`, where every multipart upload of a store goes), so nothing else in the bucket is touched.
///
/// A round that fails (the gateway does not answer, `403 AccessDenied` on ListMultipartUploads)
/// is logged, naming the location and the request's operation, key, endpoint and S3 error code,
/// and the next round is tried one period later; a failure like the last round's is not logged
/// again, and the first round that works after a failure says so. Nothing is thrown: the owner
/// goes on as if the round had worked.
///
/// Threads: the sweep's own thread makes every request (blocking), never the cooperative pool or
/// an event loop. `condition` guards `started`, `stopping`, `rounds` and `lastFailure`; everything else is
/// immutable. The owner must call ``stop()``: the thread holds the sweeper until then.
package final class S3StaleUploadSweeper: @unchecked Sendable {
    /// When uploads count as abandoned, and how often to look.
    package struct Schedule: Sendable, Hashable {
        /// An unfinished upload initiated longer ago than this is aborted.
        package var age: Duration
        /// The time from the end of one round to the start of the next.
        package var period: Duration

        /// The default period: an hour.
        package static let defaultPeriod: Duration = .seconds(3600)

        /// A schedule (defaults: ``S3StaleUploads/defaultAge``, hourly).
        package init(age: Duration = S3StaleUploads.defaultAge, period: Duration = defaultPeriod) {
            self.age = age
            self.period = period
        }
    }

    /// How important a log line is.
    package enum Severity: Sendable {
        /// An upload aborted, a sweep working again.
        case info
        /// A round that failed.
        case error
    }

    /// What one round did.
    package struct Round: Sendable {
        /// The uploads aborted.
        package var aborted: [S3MultipartUploadSummary]
        /// Why the round stopped early, or `nil` when it went through every prefix.
        package var failure: String?
    }

    /// The bucket's client.
    package let client: S3Client
    /// How errors and log lines name what is swept (`s3://BUCKET/PREFIX at ENDPOINT`).
    package let location: String
    /// The age and period.
    package let schedule: Schedule
    private let prefixes: @Sendable () throws -> [String]
    private let now: @Sendable () -> Date
    private let log: @Sendable (Severity, String) -> Void

    private let condition = NSCondition()
    private var stopping = false
    private var started = false
    private var rounds = 0
    private var lastFailure: String?
    private let finished = DispatchSemaphore(value: 0)

    /// A sweeper of the prefixes `prefixes` returns at each round (a throw fails the round),
    /// logging through `log`. `now` is the clock the age is measured with (tests move it).
    /// Not started: see ``start()``.
    package init(
        client: S3Client, location: String, schedule: Schedule = Schedule(), now: @escaping @Sendable () -> Date = { Date() },
        log: @escaping @Sendable (Severity, String) -> Void, prefixes: @escaping @Sendable () throws -> [String]
    ) {
        self.client = client
        self.location = location
        self.schedule = schedule
        self.now = now
        self.log = log
        self.prefixes = prefixes
    }

    /// A sweeper of the stores `markers` records: each round lists the markers and sweeps
    /// `PREFIX/NAME/` of every store.
    package convenience init(
        stores markers: S3StoreMarkers, schedule: Schedule = Schedule(), now: @escaping @Sendable () -> Date = { Date() },
        log: @escaping @Sendable (Severity, String) -> Void
    ) {
        let layout = markers.location.layout
        self.init(client: markers.client, location: markers.backendName, schedule: schedule, now: now, log: log) {
            do {
                return try markers.names().map { layout.blobPrefix(store: $0) }
            } catch BlobStoreError.backendUnavailable(_, _, let reason) {
                // The reason names the request, the endpoint and S3's code; the rest repeats the location.
                throw StoreListingFailure(description: reason)
            }
        }
    }

    /// The stores' markers could not be listed: why, as the request's error says it.
    struct StoreListingFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts the thread: a round at once, then one every period. Returns at once; a second call does nothing.
    package func start() {
        let first = condition.withLock {
            defer { started = true }
            return !started && !stopping
        }
        guard first else { return }
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "S3StaleUploadSweeper"
        thread.start()
    }

    /// Stops the sweeps: a round under way ends after its current request, and this returns once
    /// it has (at most the transport's timeouts). Later calls do nothing.
    package func stop() {
        let wait = condition.withLock {
            defer {
                stopping = true
                condition.broadcast()
            }
            return started && !stopping
        }
        if wait { finished.wait() }
    }

    /// How many rounds have ended.
    package var completedRounds: Int { condition.withLock { rounds } }

    /// Waits until at least `count` rounds have ended, or `seconds` have passed; returns whether they have.
    package func waitForRounds(_ count: Int, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        return condition.withLock {
            while rounds < count {
                if !condition.wait(until: deadline) { return rounds >= count }
            }
            return true
        }
    }

    private var isStopping: Bool { condition.withLock { stopping } }

    private func run() {
        let period = S3StaleUploads.timeInterval(schedule.period)
        while true {
            _ = sweep()
            let stop = condition.withLock {
                let deadline = Date().addingTimeInterval(period)
                while !stopping, condition.wait(until: deadline) {}
                return stopping
            }
            if stop { return }
        }
    }

    /// One round on the calling thread (blocking): lists the prefixes, aborts the abandoned uploads
    /// under each, logs what it did and any failure.
    @discardableResult
    package func sweep() -> Round {
        let cutoff = S3StaleUploads.cutoff(age: schedule.age, now: now())
        var round = Round(aborted: [], failure: nil)
        do {
            for prefix in try prefixes() {
                if isStopping { break }
                try S3StaleUploads(client: client, prefix: prefix).abort(initiatedBefore: cutoff) { upload in
                    round.aborted.append(upload)
                    let initiated = upload.initiated.map { " initiated \($0.formatted(.iso8601))" } ?? ""
                    log(.info, "stale upload sweep of \(location): aborted the unfinished multipart upload of s3://\(client.bucket.name)/\(upload.key)\(initiated)")
                }
            }
        } catch {
            round.failure = "\(error)"
        }
        let previous = condition.withLock {
            defer {
                lastFailure = round.failure.map(Self.withoutRequestIDs)
                rounds += 1
                condition.broadcast()
            }
            return lastFailure
        }
        if let failure = round.failure {
            if Self.withoutRequestIDs(failure) != previous {
                log(.error, "stale upload sweep of \(location) failed: \(failure); "
                    + "it is tried again in \(String(format: "%g", S3StaleUploads.timeInterval(schedule.period))) s (logged once while it fails the same way)")
            }
        } else if previous != nil {
            log(.info, "stale upload sweep of \(location) works again")
        }
        return round
    }

    /// `text` without the `[request ID]` parts S3 error descriptions end with: two answers of the
    /// same failure differ only there.
    package static func withoutRequestIDs(_ text: String) -> String {
        var result = ""
        var rest = Substring(text)
        while let start = rest.range(of: " [request ") {
            result += rest[..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "]") else {
                rest = rest[start.lowerBound...]
                break
            }
            rest = rest[rest.index(after: end)...]
        }
        return result + rest
    }
}
