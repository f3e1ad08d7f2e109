internal import BlobSystem
import Foundation

/// Checks one opened blob version against its header while its content is read, from the first byte
/// on: the file must hold exactly the content size the header gives after the header, and the
/// content's XXH64 must equal the header's checksum (the ETag). Reads that answer at once check
/// before answering; reads that send as they go (streams, `sendfile`) check each part before it
/// leaves and withhold the part holding the last byte until the whole content has passed.
///
/// Not thread-safe: one reader owns it and feeds it in order.
struct ContentCheck: Sendable {
    /// The store, blob and file named in errors.
    let store: String
    let identifier: String
    let path: String
    /// Content size and checksum from the header.
    let size: Int64
    let checksum: UInt64
    /// Where the content starts in the file.
    let headerLength: Int64
    private var hasher = XXH64()
    /// Content bytes hashed so far (the next one to hash).
    private(set) var checked: Int64 = 0
    /// Whether the whole content has been hashed and found right.
    private(set) var passed = false

    /// How much ``advance(to:descriptor:)`` reads at once: a buffer that stays in the CPU cache
    /// between the read and the hash, and comes from the allocator's free lists, not from `mmap`.
    static let scratchSize = 64 * 1024

    init(store: String, identifier: String, path: String, header: BlobHeader) {
        self.store = store
        self.identifier = identifier
        self.path = path
        size = header.size
        checksum = header.checksum
        headerLength = Int64(header.encodedLength)
    }

    init(_ blob: OpenedBlob) {
        self.init(store: blob.store, identifier: blob.header.identifier, path: blob.path, header: blob.header)
    }

    /// A check of a file that holds the content alone (no header), such as a copy fetched from an object store.
    init(store: String, identifier: String, path: String, size: Int64, checksum: UInt64) {
        self.store = store
        self.identifier = identifier
        self.path = path
        self.size = size
        self.checksum = checksum
        headerLength = 0
    }

    /// Records that the whole content is known to match without hashing it here: its writer hashed
    /// every byte on the way into the file, just before.
    mutating func trustWriter() {
        checked = size
        passed = true
    }

    /// Forgets what was hashed, to check again from the first byte.
    mutating func restart() {
        hasher = XXH64()
        checked = 0
    }

