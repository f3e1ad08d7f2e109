internal import BlobSystem
import Synchronization

/// Where a store keeps each part of its layout (STORAGE.md, "On-disk layout"). Immutable.
struct StorePaths: Sendable {
    /// The store's folder.
    let store: String
    /// `b/`: the bucket folders.
    let buckets: String
    /// `tmp/`: the temp files of puts in progress.
    let temp: String
    /// `trash/`: remove-all's old bucket trees, waiting to be freed.
    let trash: String
    /// The bucket map's file.
    let manifest: String

    init(root: String, name: String) {
        store = root + "/" + name
        buckets = store + "/b"
        temp = store + "/tmp"
        trash = store + "/trash"
        manifest = store + "/manifest"
    }

    /// The lock file the writing process holds.
    var lock: String { store + "/.lock" }

    /// `quarantine/`, where a repair moves what it found wrong.
    var quarantine: String { store + "/quarantine" }

    /// The folder of bucket `number`.
    func bucket(_ number: Int) -> String { buckets + "/\(number)" }

    /// The file path of `identifier` in bucket folder `bucket`.
    ///
    /// Written straight into the String's storage: every read builds one, and a chain of `String`
    /// appends costs a visible share of a server's GET.
    func file(of identifier: String, inBucket bucket: Int) -> String {
        var fileName = FileNameCoding.name(for: identifier)
        var base = buckets
        return base.withUTF8 { base in
            fileName.withUTF8 { name in
                String(unsafeUninitializedCapacity: base.count + name.count + 22) { out in
                    var position = 0
                    func copy(_ bytes: UnsafeBufferPointer<UInt8>) {
                        guard !bytes.isEmpty else { return }
                        (out.baseAddress! + position).initialize(from: bytes.baseAddress!, count: bytes.count)
                        position += bytes.count
                    }
                    copy(base)
                    out[position] = UInt8(ascii: "/")
                    position += 1
                    position += DecimalDigits.write(bucket, to: out.baseAddress! + position)
                    out[position] = UInt8(ascii: "/")
                    position += 1
                    copy(name)
                    return position
                }
            }
        }
    }

    /// The folder that holds `path` (`/` for a top-level one).
    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    /// A fresh unique name for a temp or trash file.
    static func uniqueName(_ prefix: String) -> String {
        // A random tag drawn once per process plus a counter: unique without a `getrandom` call per
        // put. Files are created with O_EXCL, so even a clash would fail rather than overwrite.
        let number = uniqueNameCounter.wrappingAdd(1, ordering: .relaxed).newValue
        return prefix + uniqueNameTag + String(number, radix: 36)
    }
}

/// This process's part of temp-file names (see ``StorePaths/uniqueName(_:)``).
private let uniqueNameTag: String = {
    var generator = SystemRandomNumberGenerator()
    return String(generator.next() as UInt64, radix: 36) + "-"
}()

/// Temp-file names made so far by this process.
private let uniqueNameCounter = Atomic<UInt64>(0)

/// Maps an `Errno` from a system call to ``BlobStoreError/io(operation:path:errno:)``, naming the operation and path.
@inline(__always)
func io<T>(_ operation: String, _ path: @autoclosure () -> String, _ body: () throws -> T) throws -> T {
    do { return try body() } catch let error as Errno { throw BlobStoreError.io(operation: operation, path: path(), errno: error) }
}
