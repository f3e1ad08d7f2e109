@testable import BlobServer
import BlobStore
import BlobSystem
import Foundation
import Testing

/// No head-of-line stall: while a listing or a verify of one store runs for seconds (and holds that
/// store's commits back, as the file store's barrier waits behind a read), the other requests on the
/// same event loop — gets, puts, health — keep being answered.
///
/// The daemon runs in-process with one event loop, over stores whose scans wait on a gate the test
/// opens (a store whose disk is slow); the backend is the in-memory store behind the gate.
@Suite struct HeadOfLineTests {
    @Test(arguments: ["GET /v1/stores/slow/blobs", "POST /v1/stores/slow/verify"])
    func smallRequestsOnTheSameLoopCompleteWhileALongScanRuns(scan: String) throws {
        let folder = TempFolder()
        let socketPath = folder.path + "/blobd.sock"
        let listener = try UnixSocket.listen(path: socketPath, permissions: 0o600)
        defer { try? listener.close() }
        let catalog = GatedCatalog()
        let server = try Server(
            listener: listener, catalog: catalog, maximumBlobSize: 1 << 30, eventLoopCount: 1, heartbeatSeconds: 15, accessLog: nil,
            allowedGroup: nil, log: Log(level: .error))
        defer { server.stop(graceSeconds: 1) }
        let gate = catalog.gate
        defer { gate.open() }

        let setup = try RawClient(path: socketPath)
        #expect(try setup.request("PUT", "/v1/stores/slow/blobs/seed", body: Array("seed".utf8)).status == 201)
        #expect(try setup.request("PUT", "/v1/stores/fast/blobs/first", body: Array("first".utf8)).status == 201)

        // The long scan, and a put to the scanned store, which must wait for it.
        let scanning = try RawClient(path: socketPath)
        let parts = scan.split(separator: " ")
        try scanning.send("\(parts[0]) \(parts[1]) HTTP/1.1\r\nHost: blobd\r\n\r\n")
        #expect(gate.waitUntilScanning(seconds: 10), "the scan never started")
        let blockedPut = try RawClient(path: socketPath)
        try blockedPut.send("PUT /v1/stores/slow/blobs/late HTTP/1.1\r\nHost: blobd\r\nContent-Length: 4\r\n\r\nlate")
        #expect(gate.waitUntilCommitsWait(seconds: 10), "the put to the scanned store never reached its commit")

        // Meanwhile, on the same (only) loop: small gets and puts, each answered within a second,
        // for as long as the scan is held (several seconds).
        let client = try RawClient(path: socketPath)
        let started = Date()
        var rounds = 0
        var slowest = 0.0
        while Date().timeIntervalSince(started) < 3 {
            let requests: [(String, String, [UInt8]?, Int)] = [
                ("PUT", "/v1/stores/fast/blobs/b\(rounds)", Array("body \(rounds)".utf8), 201),
                ("GET", "/v1/stores/fast/blobs/b\(rounds)", nil, 200),
                ("GET", "/v1/stores/slow/blobs/seed", nil, 200),
                ("GET", "/v1/health", nil, 200),
            ]
            for (method, target, body, status) in requests {
                let sent = Date()
                let response = try client.request(method, target, body: body)
                let seconds = Date().timeIntervalSince(sent)
                slowest = max(slowest, seconds)
                #expect(response.status == status, "\(method) \(target): \(response.text)")
                #expect(seconds < 1, "\(method) \(target) took \(seconds) s while the scan ran")
            }
            rounds += 1
        }
        #expect(gate.isScanning, "the scan ended before the test released it")
        #expect(rounds > 1, "slowest request \(slowest) s")

        // Released: the scan and the waiting put finish.
        gate.open()
        #expect(try scanning.readResponse().status == 200)
        #expect(try blockedPut.readResponse().status == 201)
        #expect(try client.request("GET", "/v1/stores/slow/blobs/late").text == "late")
    }
}

/// A store's slow disk, modelled: a scan (list, verify) runs until the test opens the gate, and
/// while a scan runs the store's commits wait for it (as the file store's barrier waits for the
/// read in progress). Owned by `condition`'s lock.
final class ScanGate: @unchecked Sendable {
    private let condition = NSCondition()
    private var scans = 0
    private var waitingCommits = 0
    private var opened = false

