import BlobStore
import Foundation
import Glibc

/// Builds the variants scenarios share: the same put or get done by the store, the raw loop and the
/// article's store, with `concurrency` writers or readers each taking every `concurrency`-th blob.
enum Drivers {
    // MARK: - Store

    /// Puts every blob of `workload` with `writers` tasks (of `priority`, if given), through a store
    /// opened fresh in the run's folder, or through `existing` (for overwrites) if given.
    static func storePut(
        _ workload: Workload, durability: Durability, writers: Int, existing: PersistentDataStore? = nil,
        priority: TaskPriority? = nil, name: String? = nil, afterRun: (@Sendable () async throws -> Void)? = nil
    ) -> Variant {
        Variant(.store, concurrency: writers, operations: workload.identifiers.count, name: name) { directory in
            let store = try existing ?? openStore(directory, durability: durability)
            let elapsed = try await Timing.measure { try await putAll(store, workload, writers: writers, priority: priority) }
            try await afterRun?()
            return elapsed
        }
    }

    /// Opens a store named `bench` under `root`.
    static func openStore(_ root: String, durability: Durability) throws -> PersistentDataStore {
        try PersistentDataStore(name: "bench", root: URL(fileURLWithPath: root), configuration: .init(durability: durability))
    }

    /// Puts every blob of `workload`, spread over `writers` tasks; `afterEach` (given the blob's
    /// index) runs in the writer's task after each put. Writers are tasks: each awaits its puts one
    /// after another, as an application's writers would.
    static func putAll(
        _ store: PersistentDataStore, _ workload: Workload, writers: Int, priority: TaskPriority? = nil,
        afterEach: (@Sendable (Int) throws -> Void)? = nil
    ) async throws {
        let options = PutOptions()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask(priority: priority) {
                    for index in stride(from: writer, to: workload.identifiers.count, by: writers) {
                        try await store.put(workload.data, identifier: workload.identifiers[index], options: options)
                        try afterEach?(index)
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// `operations` gets spread over `readers` tasks, cycling through the stored identifiers.
    static func storeGet(_ workload: Workload, store: PersistentDataStore, readers: Int, operations: Int, name: String? = nil) -> Variant {
        Variant(.store, concurrency: readers, operations: operations, name: name) { _ in
            let expected = workload.data.count
            let identifiers = workload.identifiers
            return try await Timing.measure {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for reader in 0..<readers {
                        group.addTask {
                            for index in stride(from: reader, to: operations, by: readers) {
                                let data = try await store.get(identifiers[index % identifiers.count])
                                guard data.count == expected else { throw BaselineFailure(count: 1) }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
    }

    /// Gets through the store's blocking API (`openForReading`, `read`, `close`) on `readers` threads.
    static func blockingGet(_ workload: Workload, store: PersistentDataStore, readers: Int, operations: Int) -> Variant {
        Variant(.store, concurrency: readers, operations: operations, name: "blocking×\(readers)") { _ in
            let expected = Int64(workload.data.count)
            let identifiers = workload.identifiers
            return try await Timing.measure {
                try await Workers.run(readers) { reader in
                    for index in stride(from: reader, to: operations, by: readers) {
                        let handle = try store.openForReading(identifiers[index % identifiers.count])
                        defer { handle.close() }
                        guard try handle.read(0..<expected).count == expected else { throw BaselineFailure(count: 1) }
                    }
                }
            }
        }
    }

    /// Puts through the store's blocking upload API (`beginUpload`, `append`, `commit`), the path
    /// blobd's loops take, on `writers` threads into a store opened fresh in the run's folder; each
    /// thread waits for its commit before the next put.
    static func blockingPut(_ workload: Workload, durability: Durability, writers: Int) -> Variant {
        Variant(.store, concurrency: writers, operations: workload.identifiers.count, name: "blocking×\(writers)") { directory in
            let store = try openStore(directory, durability: durability)
            return try await Timing.measure {
                try await Workers.run(writers) { writer in
                    let committed = DispatchSemaphore(value: 0)
                    let failures = Locked(0)
                    for index in stride(from: writer, to: workload.identifiers.count, by: writers) {
                        let upload = try store.beginUpload(identifier: workload.identifiers[index], options: PutOptions())
                        try workload.data.withUnsafeBytes { try upload.append($0) }
                        upload.commit { result in
                            if case .failure = result { failures.withLock { $0 += 1 } }
                            committed.signal()
                        }
                        committed.wait()
                    }
                    let failed = failures.withLock { $0 }
                    if failed > 0 { throw BaselineFailure(count: failed) }
                }
            }
        }
    }

    /// `operations` async round trips through a concurrent `DispatchQueue` doing nothing, from
    /// `readers` tasks: the cost of the two thread hand-offs every queue-backed async call pays.
    static func emptyHop(readers: Int, operations: Int) -> Variant {
        Variant(.store, concurrency: readers, operations: operations, name: "hop×\(readers)") { _ in
            let queue = DispatchQueue(label: "blob-bench.hop", attributes: .concurrent)
            return try await Timing.measure {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for reader in 0..<readers {
                        group.addTask {
                            for _ in stride(from: reader, to: operations, by: readers) {
                                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                                    queue.async { continuation.resume() }
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
    }

    // MARK: - Raw POSIX

    /// Raw temp-file-and-rename puts into `folder` (or the run's folder), on `writers` threads.
    static func rawPut(_ workload: Workload, durable: Bool, writers: Int, folder: String? = nil) -> Variant {
        Variant(.raw, concurrency: writers, operations: workload.identifiers.count) { directory in
            let target = folder ?? directory
            let finals = workload.paths(in: target)
            let temps = workload.paths(in: target, prefix: ".tmp-")
            let fd = try RawPOSIX.openDirectory(target)
            defer { close(fd) }
            return try await Timing.measure {
                try await Workers.run(writers) { writer in
                    try RawPOSIX.put(
                        workload.content, finals: finals, temps: temps, indices: stride(from: writer, to: finals.count, by: writers),
                        durable: durable, directory: fd)
                }
            }
        }
    }

    /// The raw put loop driven from `writers` tasks, each put handed to a concurrent `DispatchQueue`
    /// (at the quality of service the store's async calls from `.medium` tasks use) and awaited: what an
    /// async API that keeps blocking file I/O off the concurrency pool pays before doing any work of its
    /// own. `raw-hop×N / raw×N` is the ceiling for the async put's ratio to the raw loop.
    static func rawPutThroughQueue(_ workload: Workload, writers: Int) -> Variant {
        Variant(.store, concurrency: writers, operations: workload.identifiers.count, name: "raw-hop×\(writers)") { directory in
            let finals = workload.paths(in: directory)
            let temps = workload.paths(in: directory, prefix: ".tmp-")
            let fd = try RawPOSIX.openDirectory(directory)
            defer { close(fd) }
            let queue = DispatchQueue(label: "blob-bench.raw-hop", qos: .default, attributes: .concurrent)
            return try await Timing.measure {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for writer in 0..<writers {
                        group.addTask {
                            for index in stride(from: writer, to: finals.count, by: writers) {
                                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                                    queue.async {
                                        do {
                                            try RawPOSIX.put(
                                                workload.content, finals: finals, temps: temps, indices: stride(from: index, to: index + 1, by: 1),
                                                durable: false, directory: fd)
                                            continuation.resume()
                                        } catch {
                                            continuation.resume(throwing: error)
                                        }
                                    }
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
    }

    /// Raw open/read/close of the plain files in `folder`, on `readers` threads, each with one reused buffer.
    static func rawGet(_ workload: Workload, folder: String, readers: Int, operations: Int) -> Variant {
        Variant(.raw, concurrency: readers, operations: operations) { _ in
            let paths = workload.paths(in: folder)
            let size = workload.data.count
            return try await Timing.measure {
                try await Workers.run(readers) { reader in
                    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(size, 1), alignment: 4096)
                    defer { buffer.deallocate() }
                    try RawPOSIX.get(buffer, paths: paths, size: size, operations: stride(from: reader, to: operations, by: readers))
                }
            }
        }
    }

    // MARK: - The article's store

    /// Puts through the article's store opened fresh in the run's folder; each writer thread waits for
    /// every completion handler before its next put.
    static func articlePut(_ workload: Workload, writers: Int) -> Variant {
        Variant(.article, concurrency: writers, operations: workload.identifiers.count) { directory in
            let store = try ArticleDataStore(name: "article", root: URL(fileURLWithPath: directory))
            let data = workload.data
            let identifiers = workload.identifiers
            return try await Timing.measure {
                try await Workers.run(writers) { writer in
                    try Workers.awaitEach(stride(from: writer, to: identifiers.count, by: writers)) { index, done in
                        store.storeData({ data }, identifier: identifiers[index]) { result in
                            if case .success = result { done(true) } else { done(false) }
                        }
                    }
                }
            }
        }
    }

    /// Gets through the article's `loadData` from its folder `root/article`.
    static func articleGet(_ workload: Workload, store: ArticleDataStore, readers: Int, operations: Int) -> Variant {
        Variant(.article, concurrency: readers, operations: operations) { _ in
            let identifiers = workload.identifiers
            let expected = workload.data.count
            return try await Timing.measure {
                try await Workers.run(readers) { reader in
                    try Workers.awaitEach(stride(from: reader, to: operations, by: readers)) { index, done in
                        store.loadData(forIdentifier: identifiers[index % identifiers.count], dataTransformer: { $0.count }) { count in
                            done(count == expected)
                        }
                    }
                }
            }
        }
    }
}
