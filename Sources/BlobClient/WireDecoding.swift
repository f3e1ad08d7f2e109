import BlobProtocol
import BlobStore
import HTTP1

/// The documents and headers of blobd's answers, decoded by BlobProtocol, with what does not
/// decode reported as a ``BlobClientError/protocolError(_:)``.
enum WireDecoding {
    /// Decodes one metadata object.
    static func metadata(from bytes: [UInt8]) throws -> BlobMetadata {
        try reporting { () throws(WireFormatError) in try BlobProtocol.MetadataJSON.metadata(from: bytes) }
    }

    /// Decodes a list page.
    static func page(from bytes: [UInt8]) throws -> ListPage {
        try reporting { () throws(WireFormatError) in try BlobProtocol.MetadataJSON.page(from: bytes) }
    }

    /// Decodes `GET /v1/stores`.
    static func stores(from bytes: [UInt8]) throws -> [StoreSummary] {
        try reporting { () throws(WireFormatError) in try StoreListJSON.decode(bytes) }
    }

    /// Metadata from the headers of a GET/HEAD response (`modified` has one-second precision there).
    static func metadata(identifier: String, headers: HTTPHeaders, size: Int64) throws -> BlobMetadata {
        try reporting { () throws(WireFormatError) in try MetadataHeaders.metadata(identifier: identifier, headers: headers, size: size) }
    }

    /// `body`'s value, or its wire format error as a protocol error.
    static func reporting<T>(_ body: () throws(WireFormatError) -> T) throws -> T {
        do { return try body() } catch { throw BlobClientError.protocolError(error.description) }
    }
}