    /// Blocks the calling (blocking-work) thread until the gate opens.
    func scan() {
        condition.lock()
        scans += 1
        condition.broadcast()
        while !opened { condition.wait() }
        scans -= 1
        condition.broadcast()
        condition.unlock()
    }

    /// Blocks while a scan runs.
    func commit() {
        condition.lock()
        waitingCommits += 1
        condition.broadcast()
        while scans > 0 { condition.wait() }
        waitingCommits -= 1
        condition.unlock()
    }

    func open() {
        condition.lock()
        opened = true
        condition.broadcast()
        condition.unlock()
    }

    var isScanning: Bool {
        condition.lock()
        defer { condition.unlock() }
        return scans > 0
    }

    func waitUntilScanning(seconds: Double) -> Bool { waitUntil(seconds: seconds) { $0.scans > 0 } }

    func waitUntilCommitsWait(seconds: Double) -> Bool { waitUntil(seconds: seconds) { $0.waitingCommits > 0 } }

    private func waitUntil(seconds: Double, _ done: (ScanGate) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        defer { condition.unlock() }
        while !done(self) {
            if !condition.wait(until: deadline) { return done(self) }
        }
        return true
    }
}

/// In-memory stores; the one named `slow` scans behind the gate.
final class GatedCatalog: ServedBackendCatalog, @unchecked Sendable {
    let gate = ScanGate()
    private let lock = NSLock()
    private var stores: [String: GatedStore] = [:]

    func storeExists(_ name: String) throws -> Bool { lock.withLock { stores[name] != nil } }

    func openStore(_ name: String) throws -> any ServedBackend {
        let store = GatedStore(inner: try InMemoryBlobStore(name: name), gate: name == "slow" ? gate : nil)
        lock.withLock { stores[name] = store }
        return store
    }

    func discardStore(_ name: String, _ backend: any ServedBackend) throws { lock.withLock { stores[name] = nil } }

    func storeNames() throws -> [String] { lock.withLock { stores.keys.sorted() } }

    func otherHolders(of names: [String]) -> [String: String] { [:] }
}

/// An in-memory store whose scans and commits go through a ``ScanGate``.
final class GatedStore: ServedBackend {
    let inner: InMemoryBlobStore
    let gate: ScanGate?

    init(inner: InMemoryBlobStore, gate: ScanGate?) {
        self.inner = inner
        self.gate = gate
    }

    var name: String { inner.name }
    func openIfReady(_ identifier: String) -> (any ServedBlob)? { inner.openIfReady(identifier) }
    func open(_ identifier: String) throws -> any ServedBlob { try inner.open(identifier) }

    func startUpload(identifier: String, options: PutOptions) throws -> any BackendUpload {
        GatedUpload(inner: try inner.startUpload(identifier: identifier, options: options), gate: gate)
    }

    func remove(_ identifier: String, condition: WriteCondition) async throws -> Bool {
        gate?.commit()
        return try await inner.remove(identifier, condition: condition)
    }

    func removeAll() async throws {
        gate?.commit()
        try await inner.removeAll()
    }

    func list(_ query: ListQuery) async throws -> ListPage {
        gate?.scan()
        return try await inner.list(query)
    }

    func verify(repair: Bool) async throws -> VerificationReport {
        gate?.scan()
        return try await inner.verify(repair: repair)
    }

    func statistics() async throws -> StoreStatistics { try await inner.statistics() }
    func policy() async throws -> StorePolicy { try await inner.policy() }
    func setPolicy(_ policy: StorePolicy) async throws { try await inner.setPolicy(policy) }
    func observeChanges(_ observer: @escaping @Sendable (BlobChange) -> Void) { inner.observeChanges(observer) }
}

/// An upload whose commit waits for the gate's scan.
final class GatedUpload: BackendUpload, @unchecked Sendable {
    let inner: any BackendUpload
    let gate: ScanGate?

    init(inner: any BackendUpload, gate: ScanGate?) {
        self.inner = inner
        self.gate = gate
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws { try inner.append(bytes) }

    func commit(completion: @escaping @Sendable (Result<BlobMetadata, any Error>) -> Void) {
        gate?.commit()
        inner.commit(completion: completion)
    }

    func cancel() { inner.cancel() }
}
