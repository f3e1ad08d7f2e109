@testable import BlobServer
import BlobStore
import BlobSystem
import Foundation
import Testing

/// Small puts of one store from one loop run as batches in the store's lane (``UploadLane``): each
/// put still gets its own outcome, and a lane whose commit waits holds up neither the loop nor the
/// puts of other stores.
///
/// The daemon runs in-process with one event loop, over in-memory stores whose commits the test
/// holds (``HeldCommits``): the put `held` waits until released, so the puts that arrive meanwhile
/// queue in the lane and are then run as one batch.
@Suite struct UploadLaneTests {
    /// One put of a batch fails at its commit: that request, and only it, gets the error; the
    /// others in the same batch are stored and answered as usual.
    @Test func aFailingPutInABatchAnswersOnlyItsOwnRequest() throws {
        try withDaemon { server, socketPath, commits in
            let holder = try RawClient(path: socketPath)
            try holder.send(put("s", "held", body: "held"))
            #expect(commits.waitUntilHeld(seconds: 10), "the first put never reached its commit")

            // Behind it in the lane: good and failing puts, each on its own connection.
            let names = ["good-1", "bad-1", "good-2", "good-3", "bad-2", "good-4"]
            var clients: [RawClient] = []
            for name in names {
                let client = try RawClient(path: socketPath)
                try client.send(put("s", name, body: "content of \(name)"))
                clients.append(client)
            }
            let deadline = Date().addingTimeInterval(10)
            while server.queuedSmallPuts(store: "s") < names.count && Date() < deadline { usleep(5_000) }
            #expect(server.queuedSmallPuts(store: "s") == names.count, "the puts did not queue behind the held one")

            commits.release()
            #expect(try holder.readResponse().status == 201)
            for (name, client) in zip(names, clients) {
                let response = try client.readResponse()
                if name.hasPrefix("bad") {
                    #expect(response.status == 500, "\(name): \(response.text)")
                    #expect(response.errorCode == "io_error", "\(name): \(response.text)")
                    #expect(response.text.contains("/refused/\(name)"), "\(name) got another put's error: \(response.text)")
                } else {
                    #expect(response.status == 201, "\(name): \(response.text)")
                    #expect(response.json?["identifier"] as? String == name, "\(name) got another put's answer: \(response.text)")
                }
            }
            // They ran as one batch, after the held put, on its lane's thread.
            let threads = commits.threads
            #expect(threads.count == names.count + 1 && Set(threads.map(\.thread)).count == 1, "\(threads)")

            let reader = try RawClient(path: socketPath)
            for name in names {
                let response = try reader.request("GET", "/v1/stores/s/blobs/\(name)")
                if name.hasPrefix("bad") {
                    #expect(response.status == 404, "\(name) was stored after its commit failed")
                } else {
                    #expect(response.text == "content of \(name)")
                }
            }
        }
    }

    /// While a lane's job waits in a commit, with puts queued behind it, the loop keeps answering:
    /// a health check, puts to another store (another lane), and gets.
    @Test func aLaneWaitingInACommitHoldsUpNeitherTheLoopNorOtherStores() throws {
        try withDaemon { server, socketPath, commits in
            let setup = try RawClient(path: socketPath)
            #expect(try setup.request("PUT", "/v1/stores/s/blobs/seed", body: Array("seed".utf8)).status == 201)
            let holder = try RawClient(path: socketPath)
            try holder.send(put("s", "held", body: "held"))
            #expect(commits.waitUntilHeld(seconds: 10), "the put never reached its commit")
            let queued = try RawClient(path: socketPath)
            try queued.send(put("s", "queued", body: "queued"))
            let deadline = Date().addingTimeInterval(10)
            while server.queuedSmallPuts(store: "s") < 1 && Date() < deadline { usleep(5_000) }
            #expect(server.queuedSmallPuts(store: "s") == 1)

            let client = try RawClient(path: socketPath)
            for round in 0..<20 {
                #expect(try client.request("GET", "/v1/health").status == 200)
                #expect(try client.request("PUT", "/v1/stores/t/blobs/b\(round)", body: Array("b\(round)".utf8)).status == 201)
                #expect(try client.request("GET", "/v1/stores/t/blobs/b\(round)").text == "b\(round)")
                #expect(try client.request("GET", "/v1/stores/s/blobs/seed").text == "seed")
            }
            #expect(commits.isHolding, "the held commit was let go before the test released it")

            commits.release()
            #expect(try holder.readResponse().status == 201)
            #expect(try queued.readResponse().status == 201)
            #expect(try client.request("GET", "/v1/stores/s/blobs/queued").text == "queued")
        }
    }

    private func put(_ store: String, _ name: String, body: String) -> String {
        "PUT /v1/stores/\(store)/blobs/\(name) HTTP/1.1\r\nHost: blobd\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    private func withDaemon(_ body: (Server, String, HeldCommits) throws -> Void) throws {
        let folder = TempFolder()
        let socketPath = folder.path + "/blobd.sock"
        let listener = try UnixSocket.listen(path: socketPath, permissions: 0o600)
        defer { try? listener.close() }
        let catalog = HeldCommitCatalog()
        let server = try Server(
            listener: listener, catalog: catalog, maximumBlobSize: 1 << 30, eventLoopCount: 1, heartbeatSeconds: 15, accessLog: nil,
            allowedGroup: nil, log: Log(level: .error))
        defer { server.stop(graceSeconds: 1) }
        defer { catalog.commits.release() }
        try body(server, socketPath, catalog.commits)
    }
}

