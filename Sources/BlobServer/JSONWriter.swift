import BlobStore
import Foundation
import HTTP1

/// Builds the daemon's small JSON documents by hand, so their field names and order are exactly
/// what docs/PROTOCOL.md says (and no encoder configuration can change them).
enum JSONWriter {
    /// Appends `text` as a JSON string literal.
    ///
    /// Works on the UTF-8 bytes and copies runs that need no escape in one go: every PUT response and
    /// every change event goes through here, and a `String` per scalar was a large share of a PUT's
    /// work (`Benchmarks/scripts/instructions put` counts it).
    static func appendString(_ text: String, into out: inout [UInt8]) {
        out.append(0x22)
        var text = text
        text.withUTF8 { bytes in
            var runStart = 0
            for index in bytes.indices {
                let byte = bytes[index]
                // Multi-byte sequences (all bytes ≥ 0x80) pass through: a String is valid UTF-8.
                guard byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F else { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                runStart = index + 1
                switch byte {
                case 0x22: out.append(contentsOf: [0x5C, 0x22])
                case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: out.append(contentsOf: [0x5C, 0x6E])
                case 0x0D: out.append(contentsOf: [0x5C, 0x72])
                case 0x09: out.append(contentsOf: [0x5C, 0x74])
                default: out.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hexDigit(byte >> 4), hexDigit(byte & 0xF)])
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
        out.append(0x22)
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 + nibble : 0x61 + nibble - 10 }

    /// Appends a `"key":` prefix.
    static func appendKey(_ key: String, into out: inout [UInt8]) {
        appendString(key, into: &out)
        out.append(0x3A)
    }

    /// `{"error":{"code":…,"message":…}}`.
    static func error(code: String, message: String) -> [UInt8] {
        var out: [UInt8] = []
        out.append(contentsOf: #"{"error":{"code":"#.utf8)
        appendString(code, into: &out)
        out.append(contentsOf: #","message":"#.utf8)
        appendString(message, into: &out)
        out.append(contentsOf: "}}".utf8)
        return out
    }

    /// One blob's metadata object (see PROTOCOL.md, "Metadata object").
    static func appendMetadata(_ metadata: BlobMetadata, into out: inout [UInt8]) {
        // Every PUT answers with one and a listing page holds up to a thousand: constant pieces are
        // copied as they are and numbers and dates formatted on the stack (as Strings, with every key
        // escaped, it was a visible share of a PUT's instructions: `Benchmarks/scripts/instructions put`).
        out.reserveCapacity(out.count + 256 + metadata.identifier.utf8.count)
        appendRaw(#"{"identifier":"#, into: &out)
        appendString(metadata.identifier, into: &out)
        appendRaw(#","size":"#, into: &out)
        out.appendDecimal(UInt64(clamping: metadata.size))
        appendRaw(#","contentType":"#, into: &out)
        appendString(metadata.contentType, into: &out)
        appendRaw(#","etag":""#, into: &out)
        out.append(contentsOf: metadata.etag.rawValue.utf8)  // hex digits: nothing to escape
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: HTTPDates.rfc3339Length) { scratch in
            appendRaw(#"","created":""#, into: &out)
            HTTPDates.writeRFC3339(metadata.created, into: scratch)
            out.append(contentsOf: UnsafeBufferPointer(scratch))
            appendRaw(#"","modified":""#, into: &out)
            HTTPDates.writeRFC3339(metadata.modified, into: scratch)
            out.append(contentsOf: UnsafeBufferPointer(scratch))
        }
        appendRaw(#"","metadata":{"#, into: &out)
        for (index, (key, value)) in metadata.userMetadata.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { out.append(0x2C) }
            appendKey(key, into: &out)
            appendString(value, into: &out)
        }
        out.append(0x7D)
        if let image = metadata.image {
            appendRaw(#","image":{"format":"#, into: &out)
            appendString(image.format.rawValue, into: &out)
            out.append(contentsOf: #","width":\#(image.width),"height":\#(image.height)}"#.utf8)
        }
        out.append(0x7D)
    }

    /// Appends a constant piece of JSON as it is.
    private static func appendRaw(_ piece: StaticString, into out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: piece.utf8Start, count: piece.utf8CodeUnitCount))
    }

    /// A metadata object on its own.
    static func metadata(_ metadata: BlobMetadata) -> [UInt8] {
        var out: [UInt8] = []
        appendMetadata(metadata, into: &out)
        return out
    }

    /// `{"items":[…],"nextCursor":…}`.
    static func page(_ page: ListPage) -> [UInt8] {
        var out: [UInt8] = Array(#"{"items":["#.utf8)
        for (index, item) in page.items.enumerated() {
            if index > 0 { out.append(0x2C) }
            appendMetadata(item, into: &out)
        }
        out.append(contentsOf: #"],"nextCursor":"#.utf8)
        if let cursor = page.nextCursor { appendString(cursor, into: &out) } else { out.append(contentsOf: "null".utf8) }
        out.append(0x7D)
        return out
    }

    /// `{"stores":[{"name":…,"count":…,"bytes":…}]}`.
    /// One store as `GET /v1/stores` lists it.
    struct StoreEntry {
        var name: String
        /// Whether the daemon has the store open.
        var open: Bool
        /// Its totals (only for an open store, when they could be read).
        var statistics: StoreStatistics?
        /// Why the totals of an open store could not be read.
        var error: String?
        /// The process holding the store's lock, for a store the daemon does not have open.
        var heldBy: String?
    }

    /// `GET /v1/stores`: `{"stores":[{"name":…,"open":…,"count":…,"bytes":…,"heldBy":…},…]}`.
    static func stores(_ stores: [StoreEntry]) -> [UInt8] {
        var out: [UInt8] = Array(#"{"stores":["#.utf8)
        for (index, store) in stores.enumerated() {
            if index > 0 { out.append(0x2C) }
            out.append(contentsOf: #"{"name":"#.utf8)
            appendString(store.name, into: &out)
            out.append(contentsOf: (store.open ? #","open":true"# : #","open":false"#).utf8)
            if let statistics = store.statistics {
                out.append(contentsOf: #","count":\#(statistics.count),"bytes":\#(statistics.bytes)"#.utf8)
            }
            if let error = store.error {
                out.append(contentsOf: #","error":"#.utf8)
                appendString(error, into: &out)
            }
            if let holder = store.heldBy {
                out.append(contentsOf: #","heldBy":"#.utf8)
                appendString(holder, into: &out)
            }
            out.append(0x7D)
        }
        out.append(contentsOf: "]}".utf8)
        return out
    }
}
