internal import BlobProtocol
import BlobStore
import Foundation
internal import HTTP1

/// The store's metadata of one blob version as one object header, `x-amz-meta-blob`
/// (docs/SCALE-OUT.md, "Object format").
///
/// One header rather than a field per `x-amz-meta-*` name, because the gateway lowercases metadata
/// names, turns `_` into `-` and trims values: user metadata such as `{"x-y_z": " ü v"}` would not
/// come back as it went. The value is compact JSON (sorted keys) percent-encoded down to
/// `A–Z a–z 0–9 { } [ ] " : , - _ .`, so it is plain ASCII with no space (nothing for the gateway to
/// trim or for Signature V4 to collapse) and no byte a proxy could rewrite.
///
/// Fields: `v` (format version, 1), `etag` (the XXH64 ETag), `size`, `type` (content type),
/// `created` and `modified` (nanoseconds since 1970), `meta` (user metadata), and when present
/// `image` (`format`, `width`, `height`) and `expires` (nanoseconds since 1970). The identifier is
/// the key's, never repeated here. Decoding is strict: anything else is a foreign object.
package enum S3MetadataHeader {
    /// The metadata name, as sent after `x-amz-meta-`.
    package static let name = "blob"
    /// The format version written.
    package static let version = 1
    /// The longest encoded value sent: the gateway refuses a request whose header block passes
    /// about 16 KiB (with an empty `400`), and the key (up to 3 KiB percent-encoded) and the
    /// signature share that block.
    package static let maximumEncodedByteCount = 11 * 1024

    private struct Record: Codable {
        var v: Int
        var etag: String
        var size: Int64
        var type: String
        var created: Int64
        var modified: Int64
        var meta: [String: String]
        var image: ImageInfo?
        var expires: Int64?
    }

    /// The header value for `metadata` (its identifier is not encoded).
    ///
    /// Written by hand, keys in byte order (as they have always been written; readers take any
    /// order): every put sends one, and Foundation's `JSONEncoder` was a visible part of blobd's CPU
    /// per small put on S3 (the `s3-put-4k` scenario prints that CPU).
    package static func encode(_ metadata: BlobMetadata) -> String {
        var json: [UInt8] = []
        json.reserveCapacity(192 + metadata.contentType.utf8.count + metadata.userMetadata.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count + 6 })
        JSONText.appendRaw(#"{"created":"#, into: &json)
        json.appendSignedDecimal(metadata.created.s3Nanoseconds)
        JSONText.appendRaw(#","etag":"#, into: &json)
        JSONText.appendString(metadata.etag.rawValue, into: &json)
        if let expires = metadata.expires {
            JSONText.appendRaw(#","expires":"#, into: &json)
            json.appendSignedDecimal(expires.s3Nanoseconds)
        }
        if let image = metadata.image {
            JSONText.appendRaw(#","image":{"format":"#, into: &json)
            JSONText.appendString(image.format.rawValue, into: &json)
            JSONText.appendRaw(#","height":"#, into: &json)
            json.appendSignedDecimal(Int64(image.height))
            JSONText.appendRaw(#","width":"#, into: &json)
            json.appendSignedDecimal(Int64(image.width))
            json.append(UInt8(ascii: "}"))
        }
        JSONText.appendRaw(#","meta":{"#, into: &json)
        for (index, (key, value)) in metadata.userMetadata.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }).enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            JSONText.appendKey(key, into: &json)
            JSONText.appendString(value, into: &json)
        }
        JSONText.appendRaw(#"},"modified":"#, into: &json)
        json.appendSignedDecimal(metadata.modified.s3Nanoseconds)
        JSONText.appendRaw(#","size":"#, into: &json)
        json.appendSignedDecimal(metadata.size)
        JSONText.appendRaw(#","type":"#, into: &json)
        JSONText.appendString(metadata.contentType, into: &json)
        JSONText.appendRaw(#","v":"#, into: &json)
        json.appendSignedDecimal(Int64(version))
        json.append(UInt8(ascii: "}"))

        var encoded: [UInt8] = []
        encoded.reserveCapacity(json.count + json.count / 4)
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in json {
            if isKept(byte) {
                encoded.append(byte)
            } else {
                encoded.append(UInt8(ascii: "%"))
                encoded.append(hex[Int(byte >> 4)])
                encoded.append(hex[Int(byte & 0xF)])
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }

    /// The metadata of blob `identifier` from the header's value, checked against the object's
    /// length (`objectSize`, when known); throws ``Invalid`` saying what is wrong.
    package static func decode(_ value: String, identifier: String, objectSize: Int64?) throws(Invalid) -> BlobMetadata {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(value.utf8.count)
        var iterator = value.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    throw Invalid(reason: "a bad percent escape in x-amz-meta-blob")
                }
                bytes.append(high << 4 | low)
            } else if isKept(byte) {
                bytes.append(byte)
            } else {
                throw Invalid(reason: "x-amz-meta-blob holds a byte 0x\(String(byte, radix: 16)) its encoding never writes")
            }
        }
        let record: Record
        do {
            record = try JSONDecoder().decode(Record.self, from: Data(bytes))
        } catch {
            throw Invalid(reason: "x-amz-meta-blob is not this store's metadata record (\(error))")
        }
        guard record.v == version else { throw Invalid(reason: "x-amz-meta-blob has format version \(record.v), this build reads \(version)") }
        guard let etag = ETag(record.etag) else { throw Invalid(reason: "x-amz-meta-blob has an ETag '\(record.etag)' that is not 16 hex digits") }
        guard record.size >= 0 else { throw Invalid(reason: "x-amz-meta-blob has a negative size") }
        if let objectSize, objectSize != record.size {
            throw Invalid(reason: "the object holds \(objectSize) bytes, its x-amz-meta-blob says \(record.size)")
        }
        if let reason = UserMetadataRules.violation(contentType: record.type, userMetadata: record.meta) {
            throw Invalid(reason: "x-amz-meta-blob: \(reason)")
        }
        return BlobMetadata(
            identifier: identifier, size: record.size, contentType: record.type, etag: etag,
            created: Date(s3Nanoseconds: record.created), modified: Date(s3Nanoseconds: record.modified),
            userMetadata: record.meta, image: record.image, expires: record.expires.map { Date(s3Nanoseconds: $0) })
    }

    /// Why a header value is not this store's metadata.
    package struct Invalid: Error, Sendable, CustomStringConvertible {
        /// What is wrong.
        package var reason: String
        /// The reason.
        package var description: String { reason }
    }

    private static func isKept(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "{}[]\":,-_.".utf8.contains(byte)
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}

extension [UInt8] {
    /// Appends `value` in decimal, with a `-` when negative.
    fileprivate mutating func appendSignedDecimal(_ value: Int64) {
        if value < 0 { append(UInt8(ascii: "-")) }
        appendDecimal(value.magnitude)
    }
}

extension Date {
    /// Whole nanoseconds since 1970, the resolution the metadata header records (and the file store's).
    package var s3Nanoseconds: Int64 { Int64((timeIntervalSince1970 * 1e9).rounded()) }

    /// The date `nanoseconds` after 1970.
    package init(s3Nanoseconds nanoseconds: Int64) {
        self.init(timeIntervalSince1970: Double(nanoseconds) / 1e9)
    }
}
