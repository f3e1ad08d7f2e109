import BlobProtocol
import BlobStore
import Foundation
import Testing

@Suite struct MetadataJSONTests {
    @Test func metadataJSONIsExactlyTheDocumentedObject() throws {
        let created = Date(timeIntervalSince1970: 1_700_000_000.123)
        let modified = Date(timeIntervalSince1970: 1_800_000_000.5)
        let plain = BlobMetadata(
            identifier: "a/b \"q\"", size: 0, contentType: "text/plain", etag: ETag(checksum: 0x00ab_cdef_0123_4567),
            created: created, modified: modified)
        #expect(String(decoding: MetadataJSON.encode(plain), as: UTF8.self) == #"{"identifier":"a/b \"q\"","size":0,"contentType":"text/plain","etag":"00abcdef01234567","created":"2023-11-14T22:13:20.123Z","modified":"2027-01-15T08:00:00.500Z","metadata":{}}"#)
        let full = BlobMetadata(
            identifier: "img", size: Int64.max, contentType: "image/png", etag: ETag(checksum: .max), created: created,
            modified: created, userMetadata: ["z": "last", "a": "fi\nrst"], image: ImageInfo(format: .png, width: 640, height: 480))
        let text = String(decoding: MetadataJSON.encode(full), as: UTF8.self)
        #expect(text == #"{"identifier":"img","size":9223372036854775807,"contentType":"image/png","etag":"ffffffffffffffff","created":"2023-11-14T22:13:20.123Z","modified":"2023-11-14T22:13:20.123Z","metadata":{"a":"fi\nrst","z":"last"},"image":{"format":"png","width":640,"height":480}}"#)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["size"] as? Int64 == Int64.max)
        #expect((object["metadata"] as? [String: String])?["a"] == "fi\nrst")
    }

    @Test func jsonEscapingEveryControlByteAndNonASCII() throws {
        // Every code unit below 0x80 plus multi-byte scalars; Foundation's decoder is the reference.
        let scalars = (0..<0x80).map { Character(Unicode.Scalar(UInt8($0))) } + ["é", "日", "🐈", "\u{2028}"]
        let text = String(scalars) + "tail"
        var out: [UInt8] = []
        JSONText.appendString(text, into: &out)
        let decoded = try JSONDecoder().decode(String.self, from: Data(out))
        #expect(decoded == text)
        let literal = String(decoding: out, as: UTF8.self)
        #expect(literal.hasPrefix(#""\u0000\u0001"#))
        #expect(literal.contains(#"\t\n\u000b\u000c\r"#))
        #expect(literal.contains(##"\u001f !\"#$"##))
        #expect(literal.contains(#"[\\]"#))
        #expect(literal.contains(#"~\u007fé日🐈"#))
        #expect(literal.hasSuffix(#"tail""#))
    }

    static let samples: [BlobMetadata] = [
        BlobMetadata(
            identifier: "2024/cat.jpg", size: 48213, contentType: "image/jpeg", etag: ETag(checksum: 0x9f3c_0e5d_1a2b_4c6d),
            created: Date(timeIntervalSince1970: 1_795_386_508.076), modified: Date(timeIntervalSince1970: 1_795_386_601.512),
            userMetadata: ["author": "ada"], image: ImageInfo(format: .jpeg, width: 640, height: 480)),
        BlobMetadata(
            identifier: "quote\" back\\ nl\n tab\t ctl\u{1} del\u{7F} é 日 🐈", size: 0, contentType: "text/plain; charset=utf-8",
            etag: ETag(checksum: 0), created: Date(timeIntervalSince1970: -0.5), modified: Date(timeIntervalSince1970: 0),
            userMetadata: ["z": "\u{2028}", "a-b_c": "x\ny", "k": ""]),
    ]

    /// encode → decode gives the same metadata (dates to the millisecond the wire carries), and
    /// encoding that again gives the same bytes.
    @Test(arguments: samples) func encodeDecodeIsIdentity(_ metadata: BlobMetadata) throws {
        let bytes = MetadataJSON.encode(metadata)
        let decoded = try MetadataJSON.metadata(from: bytes)
        #expect(decoded.identifier == metadata.identifier && decoded.size == metadata.size && decoded.contentType == metadata.contentType)
        #expect(decoded.etag == metadata.etag && decoded.userMetadata == metadata.userMetadata && decoded.image == metadata.image)
        #expect(abs(decoded.created.timeIntervalSince1970 - metadata.created.timeIntervalSince1970) < 0.0005)
        #expect(abs(decoded.modified.timeIntervalSince1970 - metadata.modified.timeIntervalSince1970) < 0.0005)
        #expect(MetadataJSON.encode(decoded) == bytes)
    }

    /// The metadata object of PROTOCOL.md ("Metadata object") is, byte for byte, what blobd writes for it.
    @Test func theDocumentedExampleIsWhatBlobdWrites() throws {
        let section = ProtocolDocument.section("## Metadata object")
        let start = try #require(section.firstIndex(of: "```json"))
        let end = try #require(section[(start + 1)...].firstIndex(of: "```"))
        let example = section[(start + 1)..<end].map { $0.trimmingCharacters(in: .whitespaces) }.joined()
        let decoded = try MetadataJSON.metadata(from: Array(example.utf8))
        #expect(String(decoding: MetadataJSON.encode(decoded), as: UTF8.self) == example)
        #expect(decoded.identifier == "2024/cat.jpg" && decoded.userMetadata == ["author": "ada"] && decoded.image?.width == 640)
    }

