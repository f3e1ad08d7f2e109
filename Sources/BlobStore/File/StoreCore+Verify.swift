internal import BlobSystem
import Foundation

/// What ``PersistentDataStore/verify()`` found.
public struct VerificationReport: Hashable, Sendable, Codable {
    /// One problem, with the file it concerns.
    public struct Finding: Hashable, Sendable, Codable {
        /// The file.
        public var path: String
        /// The blob's identifier, when the file says.
        public var identifier: String?
        /// What is wrong.
        public var reason: String
    }

    /// Blobs whose content matched their checksum.
    public var healthy: Int
    /// Blob files whose header or content is damaged.
    public var corrupt: [Finding]
    /// Files and folders that are not blobs of this store, or sit in the wrong bucket.
    public var orphaned: [Finding]
    /// With a repair (``PersistentDataStore/verify(repair:)``), where each corrupt and orphaned
    /// entry was moved; `nil` for a plain check.
    public var quarantined: [QuarantinedEntry]?

    /// Whether nothing is wrong.
    public var isClean: Bool { corrupt.isEmpty && orphaned.isEmpty }

    /// A report of a check, without a repair.
    public init(healthy: Int, corrupt: [Finding], orphaned: [Finding], quarantined: [QuarantinedEntry]? = nil) {
        self.healthy = healthy
        self.corrupt = corrupt
        self.orphaned = orphaned
        self.quarantined = quarantined
    }
}

/// An entry that a repair moved out of the store's layout into its `quarantine/` folder.
public struct QuarantinedEntry: Hashable, Sendable, Codable {
    /// Where it was.
    public var from: String
    /// Where it is now.
    public var to: String

    /// An entry moved from `from` to `to`.
    public init(from: String, to: String) {
        self.from = from
        self.to = to
    }
}

extension StoreCore {
    /// Reads every blob and checks it; one bucket per read item so commits are not held up for long.
    func verify() async throws -> VerificationReport {
        var report = VerificationReport(healthy: 0, corrupt: [], orphaned: [])
        report.orphaned = try await read { () throws -> [VerificationReport.Finding] in try self.strayEntries() }
        var index = 0
        while true {
            let position = index
            let part = try await read { () throws -> VerificationReport? in
                let buckets = self.confined.map.buckets
                guard position < buckets.count else { return nil }
                return try self.verifyBucket(at: position)
            }
            guard let part else { break }
            report.healthy += part.healthy
            report.corrupt += part.corrupt
            report.orphaned += part.orphaned
            index += 1
        }
        return report
    }

    /// The entries of the store folder and of `b/` that are not part of the layout (STORAGE.md):
    /// anything in the store folder but `.lock`, `manifest`, `b`, `tmp`, `trash` and `quarantine`, and anything in
    /// `b/` but the folders of the manifest's buckets. Call on `queue`.
    func strayEntries() throws -> [VerificationReport.Finding] {
        var found: [VerificationReport.Finding] = []
        let layout: [String: DirectoryEntry.Kind] = [".lock": .regular, "manifest": .regular, "b": .directory, "tmp": .directory, "trash": .directory, "quarantine": .directory]
        let top = try io("list folder", storePath) { try DirectoryStream.entries(of: storePath) }
        for var entry in top.sorted(by: { $0.name < $1.name }) {
            entry.kind = StoreCore.kind(of: storePath + "/" + entry.name, listed: entry.kind)
            guard layout[entry.name] != entry.kind else { continue }
            let what = layout[entry.name] == nil ? "is not part of the store's layout" : "has the name of a store file but not its type"
            found.append(.init(path: storePath + "/" + entry.name, identifier: nil, reason: "\(StoreCore.kindName(entry.kind)) \(what)"))
        }
        let known = Set(confined.map.buckets.map { String($0.number) })
        let buckets = try io("list folder", bucketsPath) { try DirectoryStream.entries(of: bucketsPath) }
        for var entry in buckets.sorted(by: { $0.name < $1.name }) {
            entry.kind = StoreCore.kind(of: bucketsPath + "/" + entry.name, listed: entry.kind)
            guard entry.kind != .directory || !known.contains(entry.name) else { continue }
            let reason = entry.kind == .directory ? "folder is not a bucket in the manifest" : "\(StoreCore.kindName(entry.kind)) in b/, where only bucket folders belong"
            found.append(.init(path: bucketsPath + "/" + entry.name, identifier: nil, reason: reason))
        }
        return found
    }

