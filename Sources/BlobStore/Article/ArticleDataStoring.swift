internal import BlobSystem
import Dispatch
import Foundation

/// A store that also offers the completion-handler API of the article this project grew from
/// ("Creating persistent data store on iOS"): `storeData`, `loadData`, `removeData`, `removeAll`,
/// `storeImage` and `loadImage`, with the article's names, meaning and call order.
///
/// ``PersistentDataStore``, ``InMemoryBlobStore`` and the daemon client's `RemoteBlobStore` all
/// conform, through one implementation on top of their async API.
///
/// ## Order
///
/// As with the article's concurrent queue with barrier writes:
/// - Article calls made one after another — from one thread, or from anywhere with a happens-before
///   between them (a lock, a queue hop, a completion handler) — take effect in that order, without
///   waiting for their handlers: `removeData(forIdentifier: "a")` followed at once by
///   `loadData(forIdentifier: "a")` loads nothing, and a `loadData` after `storeData` loads the
///   stored data. The order is fixed when the call returns.
/// - Reads (`loadData`, `loadImage`) run side by side; a change (`storeData`, `storeImage`,
///   `removeData`, `removeAll`) starts only after every article call made before it has finished,
///   and no article call made after it starts before it has finished.
/// - A call finishes after its completion handler is queued, so on a serial completion queue the
///   handlers of a change and of any call on its either side run in call order.
/// - Only article calls are ordered with each other (per ``articleCallOrder``). The async API does
///   not wait for them: it sees an article change once its handler has been queued.
///
/// Unlike the article, a `storeData` data provider does not run inside the barrier: it starts at
/// once on a background queue, beside earlier calls, and only the write waits for them — but every
/// article call made after the `storeData` waits for the provider too (ordering wins). Calls the
/// provider itself makes to this store's article API, on its own thread, are ordered just before the
/// store it feeds, so a provider may load what it is about to replace. A provider, transformer or
/// handler that waits for an article call made after its own call waits forever, as in the article.
///
/// The store work behind each call runs on Dispatch's threads, never the Swift concurrency pool
/// (``ArticleTaskExecutor``): article calls complete even while the caller's code blocks every
/// thread of that pool.
///
/// Completion handlers run on `completionQueue`, the main queue by default as in the article. On
/// Linux the main queue runs only while the main thread is in `dispatchMain()` or a run loop;
/// command-line programs that do not do that pass their own queue.
public protocol ArticleDataStoring: BlobStoring {
    /// The order this store's article calls take effect in; calls through stores that share it are
    /// ordered together.
    var articleCallOrder: ArticleCallOrder { get }
}

/// The outcome of `storeData` and `storeImage` (the article's `Result`).
public enum StoreDataResult: Sendable {
    /// Writing failed.
    case failed(any Error)
    /// The data provider returned `nil` or empty data; nothing was stored.
    case noData
    /// Stored under this identifier.
    case success(String)
}

extension ArticleDataStoring {
    /// Stores the data that `dataProvider` returns under `identifier` (a new UUID by default); a
    /// change. The provider runs on a background queue, not inside the store's barrier (see
    /// ``ArticleDataStoring`` for how that is ordered).
    public func storeData(
        _ dataProvider: @escaping @Sendable () -> Data?, identifier: String = UUID().uuidString,
        completionQueue: DispatchQueue = .main, completionHandler block: @escaping @Sendable (StoreDataResult) -> Void
    ) {
        let order = articleCallOrder
        let provided = Locked<Data?>(nil)
        let call = order.schedule(change: true, awaitingProvider: true) { call in
            guard let data = provided.withLock({ $0 }), !data.isEmpty else {
                order.runCallerCode {
                    completionQueue.async { block(.noData) }
                    call.finish()
                }
                return
            }
            Task.detached(executorPreference: ArticleTaskExecutor.shared) {
                let result: StoreDataResult
                do {
                    result = .success(try await self.put(data, identifier: identifier, options: PutOptions()).identifier)
                } catch {
                    result = .failed(error)
                }
                completionQueue.async { block(result) }
                call.finish()
            }
        }
        order.runCallerCode {
            order.runProvider(of: call) {
                let data = dataProvider()
                provided.withLock { $0 = data }
            }
        }
    }

    /// Loads the blob `identifier` and transforms it with `dataTransformer` on a background queue;
    /// a read. The handler gets `nil` if the blob does not exist, cannot be read, or does not transform.
    public func loadData<T>(
        forIdentifier identifier: String, dataTransformer: @escaping @Sendable (Data) -> T?,
        completionQueue: DispatchQueue = .main, completionHandler block: @escaping @Sendable (T?) -> Void
    ) {
        let order = articleCallOrder
        order.schedule(change: false) { call in
            Task.detached(executorPreference: ArticleTaskExecutor.shared) {
                let data = try? await self.get(identifier)
                order.runCallerCode {
                    // Produced here and handed over whole to the completion queue.
                    let object = UncheckedSendable(data.flatMap(dataTransformer))
                    completionQueue.async { block(object.value) }
                    call.finish()
                }
            }
        }
    }

    /// Removes the blob `identifier`; a change. The optional handler gets whether it existed, or the error.
    public func removeData(
        forIdentifier identifier: String, completionQueue: DispatchQueue = .main,
        completionHandler block: (@Sendable (Swift.Result<Bool, any Error>) -> Void)? = nil
    ) {
        performChange(completionQueue: completionQueue, completionHandler: block) {
            do { return .success(try await self.remove(identifier, condition: .none)) } catch { return .failure(error) }
        }
    }

    /// Removes every blob; a change. The optional handler gets `nil` or the error.
    public func removeAll(completionQueue: DispatchQueue = .main, completionHandler block: (@Sendable ((any Error)?) -> Void)? = nil) {
        performChange(completionQueue: completionQueue, completionHandler: block) { () async -> (any Error)? in
            do { try await self.removeAll() } catch { return error }
            return nil
        }
    }

    /// Stores image bytes (PNG, JPEG, GIF, WebP, BMP, TIFF, HEIC, AVIF) after checking that they are
    /// one; a change. Anything else fails with ``BlobStoreError/notAnImage(store:identifier:reason:)``.
    public func storeImage(
        _ imageData: Data, identifier: String = UUID().uuidString, completionQueue: DispatchQueue = .main,
        completionHandler handler: @escaping @Sendable (StoreDataResult) -> Void
    ) {
        performChange(completionQueue: completionQueue, completionHandler: handler) { () async -> StoreDataResult in
            do { return .success(try await self.putImage(imageData, identifier: identifier).identifier) } catch { return .failed(error) }
        }
    }

    /// Loads an image blob: its bytes with format and pixel size, or `nil` if absent or not an image; a read.
    public func loadImage(
        forIdentifier identifier: String, completionQueue: DispatchQueue = .main,
        completionHandler block: @escaping @Sendable (StoredImage?) -> Void
    ) {
        loadData(forIdentifier: identifier, dataTransformer: StoredImage.init(data:), completionQueue: completionQueue, completionHandler: block)
    }

    /// Runs `change` in its place in the order and hands its outcome to `handler` on `completionQueue`.
    private func performChange<Outcome: Sendable>(
        completionQueue: DispatchQueue, completionHandler handler: (@Sendable (Outcome) -> Void)?,
        _ change: @escaping @Sendable () async -> Outcome
    ) {
        articleCallOrder.schedule(change: true) { call in
            Task.detached(executorPreference: ArticleTaskExecutor.shared) {
                let outcome = await change()
                if let handler { completionQueue.async { handler(outcome) } }
                call.finish()
            }
        }
    }
}
