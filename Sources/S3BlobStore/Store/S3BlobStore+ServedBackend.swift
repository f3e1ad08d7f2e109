internal import BlobSystem
import BlobStore
import Foundation

/// The S3 store as blobd serves it. Every call blocks its (blocking-work) thread on S3 requests;
/// nothing is ever ready without one, so ``openIfReady(_:)`` answers `nil`.
extension S3BlobStore: ServedBackend {
    /// Versions up to this size are read into memory when opened; larger ones into an unlinked temp
    /// file in the spool folder, sent from there with `sendfile`.
    package static let servedInMemoryLimit: Int64 = 1 << 20

    package func openIfReady(_ identifier: String) -> (any ServedBlob)? { nil }

    /// The current version, pinned: its content is fetched (and checked against its XXH64) now.
    package func open(_ identifier: String) throws -> any ServedBlob {
        guard let opened = try openContent(identifier, range: nil) else { throw BlobStoreError.notFound(store: name, identifier: identifier) }
        defer { opened.reader.close() }
        if opened.metadata.size <= Self.servedInMemoryLimit {
            return S3ServedBlob(metadata: opened.metadata, content: try opened.reader.readAll(expectedCount: opened.metadata.size), file: nil)
        }
        let path = spoolFolder.appendingPathComponent(".s3-get-\(UUID().uuidString).fetched").path
        let descriptor: FileDescriptor
        do throws(Errno) {
            descriptor = try FileDescriptor.open(path, [.readWrite, .create, .exclusive, .closeOnExec], permissions: 0o600)
        } catch {
            throw BlobStoreError.io(operation: "create (S3 fetched copy)", path: path, errno: error)
        }
        _ = try? FileSystem.unlink(path)
        do {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 16)
            defer { buffer.deallocate() }
            var offset: Int64 = 0
            while true {
                let count = try opened.reader.read(into: buffer)
                if count == 0 { break }
                do throws(Errno) {
                    try descriptor.writeAll(toAbsoluteOffset: offset, UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                } catch {
                    throw BlobStoreError.io(operation: "write (S3 fetched copy)", path: path, errno: error)
                }
                offset += Int64(count)
            }
        } catch {
            try? descriptor.close()
            throw error
        }
        let key = layout.blobKey(store: name, identifier: identifier)
        let handle = BlobReadHandle(contentFile: descriptor, metadata: opened.metadata, path: "\(objectURI(key)) (fetched copy)", store: name)
        return S3ServedBlob(metadata: opened.metadata, content: nil, file: handle)
    }

    /// A put fed piece by piece: the same spool, checks and conditional PUT as ``put(_:identifier:options:)``.
    package func startUpload(identifier: String, options: PutOptions) throws -> any BackendUpload {
        let id = try ContentInspection.prepare(store: name, identifier: identifier, options: options)
        let key = try key(for: id)
        return S3Upload(store: self, spool: S3ContentSpool(store: name, identifier: id, folder: spoolFolder), identifier: id, key: key, options: options)
    }

    /// Reads every object of the store (8 at once) and checks its header and XXH64: a damaged one
    /// is `corrupt`, a foreign one (no valid header) `orphaned`. A repair changes nothing on S3 (it
    /// does not delete what it cannot fix); it reports the same findings, with an empty
    /// `quarantined` list (docs/SCALE-OUT.md).
    package func verify(repair: Bool) async throws -> VerificationReport {
        try await BlockingThreads.run {
            let objects = try self.allObjects()
            enum Verdict: Sendable {
                case healthy, gone
                case corrupt(VerificationReport.Finding)
                case foreign(VerificationReport.Finding)
            }
            let verdicts = try S3Parallel.map(objects, width: Self.parallelRequests) { object -> Verdict in
                let opened: S3OpenedContent
                do {
                    guard let found = try self.openContent(object.identifier, range: nil) else { return .gone }
                    opened = found
                } catch BlobStoreError.notFound {
                    return .gone
                } catch BlobStoreError.corrupt(_, let reason) {
                    return .foreign(VerificationReport.Finding(path: self.objectURI(object.key), identifier: object.identifier, reason: reason))
                }
                defer { opened.reader.close() }
                let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
                defer { scratch.deallocate() }
                do {
                    while try opened.reader.read(into: scratch) > 0 {}
                } catch BlobStoreError.corrupt(let path, let reason) {
                    return .corrupt(VerificationReport.Finding(path: path, identifier: object.identifier, reason: reason))
                }
                return .healthy
            }
            var report = VerificationReport(healthy: 0, corrupt: [], orphaned: [], quarantined: repair ? [] : nil)
            for verdict in verdicts {
                switch verdict {
                case .healthy: report.healthy += 1
                case .gone: break
                case .corrupt(let finding): report.corrupt.append(finding)
                case .foreign(let finding): report.orphaned.append(finding)
                }
            }
            return report
        }
    }

    /// No cache policy on S3: always ``StorePolicy/unlimited``.
    package func policy() async throws -> StorePolicy { .unlimited }

    /// Not counted locally: ``statistics()`` lists every object under the store's prefix.
    package var countsLocally: Bool { false }

    /// Accepts only ``StorePolicy/unlimited``: an S3 store has no limits, no eviction and no default
    /// time to live (a put's own expiry is honoured). Anything else throws ``UnsupportedPolicy``.
    package func setPolicy(_ policy: StorePolicy) async throws {
        guard policy == .unlimited else {
            throw UnsupportedPolicy(
                store: name,
                reason: "an S3 store (\(backendDescription)) has no byte or count limit and no default time to live; "
                    + "a put's own expiry is honoured (docs/SCALE-OUT.md)")
        }
    }
}

/// One version opened for serving: its content in memory, or in a fetched copy sent with `sendfile`.
struct S3ServedBlob: ServedBlob {
    let metadata: BlobMetadata
    let content: Data?
    let file: BlobReadHandle?

    var readsWithoutWaiting: Bool { content != nil }
    var fileBody: BlobReadHandle? { file }

    func read(_ range: Range<Int64>) throws -> Data {
        if let file { return try file.read(range) }
        let content = content ?? Data()
        let upper = min(range.upperBound, metadata.size)
        let lower = min(range.lowerBound, upper)
        if lower == 0 && upper == metadata.size { return content }
        return content.subdata(in: Int(lower)..<Int(upper))
    }

    func close() { file?.close() }
}

/// A put into an S3 store fed piece by piece (``BackendUpload``: one owner at a time). The commit
/// blocks its caller until the gateway answers, and completes on that thread.
final class S3Upload: BackendUpload {
    private let store: S3BlobStore
    private let spool: S3ContentSpool
    private let identifier: String
    private let key: String
    private let options: PutOptions

    init(store: S3BlobStore, spool: S3ContentSpool, identifier: String, key: String, options: PutOptions) {
        self.store = store
        self.spool = spool
        self.identifier = identifier
        self.key = key
        self.options = options
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws {
        do {
            try spool.append(bytes)
        } catch {
            spool.close()
            throw error
        }
    }

    func commit(completion: @escaping @Sendable (Result<BlobMetadata, any Error>) -> Void) {
        // Waits for the gateway (a round trip at least) on the calling thread, and completes there:
        // blobd gives each put on S3 a blocking-work job of its own (its small puts share no lane),
        // on threads enough for every connection to the gateway. Handing the wait to yet another
        // thread cost two thread hand-offs per put.
        completion(Result { try store.commit(spool, identifier: identifier, key: key, options: options) })
    }

    func cancel() { spool.close() }
}