    /// The kind of the entry at `path` that a listing gave as `kind`: filesystems that do not give
    /// kinds in listings (`DT_UNKNOWN`, reported as `other`) are asked with `lstat`.
    private static func kind(of path: String, listed kind: DirectoryEntry.Kind) -> DirectoryEntry.Kind {
        guard kind == .other, let status = try? FileSystem.linkStatus(path) else { return kind }
        switch status.kind {
        case .regular: return .regular
        case .directory: return .directory
        default: return .other
        }
    }

    private static func kindName(_ kind: DirectoryEntry.Kind) -> String {
        switch kind {
        case .regular: return "file"
        case .directory: return "folder"
        case .other: return "special file"
        }
    }

    /// Checks the bucket at `index` of the map. Call on `queue`.
    func verifyBucket(at index: Int) throws -> VerificationReport {
        var report = VerificationReport(healthy: 0, corrupt: [], orphaned: [])
        let folder = bucketPath(confined.map.buckets[index].number)
        let names = try io("list folder", folder) { try DirectoryStream.entries(of: folder) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        for entry in names {
            let path = folder + "/" + entry.name
            if case .foreign = FileNameCoding.decode(entry.name) {
                report.orphaned.append(.init(path: path, identifier: nil, reason: "not a blob file name"))
                continue
            }
            if StoreCore.kind(of: path, listed: entry.kind) != .regular {
                report.orphaned.append(.init(path: path, identifier: nil, reason: "\(StoreCore.kindName(entry.kind)), not a blob file"))
                continue
            }
            let existing: ExistingBlob
            do { existing = try existingBlob(at: path, anyName: true) } catch {
                report.corrupt.append(.init(path: path, identifier: nil, reason: "unreadable: \(error)"))
                continue
            }
            guard case .present(let header) = existing else {
                report.corrupt.append(.init(path: path, identifier: nil, reason: "header missing or damaged"))
                continue
            }
            if FileNameCoding.name(for: header.identifier) != entry.name {
                report.orphaned.append(.init(path: path, identifier: header.identifier, reason: "file name does not match the identifier in its header"))
                continue
            }
            if !confined.map.contains(Array(header.identifier.utf8), inBucketAt: index) {
                report.orphaned.append(.init(path: path, identifier: header.identifier, reason: "blob is in the wrong bucket"))
                continue
            }
            if let problem = checkContent(path: path, header: header, buffer: buffer) {
                report.corrupt.append(.init(path: path, identifier: header.identifier, reason: problem))
            } else {
                report.healthy += 1
            }
        }
        return report
    }

    /// Hashes the content and compares size and checksum with the header; the problem, or `nil`.
    private func checkContent(path: String, header: BlobHeader, buffer: UnsafeMutableRawBufferPointer) -> String? {
        do {
            let fd = try FileDescriptor.open(path, [.readOnly, .noFollow])
            return try fd.closeAfter { () throws -> String? in
                let fileSize = try fd.status().size
                let expected = Int64(header.encodedLength) + header.size
                if fileSize != expected { return "file is \(fileSize) bytes; header says \(expected)" }
                var hasher = XXH64()
                var offset = Int64(header.encodedLength)
                while offset < fileSize {
                    let count = try fd.read(fromAbsoluteOffset: offset, into: buffer)
                    if count == 0 { break }
                    hasher.update(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                    offset += Int64(count)
                }
                let sum = hasher.finalize()
                return sum == header.checksum ? nil : "content checksum \(ETag(checksum: sum)) does not match ETag \(ETag(checksum: header.checksum))"
            }
        } catch {
            return "unreadable: \(error)"
        }
    }
}