/// The commits of store `s`: the put named `held` waits until ``release()``; puts named `bad-…`
/// fail with an I/O error naming them; every commit's thread is recorded. Owned by `condition`'s lock.
final class HeldCommits: @unchecked Sendable {
    private let condition = NSCondition()
    private var holding = false
    private var released = false
    private var recorded: [(name: String, thread: UInt)] = []

    /// Called by a commit of store `s` on the thread that runs it; throws for a `bad-…` put.
    func commit(_ name: String) throws {
        condition.lock()
        recorded.append((name, UInt(bitPattern: Int(bitPattern: pthread_self()))))
        if name == "held" {
            holding = true
            condition.broadcast()
            while !released { condition.wait() }
            holding = false
        }
        condition.unlock()
        if name.hasPrefix("bad") {
            throw BlobStoreError.io(operation: "commit", path: "/refused/\(name)", errno: ErrorNumber(rawValue: EIO))
        }
    }

    func release() {
        condition.lock()
        released = true
        condition.broadcast()
        condition.unlock()
    }

    var isHolding: Bool {
        condition.lock()
        defer { condition.unlock() }
        return holding
    }

    /// The commits so far (but `seed`'s), in order, with their threads.
    var threads: [(name: String, thread: UInt)] {
        condition.lock()
        defer { condition.unlock() }
        return recorded.filter { $0.name != "seed" }
    }

    func waitUntilHeld(seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        defer { condition.unlock() }
        while !holding {
            if !condition.wait(until: deadline) { return holding }
        }
        return true
    }
}

/// In-memory stores; store `s` commits through ``HeldCommits``.
final class HeldCommitCatalog: ServedBackendCatalog, @unchecked Sendable {
    let commits = HeldCommits()
    private let lock = NSLock()
    private var stores: [String: any ServedBackend] = [:]

    func storeExists(_ name: String) throws -> Bool { lock.withLock { stores[name] != nil } }

    func openStore(_ name: String) throws -> any ServedBackend {
        let inner = try InMemoryBlobStore(name: name)
        let store: any ServedBackend = name == "s" ? HeldCommitStore(inner: inner, commits: commits) : inner
        lock.withLock { stores[name] = store }
        return store
    }

    func discardStore(_ name: String, _ backend: any ServedBackend) throws { lock.withLock { stores[name] = nil } }

    func storeNames() throws -> [String] { lock.withLock { stores.keys.sorted() } }

    func otherHolders(of names: [String]) -> [String: String] { [:] }
}

/// An in-memory store whose uploads commit through ``HeldCommits``.
final class HeldCommitStore: ServedBackend {
    let inner: InMemoryBlobStore
    let commits: HeldCommits

    init(inner: InMemoryBlobStore, commits: HeldCommits) {
        self.inner = inner
        self.commits = commits
    }

    var name: String { inner.name }
    func openIfReady(_ identifier: String) -> (any ServedBlob)? { inner.openIfReady(identifier) }
    func open(_ identifier: String) throws -> any ServedBlob { try inner.open(identifier) }

    func startUpload(identifier: String, options: PutOptions) throws -> any BackendUpload {
        HeldCommitUpload(inner: try inner.startUpload(identifier: identifier, options: options), name: identifier, commits: commits)
    }

    func remove(_ identifier: String, condition: WriteCondition) async throws -> Bool { try await inner.remove(identifier, condition: condition) }
    func removeAll() async throws { try await inner.removeAll() }
    func list(_ query: ListQuery) async throws -> ListPage { try await inner.list(query) }
    func verify(repair: Bool) async throws -> VerificationReport { try await inner.verify(repair: repair) }
    func statistics() async throws -> StoreStatistics { try await inner.statistics() }
    func policy() async throws -> StorePolicy { try await inner.policy() }
    func setPolicy(_ policy: StorePolicy) async throws { try await inner.setPolicy(policy) }
    func observeChanges(_ observer: @escaping @Sendable (BlobChange) -> Void) { inner.observeChanges(observer) }
}

/// An upload whose commit goes through ``HeldCommits`` first (and fails there for a `bad-…` put).
final class HeldCommitUpload: BackendUpload, @unchecked Sendable {
    let inner: any BackendUpload
    let name: String
    let commits: HeldCommits

    init(inner: any BackendUpload, name: String, commits: HeldCommits) {
        self.inner = inner
        self.name = name
        self.commits = commits
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws { try inner.append(bytes) }

    func commit(completion: @escaping @Sendable (Result<BlobMetadata, any Error>) -> Void) {
        do { try commits.commit(name) } catch {
            inner.cancel()
            return completion(.failure(error))
        }
        inner.commit(completion: completion)
    }

    func cancel() { inner.cancel() }
}
