import BlobClient
import BlobStore
import Foundation
import S3BlobStore
import Testing

/// Every backend the behaviour suite runs against.
///
/// Each behaviour test takes a `StoreKind` argument and reaches its store only through
/// ``withStore(_:_:)`` and the ``BlobStoring`` protocol, so adding a case here (and its arm in
/// ``withStore(_:_:)``) runs the whole suite against one more backend: an S3 store is one case.
/// A test that a backend cannot pass by design runs on
/// ``allCases(except:because:)``, which names the backend and the documented reason at the test.
package enum StoreKind: CaseIterable, Sendable, CustomStringConvertible {
    case memory
    case file
    /// A file store that sends every read through its queue (`inlineCachedReads: false`): the path
    /// reads take when the kernel's caches cannot serve them.
    case fileQueuedReads
    /// A `RemoteBlobStore` of a `blobd` the tests started on a temporary root and socket (relaxed
    /// durability: durability has its own tests); a fresh store of that daemon per test.
    case remote
    /// An `S3BlobStore` on the Ceph gateway `.ci/ceph up` brought up (its env file sourced:
    /// `AWS_ENDPOINT_URL`, the keys, `BLOB_S3_BUCKET`), under a fresh key prefix per test. Without
    /// that env the test prints why and passes without running (``S3Gateway/skipReason``).
    case s3

    /// The kind as test names show it.
    package var description: String {
        switch self {
        case .memory: return "memory"
        case .file: return "file"
        case .fileQueuedReads: return "file, queued reads"
        case .remote: return "remote (blobd)"
        case .s3: return "s3 (gateway)"
        }
    }

    /// Whether this backend serves `identifier` one by one. Over HTTP an identifier may not have an
    /// empty, `.` or `..` segment (docs/PROTOCOL.md, "Identifiers": URL parsers would rewrite the
    /// path); an S3 store's identifiers are at most what fits in a 1,024-byte key after its prefix
    /// (docs/SCALE-OUT.md, "Object format"); the embedded stores take any valid identifier.
    package func serves(_ identifier: String) -> Bool {
        switch self {
        case .remote:
            return !identifier.split(separator: "/", omittingEmptySubsequences: false).contains { $0.isEmpty || $0 == "." || $0 == ".." }
        case .s3:
            return identifier.utf8.count <= S3Gateway.maximumIdentifierByteCount
        case .memory, .file, .fileQueuedReads:
            return true
        }
    }

    /// Whether this backend lists by modification date. An S3 store lists by identifier only and
    /// refuses `.modified` with `invalidQuery` (docs/SCALE-OUT.md, "Listing").
    package var sortsByModified: Bool { self != .s3 }

    /// Whether `actual` is the metadata `expected` as this backend reports it with a stream's or a
    /// download's content: a remote store takes those from the response headers, whose `modified`
    /// date has one-second precision (`RemoteBlobStore.stream`); every other field is exact.
    package func sameStreamMetadata(_ actual: BlobMetadata, _ expected: BlobMetadata) -> Bool {
        guard self == .remote else { return actual == expected }
        var truncated = expected
        truncated.modified = Date(timeIntervalSince1970: expected.modified.timeIntervalSince1970.rounded(.down))
        return actual == truncated
    }

    /// Whether the `modified` dates this backend reports are the ones it sorts by. A remote store's
    /// come as RFC 3339 milliseconds (docs/PROTOCOL.md, "Metadata object") while blobd sorts by the
    /// exact time, so two blobs of one millisecond may be listed in either identifier order.
    package var reportsExactDates: Bool { self != .remote }

    /// Every kind but `excluded`, for a behaviour `excluded` does not have by design; `reason` says
    /// where that is documented (it is there to be read at the test, not printed).
    package static func allCases(except excluded: StoreKind, because reason: String) -> [StoreKind] {
        allCases(except: [excluded], because: reason)
    }

    /// Every kind but those `excluded`, for a behaviour they do not have by design; `reason` says
    /// where that is documented.
    package static func allCases(except excluded: [StoreKind], because reason: String) -> [StoreKind] {
        precondition(!reason.isEmpty, "say why \(excluded) are not tested")
        return allCases.filter { !excluded.contains($0) }
    }
}

