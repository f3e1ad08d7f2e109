// The baseline: `PersistentDataStore` from the article "Creating persistent data store on iOS"
// (augmentedcode.io, Xcode 10 / Swift 4.2; the copy read here is
// /work/shared/seeds/003_a7d9ebaa9033fb2b.txt), as written, ported only as far as Linux and
// Swift 6 require:
// - the folder lives under a given root instead of the iOS documents folder;
// - completion handlers run on a private serial queue instead of the main queue (a command-line
//   benchmark does not run the main queue; it waits with semaphores);
// - closures are `@Sendable` and `T: Sendable`, because Swift 6 requires it for `DispatchQueue.async`;
// - `url(forIdentifier:)`, which the article uses but does not show, appends the identifier.
// Everything else (FileManager, `Data.write(to:options: .atomic)`, `Data(contentsOf:options: .mappedIfSafe)`,
// a concurrent queue with `.barrier` writes, `fileExists` before each read and remove) is the article's.
// Renamed so it does not clash with the store's type of the same name.

import Dispatch
import Foundation

/// The article's persistent data store: one file per identifier in a folder, reads on a concurrent
/// queue, writes as barrier work items on the same queue.
final class ArticleDataStore: Sendable {
    typealias Identifier = String

    /// The article's outcome of a store.
    enum Result: Sendable {
        case failed(any Error)
        case noData
        case success(Identifier)
    }

    let name: String
    private let dataStoreURL: URL
    private let queue: DispatchQueue
    /// Stands in for `DispatchQueue.main` (see the file comment).
    private let completionQueue = DispatchQueue(label: "article.completion")

    init(name: String, root: URL) throws {
        self.name = name
        queue = DispatchQueue(
            label: "com.augmentedcode.persistentdatastore", qos: .userInitiated, attributes: .concurrent, autoreleaseFrequency: .workItem)
        dataStoreURL = root.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: dataStoreURL, withIntermediateDirectories: true, attributes: nil)
    }

    private func url(forIdentifier identifier: Identifier) -> URL {
        dataStoreURL.appendingPathComponent(identifier)
    }

    func storeData(
        _ dataProvider: @escaping @Sendable () -> (Data?), identifier: Identifier = UUID().uuidString,
        completionHandler block: @escaping @Sendable (Result) -> Void
    ) {
        queue.async(flags: .barrier) {
            let url = self.url(forIdentifier: identifier)
            guard let data = dataProvider(), !data.isEmpty else {
                self.completionQueue.async {
                    block(.noData)
                }
                return
            }
            do {
                try data.write(to: url, options: .atomic)
                self.completionQueue.async {
                    block(.success(identifier))
                }
            } catch {
                self.completionQueue.async {
                    block(.failed(error))
                }
            }
        }
    }

    func loadData<T: Sendable>(
        forIdentifier identifier: Identifier, dataTransformer: @escaping @Sendable (Data) -> (T?),
        completionHandler block: @escaping @Sendable (T?) -> Void
    ) {
        queue.async {
            let url = self.url(forIdentifier: identifier)
            guard FileManager.default.fileExists(atPath: url.path) else {
                self.completionQueue.async {
                    block(nil)
                }
                return
            }
            do {
                let data = try Data(contentsOf: url, options: .mappedIfSafe)
                let object = dataTransformer(data)
                self.completionQueue.async {
                    block(object)
                }
            } catch {
                print("Failed reading data at URL \(url).")
                self.completionQueue.async {
                    block(nil)
                }
            }
        }
    }

    func removeData(forIdentifier identifier: Identifier) {
        queue.async(flags: .barrier) {
            let url = self.url(forIdentifier: identifier)
            guard FileManager.default.fileExists(atPath: url.path) else { return }
            do {
                try FileManager.default.removeItem(at: url)
            } catch {
                print("Failed removing file at URL \(url) with error \(error).")
            }
        }
    }

    func removeAll() {
        queue.async(flags: .barrier) {
            do {
                let urls = try FileManager.default.contentsOfDirectory(at: self.dataStoreURL, includingPropertiesForKeys: nil, options: [])
                try urls.forEach({ try FileManager.default.removeItem(at: $0) })
            } catch {
                print("Failed removing all files with error \(error).")
            }
        }
    }
}
