/// Reads `buffer.count` bytes of the content starting at `offset`; callers only ask for ranges inside the
/// content. For the formats whose structure points backwards or forwards (a TIFF directory after the
/// pixels, a HEIF `meta` box after `mdat`), read once the whole blob is stored.
package typealias ImageContentReader = (_ offset: Int, _ buffer: UnsafeMutableRawBufferPointer) throws -> Void

/// One format's incremental whole-file check.
///
/// Fed every byte of the blob in order, in chunks of any size, then told where the blob ends. A check
/// keeps only a bounded amount of state (a few fields and counters, never the content), and decides only
/// from the bytes: each field it looks at is collected whole before it is judged, so how the bytes were
/// split across calls cannot change the verdict or the reason.
protocol ImageStreamCheck: AnyObject {
    /// The format, once the bytes so far name it (HEIF's brand comes after its signature).
    var format: ImageFormat? { get }
    /// Takes the next bytes; throws at the first one that rules the image out.
    func consume(_ input: UnsafeRawBufferPointer) throws(ImageParseFailure)
    /// The blob ended after `size` bytes: its format and size, or an `ImageParseFailure`; other errors come from `read`.
    func finish(size: Int, read: ImageContentReader) throws -> ImageInfo
}

/// Collects a field of known length across chunk boundaries.
struct FieldBuffer {
    private(set) var bytes: [UInt8] = []
    private(set) var wanted = 0

    /// Starts collecting `count` new bytes.
    mutating func expect(_ count: Int) {
        bytes.removeAll(keepingCapacity: true)
        wanted = count
    }

    /// Collects `count` more bytes after the ones already held.
    mutating func expectMore(_ count: Int) {
        wanted = bytes.count + count
    }

    var isEmpty: Bool { bytes.isEmpty }
    var isComplete: Bool { bytes.count == wanted }

    /// Copies what is still missing from `input` at `index` (advancing it); true once the field is whole.
    mutating func fill(_ input: UnsafeRawBufferPointer, _ index: inout Int) -> Bool {
        let take = min(wanted - bytes.count, input.count - index)
        if take > 0 {
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[index..<index + take]))
            index += take
        }
        return bytes.count == wanted
    }

    subscript(_ offset: Int) -> UInt8 { bytes[offset] }

    func be16(_ offset: Int) -> UInt16 { UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1]) }
    func le16(_ offset: Int) -> UInt16 { UInt16(bytes[offset + 1]) << 8 | UInt16(bytes[offset]) }
    func be32(_ offset: Int) -> UInt32 { UInt32(be16(offset)) << 16 | UInt32(be16(offset + 2)) }
    func le24(_ offset: Int) -> UInt32 { UInt32(bytes[offset + 2]) << 16 | UInt32(le16(offset)) }
    func le32(_ offset: Int) -> UInt32 { UInt32(le16(offset + 2)) << 16 | UInt32(le16(offset)) }
    func be64(_ offset: Int) -> UInt64 { UInt64(be32(offset)) << 32 | UInt64(be32(offset + 4)) }
}

/// A byte as two lower-case hex digits, for reasons that show what was found.
func hexByte(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16)
    return digits.count == 1 ? "0" + digits : digits
}
