import Dispatch
import Foundation

/// The completion-handler API of the article this store grew from ("Creating persistent data store
/// on iOS"), with the same names and meaning, on top of the async API.
///
/// Completion handlers run on `completionQueue`, the main queue by default as in the article. On Linux
/// the main queue runs only while the main thread is in `dispatchMain()` or a run loop; command-line
/// programs that do not do that pass their own queue.
extension PersistentDataStore {
    /// The article's name for identifiers.
    public typealias Identifier = String

    /// The outcome of ``storeData(_:identifier:completionQueue:completionHandler:)``.
    public enum Result: Sendable {
        /// Writing failed.
        case failed(any Error)
        /// The data provider returned `nil` or empty data; nothing was stored.
        case noData
        /// Stored under this identifier.
        case success(Identifier)
    }

    /// Opens (creating if needed) the store `name` under the default root, as in the article.
    public convenience init(name: String) throws {
        try self.init(name: name, root: StoreRoot.defaultURL)
    }

    /// Stores the data that `dataProvider` returns under `identifier` (a new UUID by default).
    ///
    /// The provider runs on a background queue, never inside the store's barrier, so a slow
    /// transformation (say, encoding an image) does not hold up readers.
    public func storeData(
        _ dataProvider: @escaping @Sendable () -> Data?, identifier: Identifier = UUID().uuidString,
        completionQueue: DispatchQueue = .main, completionHandler block: @escaping @Sendable (Result) -> Void
    ) {
        core.ioQueues.standard.async {
            guard let data = dataProvider(), !data.isEmpty else {
                completionQueue.async { block(.noData) }
                return
            }
            Task {
                let result: Result
                do {
                    result = .success(try await self.put(data, identifier: identifier, options: PutOptions()).identifier)
                } catch {
                    result = .failed(error)
                }
                completionQueue.async { block(result) }
            }
        }
    }

    /// Loads the blob `identifier` and transforms it with `dataTransformer` on a background queue;
    /// the handler gets `nil` if the blob does not exist, cannot be read, or does not transform.
    public func loadData<T>(
        forIdentifier identifier: Identifier, dataTransformer: @escaping @Sendable (Data) -> T?,
        completionQueue: DispatchQueue = .main, completionHandler block: @escaping @Sendable (T?) -> Void
    ) {
        Task {
            let data = try? await self.get(identifier)
            core.ioQueues.standard.async {
                // The transformed value is produced here and handed over whole to the completion queue.
                let object = UncheckedSendable(data.flatMap(dataTransformer))
                completionQueue.async { block(object.value) }
            }
        }
    }

    /// Removes the blob `identifier`; the optional handler gets whether it existed, or the error.
    public func removeData(
        forIdentifier identifier: Identifier, completionQueue: DispatchQueue = .main,
        completionHandler block: (@Sendable (Swift.Result<Bool, any Error>) -> Void)? = nil
    ) {
        Task {
            let result: Swift.Result<Bool, any Error>
            do { result = .success(try await self.remove(identifier, condition: .none)) } catch { result = .failure(error) }
            if let block { completionQueue.async { block(result) } }
        }
    }

    /// Removes every blob; the optional handler gets `nil` or the error.
    public func removeAll(completionQueue: DispatchQueue = .main, completionHandler block: (@Sendable ((any Error)?) -> Void)? = nil) {
        Task {
            var failure: (any Error)?
            do { try await self.removeAll() } catch { failure = error }
            let error = failure
            if let block { completionQueue.async { block(error) } }
        }
    }

    /// Stores image bytes (PNG, JPEG, GIF, WebP, BMP, TIFF, HEIC, AVIF) after checking that they are one;
    /// anything else fails with ``BlobStoreError/notAnImage(store:identifier:reason:)``.
    public func storeImage(
        _ imageData: Data, identifier: Identifier = UUID().uuidString, completionQueue: DispatchQueue = .main,
        completionHandler handler: @escaping @Sendable (Result) -> Void
    ) {
        Task {
            let result: Result
            do {
                result = .success(try await self.putImage(imageData, identifier: identifier).identifier)
            } catch {
                result = .failed(error)
            }
            completionQueue.async { handler(result) }
        }
    }

    /// Loads an image blob: its bytes with format and pixel size, or `nil` if absent or not an image.
    public func loadImage(
        forIdentifier identifier: Identifier, completionQueue: DispatchQueue = .main,
        completionHandler block: @escaping @Sendable (StoredImage?) -> Void
    ) {
        loadData(forIdentifier: identifier, dataTransformer: StoredImage.init(data:), completionQueue: completionQueue, completionHandler: block)
    }
}

/// An image as this store knows it on Linux: the encoded bytes plus what their header says.
public struct StoredImage: Sendable, Hashable {
    /// The encoded image.
    public var data: Data
    /// Format and pixel size.
    public var info: ImageInfo

    /// Recognises `data` as an image, or returns `nil`.
    public init?(data: Data) {
        let parsed = data.withUnsafeBytes { ImageHeaderParser.parse($0) }
        guard case .success(let info) = parsed else { return nil }
        self.data = data
        self.info = info
    }
}
