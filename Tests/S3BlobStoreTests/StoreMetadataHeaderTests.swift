import BlobStore
import Foundation
@testable import S3BlobStore
import Testing

/// The `x-amz-meta-blob` codec (docs/SCALE-OUT.md, "Object format"), without a gateway.
@Suite struct StoreMetadataHeaderTests {
    static let hostile = BlobMetadata(
        identifier: "a/b c", size: 12, contentType: "text/plain; charset=utf-8", etag: ETag(checksum: 0x0123_4567_89ab_cdef),
        created: Date(s3Nanoseconds: 1_700_000_000_123_456_789), modified: Date(s3Nanoseconds: 1_700_000_001_987_654_321),
        userMetadata: ["x-y_z": " ü v ", "k": "%41 \"q\" \\ {}", "e": "", "emoji": "🦊  two  spaces"],
        image: ImageInfo(format: .png, width: 3, height: 4), expires: Date(s3Nanoseconds: 1_800_000_000_000_000_001))

    @Test func aRoundTripKeepsEveryFieldExactly() throws {
        let encoded = S3MetadataHeader.encode(Self.hostile)
        let decoded = try S3MetadataHeader.decode(encoded, identifier: "a/b c", objectSize: 12)
        #expect(decoded == Self.hostile)
    }

    /// The record as Foundation's `JSONEncoder` wrote it (sorted keys) before the encoder was
    /// written by hand: the same fields, names and values.
    private struct FoundationRecord: Encodable {
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

    @Test func theHeaderIsTheOneFoundationsEncoderWrote() throws {
        let plain = BlobMetadata(
            identifier: "p", size: 0, contentType: "application/octet-stream", etag: ETag(checksum: 0xEF46_DB37_51D8_E999),
            created: Date(s3Nanoseconds: 1_764_000_000_000_000_000), modified: Date(s3Nanoseconds: 1_764_000_000_000_000_000))
        for metadata in [Self.hostile, plain] {
            let record = FoundationRecord(
                v: 1, etag: metadata.etag.rawValue, size: metadata.size, type: metadata.contentType, created: metadata.created.s3Nanoseconds,
                modified: metadata.modified.s3Nanoseconds, meta: metadata.userMetadata, image: metadata.image, expires: metadata.expires?.s3Nanoseconds)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let json = try encoder.encode(record)
            let written = S3MetadataHeader.encode(metadata)
            #expect(written.removingPercentEncoding == String(decoding: json, as: UTF8.self))
        }
    }

    @Test func datesBefore1970AndNoOptionalFieldsRoundTrip() throws {
        var odd = Self.hostile
        odd.userMetadata = [:]
        odd.created = Date(s3Nanoseconds: -1_000_000_001)
        odd.expires = nil
        odd.image = nil
        let decoded = try S3MetadataHeader.decode(S3MetadataHeader.encode(odd), identifier: "a/b c", objectSize: 12)
        #expect(decoded == odd)
    }

    @Test func theValueIsASCIIWithoutSpacesSoTheGatewayCannotTrimOrFoldIt() {
        let encoded = S3MetadataHeader.encode(Self.hostile)
        #expect(encoded.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "\(encoded)")
        #expect(!encoded.contains("ü"))
    }

    @Test func anythingElseIsRefusedWithAReason() {
        let good = S3MetadataHeader.encode(Self.hostile)
        let cases = [
            "", "hello", "{}", "%zz", good + " ", good.replacingOccurrences(of: "\"v\":1", with: "\"v\":2"),
            good.replacingOccurrences(of: "0123456789abcdef", with: "0123456789abcdeX"),
        ]
        for value in cases {
            #expect(throws: S3MetadataHeader.Invalid.self, "\(value)") { try S3MetadataHeader.decode(value, identifier: "x", objectSize: nil) }
        }
        // The object's length must be the recorded size.
        let error = #expect(throws: S3MetadataHeader.Invalid.self) { try S3MetadataHeader.decode(good, identifier: "x", objectSize: 11) }
        #expect(error?.reason.contains("11 bytes") == true)
    }
}

/// Metadata whose header would pass the gateway's header block is refused before anything is sent.
@Suite struct StoreMetadataHeaderLimitTests {
    @Test func metadataTooLongForTheHeaderIsTooLargeNamingIt() async throws {
        // No gateway needed: the header is measured before the PUT (nothing listens on port 1).
        let configuration = S3Configuration(
            credentials: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret"), region: "us-east-1",
            endpoint: S3Endpoint(scheme: .http, host: "127.0.0.1", port: 1), addressingStyle: .path)
        let store = try S3BlobStore(name: "s", bucket: "b", configuration: configuration)
        // Within the user-metadata rules (8,000 bytes), but every byte non-ASCII: 24,000 encoded.
        let wide = Dictionary(uniqueKeysWithValues: (0..<8).map { ("k\($0)", String(repeating: "é", count: 500)) })
        let error = await #expect(throws: BlobStoreError.self) { try await store.put(Data("x".utf8), identifier: "doc", options: PutOptions(userMetadata: wide)) }
        guard case .tooLarge(let what, let limit, let actual)? = error else {
            Issue.record("expected tooLarge, got \(String(describing: error))")
            return
        }
        #expect(what.contains("x-amz-meta-blob") && what.contains("doc"))
        #expect(limit == Int64(S3MetadataHeader.maximumEncodedByteCount) && actual > limit)
    }
}