    /// Hashes the next content bytes (they must follow the ones fed before).
    mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        hasher.update(bytes)
        checked += Int64(bytes.count)
    }

    /// Hashes the next content bytes (they must follow the ones fed before).
    mutating func feed(_ data: Data) {
        data.withUnsafeBytes { feed($0) }
    }

    /// Reads and hashes content from ``checked`` up to `end` (clamped to the size); at the size,
    /// also ``finish(descriptor:)``. Throws `corrupt` if the file ends early or the check fails.
    mutating func advance(to end: Int64, descriptor: FileDescriptor) throws {
        _ = try advance(to: end, descriptor: descriptor, mayWait: true)
    }

    /// ``advance(to:descriptor:)`` with reads that never wait for the disk: `false` as soon as one
    /// would (or the file system refuses cache-only reads), keeping what was hashed so far, so that a
    /// later ``advance(to:descriptor:)`` goes on from there. Throws what ``advance(to:descriptor:)`` throws.
    mutating func advanceIfCached(to end: Int64, descriptor: FileDescriptor) throws -> Bool {
        try advance(to: end, descriptor: descriptor, mayWait: false)
    }

    /// Both of the above: `false` only when `mayWait` is false and a read would have waited.
    private mutating func advance(to end: Int64, descriptor: FileDescriptor, mayWait: Bool) throws -> Bool {
        let end = min(end, size)
        if checked < end {
            let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: ContentCheck.scratchSize, alignment: 16)
            defer { scratch.deallocate() }
            while checked < end {
                let want = Int(min(Int64(scratch.count), end - checked))
                let target = UnsafeMutableRawBufferPointer(rebasing: scratch[..<want])
                let offset = headerLength + checked
                let count: Int
                if mayWait {
                    count = try io("read", path) { try descriptor.readFully(fromAbsoluteOffset: offset, into: target) }
                    guard count == want else { throw endsEarly(at: checked + Int64(count)) }
                } else {
                    // A cached read may return less than asked (the rest not cached): the loop reads on.
                    guard let cached = try? descriptor.readIfCached(fromAbsoluteOffset: offset, into: target) else { return false }
                    if cached == 0 { throw endsEarly(at: checked) }
                    count = cached
                }
                feed(UnsafeRawBufferPointer(rebasing: scratch[..<count]))
            }
        }
        guard checked == size, !passed else { return true }
        if mayWait {
            try finish(descriptor: descriptor)
        } else {
            var probe: UInt8 = 0
            guard let beyond = try? withUnsafeMutableBytes(of: &probe, { try descriptor.readIfCached(fromAbsoluteOffset: headerLength + size, into: $0) })
            else { return false }
            if beyond > 0 { throw longer() }
            try finish(fileEnd: headerLength + size)
        }
        return true
    }

    /// Once all content has been fed: checks that the file ends there and that the checksum matches.
    mutating func finish(descriptor: FileDescriptor) throws {
        var probe: UInt8 = 0
        let beyond = try io("read", path) {
            try withUnsafeMutableBytes(of: &probe) { try descriptor.read(fromAbsoluteOffset: headerLength + size, into: $0) }
        }
        if beyond > 0 { throw longer() }
        try finish(fileEnd: headerLength + size)
    }

    /// Once all content has been fed: checks the file length already known (`fileEnd`) and the checksum.
    mutating func finish(fileEnd: Int64) throws {
        precondition(checked == size, "content check finished before all content was fed")
        if fileEnd > headerLength + size { throw longer() }
        if fileEnd < headerLength + size { throw endsEarly(at: fileEnd - headerLength) }
        let sum = hasher.finalize()
        guard sum == checksum else {
            throw corrupt("content checksum \(ETag(checksum: sum)) does not match its ETag \(ETag(checksum: checksum))")
        }
        passed = true
    }

    /// Reads content bytes `range` (already clamped) of a blob whose first content bytes are
    /// `leading` and whose file ends at `fileEnd` (when known), hashing the whole content on the way
    /// (the bytes outside `range` too); throws `corrupt` unless it passes. Once passed, later reads
    /// read just their range.
    mutating func read(_ range: Range<Int64>, leading: Data, fileEnd: Int64?, descriptor: FileDescriptor) throws -> Data {
        let leadingCount = Int64(leading.count)
        if passed { return try readPlain(range, leading: leading, descriptor: descriptor) }
        if checked > 0 { restart() }  // an earlier read failed part way: check again from the start
        // (A known end is never inside the content: a short file is found by reading on.)
        if let fileEnd, fileEnd > headerLength + size { throw longer() }
        feed(leading)
        if leadingCount == size {
            if let fileEnd { try finish(fileEnd: fileEnd) } else { try finish(descriptor: descriptor) }
            if range.count == leading.count { return leading }
            return leading.subdata(in: Int(range.lowerBound)..<Int(range.upperBound))
        }
        var data = Data(count: Int(range.count))
        try data.withUnsafeMutableBytes { (out: UnsafeMutableRawBufferPointer) throws in
            if range.lowerBound < leadingCount {
                let upper = min(range.upperBound, leadingCount)
                leading.withUnsafeBytes { source in
                    out.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[Int(range.lowerBound)..<Int(upper)]))
                }
            }
            let fileStart = max(range.lowerBound, leadingCount)
            guard fileStart < range.upperBound else { return }
            try advance(to: fileStart, descriptor: descriptor)  // the content between `leading` and the range
            let target = UnsafeMutableRawBufferPointer(rebasing: out[Int(fileStart - range.lowerBound)...])
            let offset = headerLength + fileStart
            let count = try io("read", path) { try descriptor.readFully(fromAbsoluteOffset: offset, into: target) }
            guard count == target.count else { throw endsEarly(at: fileStart + Int64(count)) }
            feed(UnsafeRawBufferPointer(target))
        }
        try advance(to: size, descriptor: descriptor)  // the rest, and the end of the file
        return data
    }

    /// Reads content bytes `range` of an already checked blob.
    private func readPlain(_ range: Range<Int64>, leading: Data, descriptor: FileDescriptor) throws -> Data {
        if range.upperBound <= Int64(leading.count) { return leading.subdata(in: Int(range.lowerBound)..<Int(range.upperBound)) }
        var data = Data(count: Int(range.count))
        let offset = headerLength + range.lowerBound
        let count = try io("read", path) { try data.withUnsafeMutableBytes { try descriptor.readFully(fromAbsoluteOffset: offset, into: $0) } }
        guard count == data.count else { throw endsEarly(at: range.lowerBound + Int64(count)) }
        return data
    }

    /// The error for a file whose content ends after `count` bytes, short of the size in its header.
    func endsEarly(at count: Int64) -> BlobStoreError {
        corrupt("file ends after \(max(0, count)) of the \(size) content bytes its header gives")
    }

    /// The error for a file longer than its header says.
    func longer() -> BlobStoreError {
        corrupt("file is longer than its header says (\(headerLength) header + \(size) content bytes)")
    }

    private func corrupt(_ reason: String) -> BlobStoreError {
        .corrupt(path: path, reason: "blob '\(BlobStoreError.abbreviated(identifier))' in store '\(store)': \(reason)")
    }
}
