@testable import BlobServer
import BlobStore
import BlobSystem
import Foundation
import S3BlobStore
import Testing

/// A policy update's commit (``PolicyUpload``) calls the store's async policy calls, which a backend
/// may block in (``ServedBackend``, "Where each call runs"): they must run on blobd's blocking-work
/// pool, never on the Swift concurrency pool.
@Suite struct PolicyCommitThreadTests {
    @Test func thePolicyCallsOfAPolicyUpdateRunOnTheBlockingPool() throws {
        let backend = ThreadRecordingBackend(try InMemoryBlobStore(name: "p"))
        // One thread, so that every job of the pool runs on the thread this first job finds.
        let pool = BlockingPool(name: "policy-test", maximumThreads: 1)
        let poolThread = Locked<pthread_t?>(nil)
        let started = DispatchSemaphore(value: 0)
        pool.submit {
            poolThread.withLock { $0 = pthread_self() }
            started.signal()
        }
        #expect(started.wait(timeout: .now() + 10) == .success)
        let expected = try #require(poolThread.withLock { $0 })
        let upload = PolicyUpload(store: backend, created: false, answer: PolicyAnswer(), pool: pool)
        try Array(#"{"maxCount":3}"#.utf8).withUnsafeBytes { try upload.append($0) }
        let done = DispatchSemaphore(value: 0)
        let outcome = Locked<Result<BlobMetadata, any Error>?>(nil)
        upload.commit { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success, "the commit never completed")
        #expect(throws: Never.self) { try outcome.withLock { $0 }?.get() }
        let threads = backend.threads.withLock { $0 }
        #expect(threads.map(\.call) == ["policy", "setPolicy", "statistics"])
        for (call, thread) in threads { #expect(pthread_equal(thread, expected) != 0, "\(call) ran off the pool's thread") }
    }
}

/// An in-memory store that notes the thread each policy call runs on.
private final class ThreadRecordingBackend: ServedBackend {
    let store: InMemoryBlobStore
    let threads = Locked<[(call: String, thread: pthread_t)]>([])

    init(_ store: InMemoryBlobStore) { self.store = store }

    private func note(_ call: String) { threads.withLock { $0.append((call, pthread_self())) } }

    var name: String { store.name }
    func openIfReady(_ identifier: String) -> (any ServedBlob)? { store.openIfReady(identifier) }
    func open(_ identifier: String) throws -> any ServedBlob { try store.open(identifier) }
    func startUpload(identifier: String, options: PutOptions) throws -> any BackendUpload { try store.startUpload(identifier: identifier, options: options) }
    func remove(_ identifier: String, condition: WriteCondition) async throws -> Bool { try await store.remove(identifier, condition: condition) }
    func removeAll() async throws { try await store.removeAll() }
    func list(_ query: ListQuery) async throws -> ListPage { try await store.list(query) }
    func verify(repair: Bool) async throws -> VerificationReport { try await store.verify(repair: repair) }
    func observeChanges(_ observer: @escaping @Sendable (BlobChange) -> Void) { store.observeChanges(observer) }

    func statistics() async throws -> StoreStatistics {
        note("statistics")
        return try await store.statistics()
    }

    func policy() async throws -> StorePolicy {
        note("policy")
        return try await store.policy()
    }

    func setPolicy(_ policy: StorePolicy) async throws {
        note("setPolicy")
        try await store.setPolicy(policy)
    }
}


/// An S3 store refuses a policy with limits before it asks the object store anything, and blobd
/// answers that refusal `422 unsupported_policy` (PROTOCOL.md, "Errors"), not `500 io_error`. Needs
/// no gateway: the endpoint is never contacted.
@Suite struct UnsupportedPolicyTests {
    @Test func anS3StoresRefusalOfLimitsIs422UnsupportedPolicy() async throws {
        let configuration = S3Configuration(
            credentials: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret"), region: "us-east-1",
            endpoint: S3Endpoint(scheme: .http, host: "127.0.0.1", port: 1), addressingStyle: .path)
        let store = try S3BlobStore(name: "photos", bucket: "bucket", keyPrefix: "p", configuration: configuration)
        try await store.setPolicy(.unlimited)
        for policy in [StorePolicy(maximumBytes: 1 << 20), StorePolicy(maximumCount: 5), StorePolicy(defaultTimeToLive: .seconds(60))] {
            do {
                try await store.setPolicy(policy)
                Issue.record("\(policy) was taken")
            } catch {
                let refusal = try #require(error as? UnsupportedPolicy)
                #expect(refusal.store == "photos")
                let response = Router.errorResponse(error)
                #expect(response.status.code == 422)
                let body = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
                let sent = try #require(body["error"] as? [String: Any])
                #expect(sent["code"] as? String == "unsupported_policy" && sent["message"] as? String == refusal.description)
            }
        }
    }
}
