import BlobSystem
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct FileDescriptorTests {
    let folder: String

    init() throws {
        folder = NSTemporaryDirectory() + "blobsystem-" + UUID().uuidString
        try FileSystem.makeDirectories(folder)
    }

    @Test func writeThenReadBackAtOffsets() throws {
        let path = folder + "/f"
        let fd = try FileDescriptor.open(path, [.readWrite, .create, .exclusive])
        defer { try? fd.close() }
        let bytes: [UInt8] = Array(0...255)
        try bytes.withUnsafeBytes { try fd.writeAll($0) }
        try [UInt8](repeating: 7, count: 4).withUnsafeBytes { try fd.writeAll(toAbsoluteOffset: 10, $0) }
        var buffer = [UInt8](repeating: 0, count: 300)
        let count = try buffer.withUnsafeMutableBytes { try fd.readFully(fromAbsoluteOffset: 8, into: $0) }
        #expect(count == 248)
        #expect(Array(buffer[0..<8]) == [8, 9, 7, 7, 7, 7, 14, 15])
        #expect(try fd.status().size == 256)
        #expect(try fd.status().kind == .regular)
        try fd.sync()
        try fd.dataSync()
    }

    @Test func openFailureCarriesErrno() {
        #expect(throws: Errno.noSuchFileOrDirectory) {
            try FileDescriptor.open(folder + "/missing", [.readOnly])
        }
        #expect(Errno.noSuchFileOrDirectory.description.hasPrefix("ENOENT"))
    }

    @Test func exclusiveCreateRefusesExistingFile() throws {
        let path = folder + "/x"
        try FileDescriptor.open(path, [.writeOnly, .create, .exclusive]).close()
        #expect(throws: Errno.fileExists) { try FileDescriptor.open(path, [.writeOnly, .create, .exclusive]) }
    }

    @Test func directoryListingSkipsDotEntries() throws {
        try FileSystem.makeDirectory(folder + "/d")
        for name in ["one", "two", "three"] { try FileDescriptor.open(folder + "/d/" + name, [.writeOnly, .create]).close() }
        try FileSystem.makeDirectory(folder + "/d/sub")
        let entries = try DirectoryStream.entries(of: folder + "/d")
        #expect(Set(entries.map(\.name)) == ["one", "two", "three", "sub"])
        #expect(entries.first { $0.name == "sub" }?.kind == .directory)
        try FileSystem.removeTree(folder + "/d")
        #expect(try FileSystem.statusIfExists(folder + "/d") == nil)
    }

    @Test func flockConflictsBetweenOpenFileDescriptions() throws {
        let path = folder + "/lock"
        let first = try FileDescriptor.open(path, [.readWrite, .create])
        let second = try FileDescriptor.open(path, [.readWrite])
        defer { try? second.close() }
        #expect(try first.lock())
        #expect(try second.lock() == false)
        try first.close()
        #expect(try second.lock())
    }

    @Test func syncDirectoryAndFileSystem() throws {
        try FileSystem.syncDirectory(folder)
        let fd = try FileDescriptor.open(folder, [.readOnly, .directory])
        defer { try? fd.close() }
        try fd.syncFileSystem()
        #expect(throws: Errno.self) { try FileSystem.syncDirectory(folder + "/nope") }
    }

    /// `openIfCached` and `readIfCached` return what the kernel's caches hold and refuse, rather
    /// than wait, when the page cache lacks the bytes.
    @Test func cacheOnlyCallsServeCachedBytesAndRefuseTheRest() throws {
        let path = folder + "/cached"
        let bytes = (0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let writer = try FileDescriptor.open(path, [.writeOnly, .create, .exclusive])
        try bytes.withUnsafeBytes { try writer.writeAll($0) }
        try writer.sync()  // clean pages, which the kernel may drop on request
        try writer.close()

        let opened = Result { () throws(Errno) in try FileDescriptor.openIfCached(path, [.readOnly]) }
        if case .failure(let error) = opened, error.rawValue == ENOSYS || error.rawValue == EINVAL {
            print("skipped: this kernel has no openat2 with RESOLVE_CACHED (\(error))")
            return
        }
        let fd = try opened.get()
        defer { try? fd.close() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 10_000, alignment: 16)
        defer { buffer.deallocate() }
        let count = try fd.readIfCached(fromAbsoluteOffset: 0, into: buffer)
        #expect(count == bytes.count)
        #expect(Array(buffer[..<count]) == bytes)

        // Drop the file's pages: a cache-only read must now refuse instead of going to the disk.
        let refusal = FileDescriptorTests.refusalAfterDroppingPages(fd, buffer)
        #expect(refusal == .wouldBlock, "the kernel kept the pages through 50 POSIX_FADV_DONTNEED calls over 1 s")
        // An ordinary read still gets them from the disk, and a missing file is never opened.
        #expect(try fd.readFully(fromAbsoluteOffset: 0, into: buffer) == bytes.count)
        #expect(throws: Errno.self) { try FileDescriptor.openIfCached(folder + "/missing", [.readOnly]) }
    }

    /// Asks the kernel to drop `fd`'s pages until a cache-only read refuses; returns that refusal.
    ///
    /// Spread over a second: the kernel skips a page it cannot drop at that instant (one still held by a
    /// per-CPU batch after the read that marked it accessed, say), and under the sanitizer runs' load
    /// twenty back-to-back attempts all found the page held.
    static func refusalAfterDroppingPages(_ fd: FileDescriptor, _ buffer: UnsafeMutableRawBufferPointer) -> Errno? {
        for attempt in 0..<50 {
            if attempt > 0 { usleep(20_000) }
            _ = posix_fadvise(fd.rawValue, 0, 0, Int32(POSIX_FADV_DONTNEED))
            let result = Result { () throws(Errno) in try fd.readIfCached(fromAbsoluteOffset: 0, into: buffer) }
            if case .failure(let error) = result { return error }
        }
        return nil
    }
}