/// Runs `body` with a fresh, empty store of `kind`, then discards the store whether or not `body` threw.
///
/// A remote store lives on the suite's shared daemon (``BehaviourBackends``) when there is one, else
/// on a daemon started for this call alone.
package func withStore(_ kind: StoreKind, _ body: (any BlobStoring) async throws -> Void) async throws {
    switch kind {
    case .memory:
        try await body(try InMemoryBlobStore(name: "behaviour"))
    case .file, .fileQueuedReads:
        // Small buckets, so the suite also exercises bucket splits; relaxed, as durability has its own tests.
        let root = TemporaryRoot()
        let store = try PersistentDataStore(
            name: "behaviour", root: root.url,
            configuration: StoreConfiguration(durability: .relaxed, bucketCapacity: 64, inlineCachedReads: kind == .file))
        try await body(store)
        withExtendedLifetime(root) {}
    case .remote:
        let shared = SharedDaemon.current
        let daemon = shared ?? SharedDaemon()
        defer { if shared == nil { daemon.stop() } }
        let client = BlobClient(socketPath: try daemon.socketPath())
        defer { client.closeIdleConnections() }
        try await body(try client.store(daemon.freshStoreName()))
    case .s3:
        guard let store = try S3Gateway.freshStore() else {
            print(S3Gateway.skipReason)
            return
        }
        try await body(store)
    }
}

/// A `blobd` started on first use and stopped by ``stop()``: the one daemon of a suite run, so that
/// the remote cases do not each pay for a daemon's start (each test gets a store of its own).
package final class SharedDaemon: @unchecked Sendable {
    /// The daemon of the suite being run, set by the ``BehaviourBackends`` trait.
    @TaskLocal package static var current: SharedDaemon?

    // Both guarded by `lock`: tests of a suite run in parallel.
    private let lock = NSLock()
    private var daemon: DaemonProcess?
    private var stores = 0

    package init() {}

    /// The daemon's socket, starting the daemon if it is not running yet.
    package func socketPath() throws -> String {
        try lock.withLock {
            if let daemon {
                guard daemon.process.isRunning else {
                    throw HarnessError("the suite's blobd exited (\(daemon.process.terminationStatus)): \(daemon.log.suffix(2000))")
                }
                return daemon.socketPath
            }
            guard BlobdBinary.url != nil else { throw HarnessError(BuiltTool.skipReason("blobd")) }
            let started = try DaemonProcess(logLevel: "error")
            daemon = started
            return started.socketPath
        }
    }

    /// A store name not used before on this daemon.
    package func freshStoreName() -> String {
        lock.withLock {
            stores += 1
            return "behaviour-\(stores)"
        }
    }

    /// Stops the daemon (if it was started); its folder goes with it.
    package func stop() {
        let stopping = lock.withLock {
            defer { daemon = nil }
            return daemon
        }
        stopping?.terminate()
    }
}

/// Runs a suite with one shared `blobd` for its remote cases (``SharedDaemon``), stopped when the suite ends.
///
/// The behaviour suites' time limits (five minutes) only catch a hang. `swift test` runs every
/// test of the package at once on two cooperative threads, so a test that awaits hundreds of
/// times (each a request to blobd or the gateway) resumes behind the whole run's other work, and
/// its wall time is close to the run's own.
package struct BehaviourBackends: SuiteTrait, TestScoping {
    /// Once for the suite, not per test.
    package var isRecursive: Bool { false }

    /// Runs the suite with a ``SharedDaemon`` as ``SharedDaemon/current``.
    package func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let shared = SharedDaemon()
        defer { shared.stop() }
        try await SharedDaemon.$current.withValue(shared) { try await function() }
    }
}

extension Trait where Self == BehaviourBackends {
    /// One `blobd` for all of this suite's remote cases.
    package static var backends: Self { Self() }
}
