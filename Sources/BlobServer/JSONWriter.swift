import BlobProtocol
import BlobStore

/// The daemon's JSON bodies, as BlobProtocol writes them: forwarders for the call sites in
/// Router*.swift that do not import BlobProtocol yet (they can call ``MetadataJSON`` and
/// ``StoreListJSON`` directly, and then this file goes).
enum JSONWriter {
    /// One blob's metadata object (a PUT's body).
    static func metadata(_ metadata: BlobMetadata) -> [UInt8] { MetadataJSON.encode(metadata) }

    /// `{"items":[…],"nextCursor":…}`.
    static func page(_ page: ListPage) -> [UInt8] { MetadataJSON.encode(page) }

    /// One store as `GET /v1/stores` lists it.
    typealias StoreEntry = StoreListJSON.Entry

    /// `GET /v1/stores`.
    static func stores(_ stores: [StoreEntry]) -> [UInt8] { StoreListJSON.encode(stores) }
}
