import BlobStore
import Foundation
import HTTP1

/// The metadata object (docs/PROTOCOL.md, "Metadata object") and the list page that holds them:
/// written by blobd, read by its client.
package enum MetadataJSON {
    // MARK: Encoding

    /// Appends one blob's metadata object: keys in the documented order, user metadata sorted by
    /// key, dates RFC 3339 in UTC with milliseconds, `expires` only for a version that expires,
    /// `image` only for recognised images.
    package static func append(_ metadata: BlobMetadata, into out: inout [UInt8]) {
        // Every PUT answers with one and a listing page holds up to a thousand: constant pieces are
        // copied as they are, numbers and dates formatted on the stack.
        out.reserveCapacity(out.count + 256 + metadata.identifier.utf8.count)
        JSONText.appendRaw(#"{"identifier":"#, into: &out)
        JSONText.appendString(metadata.identifier, into: &out)
        JSONText.appendRaw(#","size":"#, into: &out)
        out.appendDecimal(UInt64(clamping: metadata.size))
        JSONText.appendRaw(#","contentType":"#, into: &out)
        JSONText.appendString(metadata.contentType, into: &out)
        JSONText.appendRaw(#","etag":""#, into: &out)
        out.append(contentsOf: metadata.etag.rawValue.utf8)  // hex digits: nothing to escape
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: HTTPDates.rfc3339Length) { scratch in
            JSONText.appendRaw(#"","created":""#, into: &out)
            HTTPDates.writeRFC3339(metadata.created, into: scratch)
            out.append(contentsOf: UnsafeBufferPointer(scratch))
            JSONText.appendRaw(#"","modified":""#, into: &out)
            HTTPDates.writeRFC3339(metadata.modified, into: scratch)
            out.append(contentsOf: UnsafeBufferPointer(scratch))
            if let expires = metadata.expires {
                JSONText.appendRaw(#"","expires":""#, into: &out)
                HTTPDates.writeRFC3339(expires, into: scratch)
                out.append(contentsOf: UnsafeBufferPointer(scratch))
            }
        }
        JSONText.appendRaw(#"","metadata":{"#, into: &out)
        for (index, (key, value)) in metadata.userMetadata.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { out.append(0x2C) }
            JSONText.appendKey(key, into: &out)
            JSONText.appendString(value, into: &out)
        }
        out.append(0x7D)
        if let image = metadata.image {
            JSONText.appendRaw(#","image":{"format":"#, into: &out)
            JSONText.appendString(image.format.rawValue, into: &out)
            out.append(contentsOf: #","width":\#(image.width),"height":\#(image.height)}"#.utf8)
        }
        out.append(0x7D)
    }

    /// A metadata object on its own (a PUT's response body).
    package static func encode(_ metadata: BlobMetadata) -> [UInt8] {
        var out: [UInt8] = []
        append(metadata, into: &out)
        return out
    }

    /// A list page: `{"items":[…],"nextCursor":…}` (`null` on the last page).
    package static func encode(_ page: ListPage) -> [UInt8] {
        var out: [UInt8] = Array(#"{"items":["#.utf8)
        for (index, item) in page.items.enumerated() {
            if index > 0 { out.append(0x2C) }
            append(item, into: &out)
        }
        out.append(contentsOf: #"],"nextCursor":"#.utf8)
        if let cursor = page.nextCursor { JSONText.appendString(cursor, into: &out) } else { out.append(contentsOf: "null".utf8) }
        out.append(0x7D)
        return out
    }

    // MARK: Decoding

    /// The metadata object as decoded, before its values are checked.
    package struct Wire: Decodable, Sendable {
        struct Image: Decodable, Sendable {
            var format: String
            var width: Int
            var height: Int
        }
        var identifier: String
        var size: Int64
        var contentType: String
        var etag: String
        var created: String
        var modified: String
        var expires: String?
        var metadata: [String: String]?
        var image: Image?

        /// The metadata it describes; throws when a value is not what the protocol allows.
        package func metadataValue() throws(WireFormatError) -> BlobMetadata {
            guard let tag = ETag(etag) else { throw WireFormatError("bad etag '\(etag)' in metadata of '\(identifier)'") }
            guard let createdDate = HTTPDates.parseRFC3339(created), let modifiedDate = HTTPDates.parseRFC3339(modified) else {
                throw WireFormatError("bad date in metadata of '\(identifier)': created '\(created)', modified '\(modified)'")
            }
            var expiresDate: Date?
            if let expires {
                guard let date = HTTPDates.parseRFC3339(expires) else {
                    throw WireFormatError("bad date in metadata of '\(identifier)': expires '\(expires)'")
                }
                expiresDate = date
            }
            var info: ImageInfo?
            if let image {
                guard let format = ImageFormat(rawValue: image.format) else {
                    throw WireFormatError("unknown image format '\(image.format)' in metadata of '\(identifier)'")
                }
                info = ImageInfo(format: format, width: image.width, height: image.height)
            }
            return BlobMetadata(
                identifier: identifier, size: size, contentType: contentType, etag: tag, created: createdDate,
                modified: modifiedDate, userMetadata: metadata ?? [:], image: info, expires: expiresDate)
        }
    }

    private struct WirePage: Decodable {
        var items: [Wire]
        var nextCursor: String?
    }

    /// Decodes one metadata object.
    package static func metadata(from bytes: [UInt8]) throws(WireFormatError) -> BlobMetadata {
        try decode(Wire.self, bytes).metadataValue()
    }

    /// Decodes a list page.
    package static func page(from bytes: [UInt8]) throws(WireFormatError) -> ListPage {
        let page = try decode(WirePage.self, bytes)
        var items: [BlobMetadata] = []
        items.reserveCapacity(page.items.count)
        for item in page.items { items.append(try item.metadataValue()) }
        return ListPage(items: items, nextCursor: page.nextCursor)
    }

    /// Decodes `T`, or throws naming the decoder's complaint and the start of the document.
    package static func decode<T: Decodable>(_ type: T.Type, _ bytes: [UInt8]) throws(WireFormatError) -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(bytes))
        } catch {
            let text = String(decoding: bytes.prefix(200), as: UTF8.self)
            throw WireFormatError("unexpected JSON from blobd (\(error)): \(text)")
        }
    }
}
