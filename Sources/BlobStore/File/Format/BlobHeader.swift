import Foundation

/// The header at the start of every blob file: the blob's metadata, written in the same file
/// as its content so that one rename commits both (a crash never separates them).
///
/// Layout (little-endian), version 1:
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 4 | magic `BLB1` |
/// | 4 | 4 | header length in bytes (content starts here) |
/// | 8 | 8 | content size |
/// | 16 | 8 | XXH64 of the content (the ETag) |
/// | 24 | 8 | created, ns since 1970 |
/// | 32 | 8 | modified, ns since 1970 |
/// | 40 | 1 | image format code (0 = none) |
/// | 41 | 1 | flags: bit 0 = an expiry follows the user metadata; other bits zero |
/// | 42 | 2 | reserved, zero |
/// | 44 | 4 | image width |
/// | 48 | 4 | image height |
/// | 52 | 2 | identifier length |
/// | 54 | 2 | content-type length |
/// | 56 | 2 | user metadata pair count |
/// | 58 | 2 | reserved, zero |
/// | 60 | … | identifier, content type, then per pair: u16 key length, key, u16 value length, value |
/// | … | 8 | with flag bit 0 only: expiry, ns since 1970 |
/// | end − 8 | 8 | XXH64 of all header bytes before it |
///
/// The expiry came later (cache mode): byte 41 was reserved and always written zero, so every older
/// file decodes as a blob that never expires, and a new file without an expiry is byte for byte what
/// an older build wrote. An older build reads a file with an expiry as damaged (its decoder allows
/// no bytes after the metadata).
struct BlobHeader: Hashable, Sendable {
    static let magic: [UInt8] = Array("BLB1".utf8)
    static let fixedLength = 60
    /// No header can be longer: identifier, content type and metadata are all bounded.
    static let maximumLength = fixedLength + BlobIdentifier.maximumByteCount + UserMetadataRules.maximumContentTypeLength
        + UserMetadataRules.maximumCount * 4 + UserMetadataRules.maximumTotalByteCount + 8 + 8
    /// Flag bit of byte 41: an expiry is recorded.
    static let expiryFlag: UInt8 = 1

    var identifier: String
    var size: Int64
    var checksum: UInt64
    var createdNanoseconds: Int64
    var modifiedNanoseconds: Int64
    var contentType: String
    var userMetadata: [String: String]
    var image: ImageInfo?
    /// When this version expires, ns since 1970; `nil` when never (``BlobExpiry``).
    var expiresNanoseconds: Int64? = nil

    /// Whether this version has expired at `now` (ns since 1970): one comparison for a blob with no expiry.
    @inline(__always)
    func isExpired(atNanoseconds now: @autoclosure () -> Int64) -> Bool {
        guard let expires = expiresNanoseconds else { return false }
        return expires <= now()
    }

    /// Stable on-disk codes; never renumber.
    private static let imageCodes: [ImageFormat: UInt8] = [
        .png: 1, .jpeg: 2, .gif: 3, .webp: 4, .bmp: 5, .tiff: 6, .heic: 7, .avif: 8,
    ]

    var encodedLength: Int {
        var length = BlobHeader.fixedLength + identifier.utf8.count + contentType.utf8.count + 8
        if expiresNanoseconds != nil { length += 8 }
        for (key, value) in userMetadata { length += 4 + key.utf8.count + value.utf8.count }
        return length
    }

    var metadata: BlobMetadata {
        BlobMetadata(
            identifier: identifier, size: size, contentType: contentType, etag: ETag(checksum: checksum),
            created: Date(nanosecondsSince1970: createdNanoseconds), modified: Date(nanosecondsSince1970: modifiedNanoseconds),
            userMetadata: userMetadata, image: image, expires: expiresNanoseconds.map { Date(nanosecondsSince1970: $0) })
    }

