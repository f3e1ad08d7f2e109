import BlobProtocol
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The `Date` header line (RFC 9110 §6.6.1) of the current second, formatted again only when the
/// second changes: every response carries one, and a loop answers many per second.
///
/// Owned by one event loop (not shared: each loop has its own, so no lock).
struct DateHeaderLine {
    private static let name: StaticString = "Date: "
    /// `Date: <IMF-fixdate>` CR LF.
    private var bytes: [UInt8]
    private var second: Int = .min

    init() {
        bytes = [UInt8](repeating: 0, count: DateHeaderLine.name.utf8CodeUnitCount + HTTPDates.imfFixdateLength + 2)
        let prefix = UnsafeBufferPointer(start: DateHeaderLine.name.utf8Start, count: DateHeaderLine.name.utf8CodeUnitCount)
        bytes.replaceSubrange(0..<prefix.count, with: prefix)
        bytes[bytes.count - 2] = 0x0D
        bytes[bytes.count - 1] = 0x0A
    }

    /// The line for the current second (reformatted in place when the second has changed).
    mutating func current() -> [UInt8] {
        let now = time(nil)
        if now != second {
            second = now
            let start = DateHeaderLine.name.utf8CodeUnitCount
            bytes.withUnsafeMutableBufferPointer { buffer in
                HTTPDates.writeIMFFixdate(
                    Date(timeIntervalSince1970: TimeInterval(now)),
                    into: UnsafeMutableBufferPointer(rebasing: buffer[start..<(start + HTTPDates.imfFixdateLength)]))
            }
        }
        return bytes
    }
}