    @Test func pagesRoundTrip() throws {
        let page = ListPage(items: Self.samples, nextCursor: "i323032342f")
        let bytes = MetadataJSON.encode(page)
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix(#"{"items":[{"identifier":"2024/cat.jpg","#))
        #expect(String(decoding: bytes, as: UTF8.self).hasSuffix(#"],"nextCursor":"i323032342f"}"#))
        let decoded = try MetadataJSON.page(from: bytes)
        #expect(decoded.items.map(\.identifier) == Self.samples.map(\.identifier) && decoded.nextCursor == "i323032342f")
        let last = MetadataJSON.encode(ListPage(items: [], nextCursor: nil))
        #expect(String(decoding: last, as: UTF8.self) == #"{"items":[],"nextCursor":null}"#)
        #expect(try MetadataJSON.page(from: last).nextCursor == nil)
    }

    @Test func badValuesAreNamed() {
        func failure(_ json: String) -> String {
            do { _ = try MetadataJSON.metadata(from: Array(json.utf8)) } catch { return error.description }
            return "decoded"
        }
        let valid = String(decoding: MetadataJSON.encode(Self.samples[0]), as: UTF8.self)
        #expect(failure(valid.replacingOccurrences(of: "9f3c0e5d1a2b4c6d", with: "xyz")).contains("bad etag 'xyz'"))
        #expect(failure(valid.replacingOccurrences(of: "2026-11-22T22:28:28.076Z", with: "yesterday")).contains("bad date"))
        #expect(failure(valid.replacingOccurrences(of: #""jpeg""#, with: #""jpeg2000""#)).contains("unknown image format 'jpeg2000'"))
        #expect(failure("{}").hasPrefix("unexpected JSON from blobd"))
    }

    /// `GET /v1/stores`: the documented members, optional ones left out; the client reads the totals back.
    @Test func storeListRoundTrips() throws {
        let entries = [
            StoreListJSON.Entry(name: "archive", open: false),
            StoreListJSON.Entry(name: "photos", open: true, statistics: StoreStatistics(count: 12, bytes: 901_234)),
            StoreListJSON.Entry(name: "tools", open: false, heldBy: "pid 4242"),
            StoreListJSON.Entry(name: "broken", open: true, error: "io \"x\""),
        ]
        let bytes = StoreListJSON.encode(entries)
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"stores":[{"name":"archive","open":false},{"name":"photos","open":true,"count":12,"bytes":901234},{"name":"tools","open":false,"heldBy":"pid 4242"},{"name":"broken","open":true,"error":"io \"x\""}]}"#)
        #expect(try StoreListJSON.decode(bytes) == [
            StoreSummary(name: "archive", statistics: nil), StoreSummary(name: "photos", statistics: StoreStatistics(count: 12, bytes: 901_234)),
            StoreSummary(name: "tools", statistics: nil, heldBy: "pid 4242"), StoreSummary(name: "broken", statistics: nil),
        ])
    }

    /// Change events: the names and `data` of PROTOCOL.md, decoded back to the same change.
    @Test func changeEventsRoundTrip() throws {
        let date = Date(timeIntervalSince1970: 1_795_386_508.076)
        let changes: [(BlobChange, String, String)] = [
            (BlobChange(sequence: 7, store: "photos", kind: .removed(identifier: "2024/cat.jpg"), date: date), "removed",
             #"{"store":"photos","identifier":"2024/cat.jpg","date":"2026-11-22T22:28:28.076Z"}"#),
            (BlobChange(sequence: 8, store: "photos", kind: .removedAll, date: date), "removed-all",
             #"{"store":"photos","date":"2026-11-22T22:28:28.076Z"}"#),
            (BlobChange(sequence: 9, store: "photos", kind: .put(Self.samples[0]), date: date), "put",
             #"{"store":"photos","blob":"# + String(decoding: MetadataJSON.encode(Self.samples[0]), as: UTF8.self) + #","date":"2026-11-22T22:28:28.076Z"}"#),
        ]
        for (change, name, data) in changes {
            let (event, bytes) = ChangeEventJSON.encode(change)
            #expect(event == name && String(decoding: bytes, as: UTF8.self) == data)
            guard case .change(let decoded)? = try ChangeEventJSON.decode(event: event, id: "\(change.sequence)", data: data) else {
                Issue.record("\(name) did not decode")
                continue
            }
            #expect(decoded.sequence == change.sequence && decoded.store == change.store)
            #expect(abs(decoded.date.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.0005)
            if case .put(let metadata) = decoded.kind { #expect(metadata.identifier == Self.samples[0].identifier) } else { #expect(decoded.kind == change.kind) }
        }
        let gap = ChangeEventJSON.encodeGap(lastEventID: 4, firstAvailableID: 9)
        #expect(String(decoding: gap, as: UTF8.self) == #"{"lastEventId":4,"firstAvailableId":9}"#)
        #expect(try ChangeEventJSON.decode(event: "gap", id: "8", data: String(decoding: gap, as: UTF8.self)) == .gap(lastEventID: 4, firstAvailableID: 9))
        #expect(try ChangeEventJSON.decode(event: "renamed", id: nil, data: "{}") == nil)
        #expect(throws: WireFormatError.self) { try ChangeEventJSON.decode(event: "put", id: nil, data: #"{"store":"s"}"#) }
    }
}