    /// Appends the encoded header to `out`.
    func encode(into out: inout [UInt8]) {
        let start = out.count
        func put<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
        }
        out.append(contentsOf: BlobHeader.magic)
        put(UInt32(encodedLength))
        put(UInt64(bitPattern: size))
        put(checksum)
        put(createdNanoseconds)
        put(modifiedNanoseconds)
        put(image.map { BlobHeader.imageCodes[$0.format]! } ?? 0)
        out.append(contentsOf: [expiresNanoseconds == nil ? 0 : BlobHeader.expiryFlag, 0, 0])
        put(UInt32(clamping: image?.width ?? 0))
        put(UInt32(clamping: image?.height ?? 0))
        put(UInt16(identifier.utf8.count))
        put(UInt16(contentType.utf8.count))
        put(UInt16(userMetadata.count))
        put(UInt16(0))
        out.append(contentsOf: identifier.utf8)
        out.append(contentsOf: contentType.utf8)
        for (key, value) in userMetadata.sorted(by: { $0.key < $1.key }) {
            put(UInt16(key.utf8.count))
            out.append(contentsOf: key.utf8)
            put(UInt16(value.utf8.count))
            out.append(contentsOf: value.utf8)
        }
        if let expiresNanoseconds { put(expiresNanoseconds) }
        let sum = out.withUnsafeBytes { XXH64.hash(UnsafeRawBufferPointer(rebasing: $0[start...])) }
        put(sum)
    }

    /// The header's encoded bytes.
    func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(encodedLength)
        encode(into: &out)
        return out
    }

    /// Why a header failed to decode.
    enum DecodeError: Error, Equatable {
        /// Fewer bytes than the header needs; holds the length needed (or the fixed length if unknown).
        case truncated(needed: Int)
        /// Not a blob file, or damaged; the reason says how.
        case invalid(String)
    }

    /// Decodes a header from the start of `bytes`.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws(DecodeError) -> BlobHeader {
        guard bytes.count >= fixedLength else { throw .truncated(needed: fixedLength) }
        guard bytes[0] == magic[0], bytes[1] == magic[1], bytes[2] == magic[2], bytes[3] == magic[3] else {
            throw .invalid("bad magic (not a blob file)")
        }
        func read<T: FixedWidthInteger>(_ offset: Int, as: T.Type) -> T {
            T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
        }
        let length = Int(read(4, as: UInt32.self))
        guard length >= fixedLength + 8, length <= maximumLength else { throw .invalid("header length \(length) out of range") }
        guard bytes.count >= length else { throw .truncated(needed: length) }
        let stored = read(length - 8, as: UInt64.self)
        guard XXH64.hash(UnsafeRawBufferPointer(rebasing: bytes[0..<(length - 8)])) == stored else {
            throw .invalid("header checksum mismatch")
        }
        let size = Int64(bitPattern: read(8, as: UInt64.self))
        guard size >= 0 else { throw .invalid("negative content size") }
        var cursor = fixedLength
        func string(_ count: Int) throws(DecodeError) -> String {
            guard cursor + count <= length - 8 else { throw .invalid("field runs past the header end") }
            // Decoding a typed buffer takes the String fast path; the generic `String(validating:)`
            // over raw bytes went byte by byte and was the costliest part of a GET. Decoding
            // repairs invalid UTF-8, so a repaired string no longer equals its bytes.
            let field = UnsafeRawBufferPointer(rebasing: bytes[cursor..<(cursor + count)]).assumingMemoryBound(to: UInt8.self)
            let text = String(decoding: field, as: UTF8.self)
            if !field.allSatisfy({ $0 < 0x80 }), !text.utf8.elementsEqual(field) {
                throw .invalid("field is not UTF-8")
            }
            cursor += count
            return text
        }
        func length16() throws(DecodeError) -> Int {
            guard cursor + 2 <= length - 8 else { throw .invalid("field runs past the header end") }
            defer { cursor += 2 }
            return Int(read(cursor, as: UInt16.self))
        }
        let identifier = try string(Int(read(52, as: UInt16.self)))
        let contentType = try string(Int(read(54, as: UInt16.self)))
        var userMetadata: [String: String] = [:]
        for _ in 0..<Int(read(56, as: UInt16.self)) {
            let key = try string(try length16())
            userMetadata[key] = try string(try length16())
        }
        let flags = read(41, as: UInt8.self)
        guard flags & ~expiryFlag == 0 else { throw .invalid("unknown header flags \(flags)") }
        var expires: Int64?
        if flags & expiryFlag != 0 {
            guard cursor + 8 <= length - 8 else { throw .invalid("field runs past the header end") }
            expires = read(cursor, as: Int64.self)
            cursor += 8
        }
        guard cursor == length - 8 else { throw .invalid("\(length - 8 - cursor) unexpected bytes at the header end") }
        var image: ImageInfo?
        let code = read(40, as: UInt8.self)
        if code != 0 {
            guard let format = imageCodes.first(where: { $0.value == code })?.key else { throw .invalid("unknown image code \(code)") }
            image = ImageInfo(format: format, width: Int(read(44, as: UInt32.self)), height: Int(read(48, as: UInt32.self)))
        }
        return BlobHeader(
            identifier: identifier, size: size, checksum: read(16, as: UInt64.self),
            createdNanoseconds: read(24, as: Int64.self), modifiedNanoseconds: read(32, as: Int64.self),
            contentType: contentType, userMetadata: userMetadata, image: image, expiresNanoseconds: expires)
    }
}
