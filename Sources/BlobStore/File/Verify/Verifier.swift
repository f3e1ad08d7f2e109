internal import BlobSystem
import Foundation

/// Verify: checks every entry of the store folder against the layout (STORAGE.md, "Integrity") and
/// every blob's content against its header, one part at a time (the store and `b/` folders, then
/// each bucket), so a part can be checked again and repaired on its own (``Repair``).
///
/// Owned by the store's engine; immutable. Its checks read the index, so they run on the store queue.
struct Verifier: Sendable {
    let paths: StorePaths
    let index: BucketIndex

    /// Reads every blob and checks it; one bucket per read item so commits are not held up for long.
    func verify(reads: ReadPath) async throws -> VerificationReport {
        var report = VerificationReport(healthy: 0, corrupt: [], orphaned: [])
        report.orphaned = try await reads.read { () throws -> [VerificationReport.Finding] in try self.strayEntries() }
        var position = 0
        while true {
            let bucket = position
            let part = try await reads.read { () throws -> VerificationReport? in
                guard bucket < self.index.map.buckets.count else { return nil }
                return try self.verifyBucket(at: bucket)
            }
            guard let part else { break }
            report.healthy += part.healthy
            report.corrupt += part.corrupt
            report.orphaned += part.orphaned
            position += 1
        }
        return report
    }

    /// The entries of the store folder and of `b/` that are not part of the layout: anything in the
    /// store folder but `.lock`, `manifest`, `policy`, `b`, `tmp`, `trash` and `quarantine`, and anything in
    /// `b/` but the folders of the manifest's buckets. On the queue.
    func strayEntries() throws -> [VerificationReport.Finding] {
        var found: [VerificationReport.Finding] = []
        let layout: [String: DirectoryEntry.Kind] = [".lock": .regular, "manifest": .regular, PolicyFile.fileName: .regular, "b": .directory, "tmp": .directory, "trash": .directory, "quarantine": .directory]
        let top = try io("list folder", paths.store) { try DirectoryStream.entries(of: paths.store) }
        for var entry in top.sorted(by: { $0.name < $1.name }) {
            entry.kind = Verifier.kind(of: paths.store + "/" + entry.name, listed: entry.kind)
            guard layout[entry.name] != entry.kind else { continue }
            let what = layout[entry.name] == nil ? "is not part of the store's layout" : "has the name of a store file but not its type"
            found.append(.init(path: paths.store + "/" + entry.name, identifier: nil, reason: "\(Verifier.kindName(entry.kind)) \(what)"))
        }
        let known = Set(index.map.buckets.map { String($0.number) })
        let buckets = try io("list folder", paths.buckets) { try DirectoryStream.entries(of: paths.buckets) }
        for var entry in buckets.sorted(by: { $0.name < $1.name }) {
            entry.kind = Verifier.kind(of: paths.buckets + "/" + entry.name, listed: entry.kind)
            guard entry.kind != .directory || !known.contains(entry.name) else { continue }
            let reason = entry.kind == .directory ? "folder is not a bucket in the manifest" : "\(Verifier.kindName(entry.kind)) in b/, where only bucket folders belong"
            found.append(.init(path: paths.buckets + "/" + entry.name, identifier: nil, reason: reason))
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

    /// Checks the bucket at `position` of the map. On the queue.
    func verifyBucket(at position: Int) throws -> VerificationReport {
        var report = VerificationReport(healthy: 0, corrupt: [], orphaned: [])
        let map = index.map
        let folder = paths.bucket(map.buckets[position].number)
        let names = try io("list folder", folder) { try DirectoryStream.entries(of: folder) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        for entry in names {
            let path = folder + "/" + entry.name
            if case .foreign = FileNameCoding.decode(entry.name) {
                report.orphaned.append(.init(path: path, identifier: nil, reason: "not a blob file name"))
                continue
            }
            if Verifier.kind(of: path, listed: entry.kind) != .regular {
                report.orphaned.append(.init(path: path, identifier: nil, reason: "\(Verifier.kindName(entry.kind)), not a blob file"))
                continue
            }
            let existing: ExistingBlob
            do { existing = try BlobReader.existing(at: path, anyName: true) } catch {
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
            if !map.contains(Array(header.identifier.utf8), inBucketAt: position) {
                report.orphaned.append(.init(path: path, identifier: header.identifier, reason: "blob is in the wrong bucket"))
                continue
            }
            if let problem = Verifier.checkContent(path: path, header: header, buffer: buffer) {
                report.corrupt.append(.init(path: path, identifier: header.identifier, reason: problem))
            } else {
                report.healthy += 1
            }
        }
        return report
    }

    /// Hashes the content and compares size and checksum with the header; the problem, or `nil`.
    private static func checkContent(path: String, header: BlobHeader, buffer: UnsafeMutableRawBufferPointer) -> String? {
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
