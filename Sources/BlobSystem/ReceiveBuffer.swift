#if canImport(Glibc)
import Glibc
#endif

/// Bytes received on a connection and not consumed yet, in memory the buffer owns: those before
/// the read index are consumed, those from the write index on are free.
///
/// Raw memory and `memcpy` rather than an array, because generic array operations run byte by byte
/// in unoptimized (debug) builds, and `swift run blob` is one. Owned by whoever owns the connection
/// holding it (one thread at a time).
package struct ReceiveBuffer: ~Copyable {
    private var storage: UnsafeMutableRawPointer
    private var capacity: Int
    private var readIndex = 0
    private var writeIndex = 0
    /// A fill asks the kernel for at least this much room.
    private let minimumRead: Int

    /// An empty buffer of `initialCapacity` bytes, which grows only while it is full of
    /// unconsumed bytes (a response head that does not fit).
    package init(initialCapacity: Int, minimumRead: Int) {
        precondition(initialCapacity >= minimumRead && minimumRead > 0)
        capacity = initialCapacity
        self.minimumRead = minimumRead
        storage = UnsafeMutableRawPointer.allocate(byteCount: initialCapacity, alignment: 16)
    }

    deinit {
        storage.deallocate()
    }

    /// Unconsumed received bytes.
    package var available: Int { writeIndex - readIndex }

    /// Receives more bytes: `receive` is given the free room (at least `minimumRead` bytes, after
    /// moving or growing the unconsumed ones) and returns how many bytes it put there, which this
    /// returns too.
    package mutating func fill<E: Error>(_ receive: (UnsafeMutableRawBufferPointer) throws(E) -> Int) throws(E) -> Int {
        if readIndex == writeIndex {
            readIndex = 0
            writeIndex = 0
        } else if readIndex > 0 && capacity - writeIndex < minimumRead {
            memmove(storage, storage + readIndex, writeIndex - readIndex)
            writeIndex -= readIndex
            readIndex = 0
        }
        if capacity - writeIndex < minimumRead {
            let grown = max(capacity * 2, writeIndex + minimumRead)
            let larger = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 16)
            larger.copyMemory(from: storage, byteCount: writeIndex)
            storage.deallocate()
            storage = larger
            capacity = grown
        }
        let count = try receive(UnsafeMutableRawBufferPointer(start: storage + writeIndex, count: capacity - writeIndex))
        precondition(count >= 0 && count <= capacity - writeIndex, "received more than the free room")
        writeIndex += count
        return count
    }

    /// Marks `count` buffered bytes consumed.
    package mutating func consume(_ count: Int) {
        precondition(count >= 0 && readIndex + count <= writeIndex, "consumed more than was received")
        readIndex += count
    }

    /// Runs `body` on the unconsumed bytes.
    package func withUnconsumedBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: storage + readIndex, count: writeIndex - readIndex))
    }

    /// Copies up to `destination.count` unconsumed bytes into `destination` and consumes them;
    /// returns how many.
    package mutating func take(into destination: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(destination.count, available)
        if count > 0 { destination.baseAddress!.copyMemory(from: storage + readIndex, byteCount: count) }
        readIndex += count
        return count
    }
}
