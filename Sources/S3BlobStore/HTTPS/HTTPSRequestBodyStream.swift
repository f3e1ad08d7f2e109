import Foundation
internal import BlobSystem

#if canImport(Glibc)
import Glibc
#endif

/// A request body of known length handed to FoundationNetworking piece by piece: a file region
/// (read with `pread`, so the caller's descriptor offset stays where it was) or a
/// ``TransportBodySource``. Never more than one piece (libcurl's upload buffer) is in memory.
///
/// Read by FoundationNetworking's work queue only, one call at a time; ``failure`` is read by the
/// exchange after the task ended, hence the lock.
final class HTTPSRequestBodyStream: InputStream {
    private enum Origin {
        case file(FileDescriptor, offset: Int64)
        case source(any TransportBodySource)
    }

    private let origin: Origin
    private let length: Int64
    private var sent: Int64 = 0
    private var status: Stream.Status = .notOpen
    private let failureText = Locked<String?>(nil)

    /// A stream for `body`, or `nil` for a body already in memory (sent as `httpBody`).
    init?(_ body: TransportBody) {
        switch body {
        case .empty, .bytes: return nil
        case .fileRegion(let file, let offset, let length):
            origin = .file(file, offset: offset)
            self.length = length
        case .stream(let length, let source):
            origin = .source(source)
            self.length = length
        }
        super.init(data: Data())
    }

    /// Why the body could not be read to its declared length, if it could not.
    var failure: String? { failureText.withLock { $0 } }

    override func open() { status = .open }
    override func close() { status = .closed }
    override var streamStatus: Stream.Status { status }
    override var hasBytesAvailable: Bool { sent < length }
    override func getBuffer(_ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length len: UnsafeMutablePointer<Int>) -> Bool { false }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) -> Int {
        let wanted = Int(min(Int64(maxLength), length - sent))
        guard wanted > 0 else { return 0 }
        let count: Int
        switch origin {
        case .file(let file, let offset):
            var result: Int
            repeat { result = pread(file.rawValue, buffer, wanted, off_t(offset + sent)) } while result < 0 && errno == EINTR
            if result < 0 { return fail("\(Errno(rawValue: errno)) reading the file at offset \(offset + sent)") }
            if result == 0 { return fail("the file ended \(sent) bytes into a region of \(length) from offset \(offset)") }
            count = result
        case .source(let source):
            do { count = try source.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: wanted)) } catch {
                return fail("\(error)")
            }
            if count == 0 { return fail("the source ended after \(sent) of its \(length) bytes") }
        }
        sent += Int64(count)
        if sent == length { status = .atEnd }
        return count
    }

    /// Records why and returns -1, which makes libcurl abandon the upload rather than send a body
    /// shorter than its Content-Length.
    private func fail(_ reason: String) -> Int {
        failureText.withLock { $0 = $0 ?? reason }
        status = .error
        return -1
    }
}
