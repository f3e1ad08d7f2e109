import BlobProtocol
import BlobStore
import Foundation
import HTTP1
import Testing

/// Cache mode's wire pieces (docs/PROTOCOL.md, "Store policy", "Expiry", "Change events"): the
/// policy object and its updates, the expiry headers, `expires` in metadata, and the events of
/// removals by policy.
@Suite struct CacheModeProtocolTests {
    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    private func refusal(_ json: String) -> String? {
        do {
            _ = try PolicyJSON.decodeUpdate(Array(json.utf8))
            return nil
        } catch {
            return error.description
        }
    }

    @Test func thePolicyObjectIsWrittenWithNullForNoLimitAndSecondsForTheTimeToLive() throws {
        #expect(text(PolicyJSON.encode(StorePolicy.unlimited)) == #"{"maxBytes":null,"maxCount":null,"defaultTTL":null}"#)
        let policy = StorePolicy(maximumBytes: 2 << 30, maximumCount: 1000, defaultTimeToLive: .seconds(604_800))
        #expect(text(PolicyJSON.encode(policy)) == #"{"maxBytes":2147483648,"maxCount":1000,"defaultTTL":604800}"#)
        #expect(PolicyJSON.seconds(.milliseconds(1500)) == "1.5")
        #expect(PolicyJSON.seconds(.milliseconds(1005)) == "1.005")
        // Below a millisecond rounds up: a time to live is never shortened.
        #expect(PolicyJSON.seconds(.nanoseconds(1)) == "0.001")
        let store = PolicyJSON.encodeStore(name: "photos", statistics: StoreStatistics(count: 12, bytes: 901_234), policy: policy)
        #expect(text(store) == #"{"name":"photos","count":12,"bytes":901234,"policy":{"maxBytes":2147483648,"maxCount":1000,"defaultTTL":604800}}"#)
        let decoded = try PolicyJSON.decodeStore(store)
        #expect(decoded.name == "photos" && decoded.statistics == StoreStatistics(count: 12, bytes: 901_234) && decoded.policy == policy)
    }

    @Test func anUpdateChangesTheMembersItHasAndNullLiftsALimit() throws {
        let current = StorePolicy(maximumBytes: 100, maximumCount: 5, defaultTimeToLive: .seconds(60))
        let partial = try PolicyJSON.decodeUpdate(Array(#"{"maxCount":7}"#.utf8))
        #expect(partial.applied(to: current) == StorePolicy(maximumBytes: 100, maximumCount: 7, defaultTimeToLive: .seconds(60)))
        let lifting = try PolicyJSON.decodeUpdate(Array(#"{"maxBytes":null,"defaultTTL":1.5}"#.utf8))
        #expect(lifting.applied(to: current) == StorePolicy(maximumBytes: nil, maximumCount: 5, defaultTimeToLive: .milliseconds(1500)))
        #expect(try PolicyJSON.decodeUpdate(Array("{}".utf8)).isEmpty)
        // What a client sends is what the daemon reads back.
        for update in [partial, lifting, PolicyJSON.Update(maximumBytes: .some(nil), maximumCount: .some(3), defaultTimeToLive: .some(.seconds(9)))] {
            #expect(try PolicyJSON.decodeUpdate(PolicyJSON.encode(update)) == update)
        }
    }

    @Test func aBadPolicyIsRefusedNamingTheMemberAndItsBounds() {
        #expect(refusal(#"{"maxBytes":0}"#) == "maxBytes must be a whole number of bytes from 1 to 9223372036854775807, or null for no limit (got 0)")
        #expect(refusal(#"{"maxCount":1.5}"#)?.hasPrefix("maxCount must be a whole number of blobs from 1 to") == true)
        #expect(refusal(#"{"maxCount":"10"}"#)?.hasSuffix(#"(got "10")"#) == true)
        #expect(refusal(#"{"defaultTTL":true}"#) == "defaultTTL must be a number of seconds from 0.001 to 3155760000, or null for no expiry (got true)")
        #expect(refusal(#"{"defaultTTL":3155760001}"#)?.hasPrefix("defaultTTL must be") == true)
        #expect(refusal(#"{"defaultTTL":0}"#)?.hasPrefix("defaultTTL must be") == true)
        #expect(refusal(#"{"maxSize":1}"#) == "unknown policy member 'maxSize'; the members are maxBytes, maxCount and defaultTTL")
        #expect(refusal("[1]")?.hasPrefix("the policy must be a JSON object") == true)
        #expect(refusal(#"{"maxBytes":"#)?.hasPrefix("the policy is not valid JSON") == true)
    }

    @Test func expiryHeadersBecomeThePutsExpiry() throws {
        #expect(try ExpiryHeaders.expiry(blobExpires: nil, cacheControl: nil) == .storeDefault)
        #expect(try ExpiryHeaders.expiry(blobExpires: "never", cacheControl: nil) == .never)
        #expect(try ExpiryHeaders.expiry(blobExpires: "NEVER", cacheControl: "no-cache") == .never)
        let date = Date(timeIntervalSince1970: 1_795_392_508.076)
        #expect(try ExpiryHeaders.expiry(blobExpires: "2026-11-23T00:08:28.076Z", cacheControl: nil) == .at(date))
        #expect(try ExpiryHeaders.expiry(blobExpires: "Mon, 23 Nov 2026 00:08:28 GMT", cacheControl: nil) == .at(Date(timeIntervalSince1970: 1_795_392_508)))
        #expect(try ExpiryHeaders.expiry(blobExpires: nil, cacheControl: "public, max-age=3600") == .after(.seconds(3600)))
        #expect(try ExpiryHeaders.expiry(blobExpires: nil, cacheControl: "no-store") == .storeDefault)
        #expect(throws: PolicyJSON.Refusal.self) { try ExpiryHeaders.expiry(blobExpires: "never", cacheControl: "max-age=5") }
        #expect(throws: PolicyJSON.Refusal.self) { try ExpiryHeaders.expiry(blobExpires: "tomorrow", cacheControl: nil) }
        #expect(throws: PolicyJSON.Refusal.self) { try ExpiryHeaders.expiry(blobExpires: nil, cacheControl: "max-age=-1") }
        #expect(throws: PolicyJSON.Refusal.self) { try ExpiryHeaders.expiry(blobExpires: nil, cacheControl: "max-age=3155760001") }
        #expect(throws: PolicyJSON.Refusal.self) { try ExpiryHeaders.expiry(blobExpires: nil, cacheControl: "max-age=1, max-age=2") }
    }

    /// PROTOCOL.md's `Cache-Control: max-age=N` row, case by case: what is taken and what is refused.
    @Test func cacheControlTakesOneMaxAgeAndIgnoresTheOtherDirectives() throws {
        #expect(try ExpiryHeaders.expiry(blobExpires: nil, cacheControl: "MAX-AGE=60") == .after(.seconds(60)))
        #expect(try ExpiryHeaders.expiry(blobExpires: nil, cacheControl: #"max-age="60""#) == .after(.seconds(60)))
        #expect(try ExpiryHeaders.expiry(blobExpires: nil, cacheControl: "max-age=0") == .after(.seconds(0)))
        #expect(try ExpiryHeaders.expiry(blobExpires: nil, cacheControl: "max-age=3155760000") == .after(.seconds(3_155_760_000)))
        #expect(try ExpiryHeaders.expiry(blobExpires: nil, cacheControl: "max-age=5, no-cache, max-age=5") == .after(.seconds(5)))
        #expect(try ExpiryHeaders.expiry(blobExpires: nil, cacheControl: "no-cache, private, s-maxage=9") == .storeDefault)
        #expect(try ExpiryHeaders.expiry(blobExpires: "never", cacheControl: "public") == .never)
        for refused in ["max-age", "max-age=", "max-age=1.5", "max-age=-1", "max-age=+1", "max-age=1e3", "max-age=3155760001", "max-age=1, max-age=2"] {
            #expect(throws: PolicyJSON.Refusal.self, "\(refused)") { try ExpiryHeaders.expiry(blobExpires: nil, cacheControl: refused) }
        }
        #expect(throws: PolicyJSON.Refusal.self) { try ExpiryHeaders.expiry(blobExpires: "2099-01-01T00:00:00Z", cacheControl: "public, max-age=5") }
    }

    @Test func aClientSendsEachExpiryAsTheHeaderTheDaemonReadsBack() throws {
        let date = Date(timeIntervalSince1970: 1_795_392_508.076)
        for expiry in [BlobExpiry.storeDefault, .never, .at(date), .after(.seconds(90))] {
            let fields = ExpiryHeaders.requestFields(expiry)
            let blobExpires = fields.first { $0.name == "Blob-Expires" }?.value
            let cacheControl = fields.first { $0.name == "Cache-Control" }?.value
            #expect(try ExpiryHeaders.expiry(blobExpires: blobExpires, cacheControl: cacheControl) == expiry)
        }
        // max-age has whole seconds: a fraction is rounded up.
        #expect(ExpiryHeaders.requestFields(.after(.milliseconds(1500))).map(\.value) == ["max-age=2"])
    }

    @Test func expiresIsInTheMetadataObjectAndTheHeadersOnlyWhenTheBlobExpires() throws {
        let expires = Date(timeIntervalSince1970: 1_900_000_000.25)
        var metadata = BlobMetadata(
            identifier: "a", size: 1, contentType: "text/plain", etag: ETag(checksum: 1), created: Date(timeIntervalSince1970: 1_800_000_000),
            modified: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(!text(MetadataJSON.encode(metadata)).contains("expires"))
        metadata.expires = expires
        let json = text(MetadataJSON.encode(metadata))
        #expect(json.contains(#""modified":"2027-01-15T08:00:00.000Z","expires":"2030-03-17T17:46:40.250Z","metadata":{}"#), "\(json)")
        #expect(try MetadataJSON.metadata(from: MetadataJSON.encode(metadata)) == metadata)

        var fields: [(String, String)] = []
        MetadataHeaders.forEachBlobField(of: metadata) { fields.append(($0, $1)) }
        #expect(fields.map(\.0) == ["Blob-Expires", "Expires"])
        #expect(fields.map(\.1) == ["2030-03-17T17:46:40.250Z", "Sun, 17 Mar 2030 17:46:40 GMT"])
        var headers = HTTPHeaders()
        headers.append(name: "ETag", value: "\"0000000000000001\"")
        for (name, value) in fields { headers.append(name: name, value: value) }
        #expect(try MetadataHeaders.metadata(identifier: "a", headers: headers, size: 1).expires == expires)
    }

    @Test func removalsByPolicyAreTheirOwnEventsAndDecodeBackToTheirReason() throws {
        let date = Date(timeIntervalSince1970: 1_795_392_509.001)
        for (reason, name) in [(BlobChange.Reason.requested, "removed"), (.expired, "expired"), (.evicted, "evicted")] {
            let change = BlobChange(sequence: 7, store: "photos", kind: .removed(identifier: "2024/cat.jpg"), date: date, reason: reason)
            let (event, data) = ChangeEventJSON.encode(change)
            #expect(event == name)
            #expect(text(data) == #"{"store":"photos","identifier":"2024/cat.jpg","date":"2026-11-23T00:08:29.001Z"}"#)
            #expect(try ChangeEventJSON.decode(event: event, id: "7", data: text(data)) == .change(change))
        }
    }

    @Test func theStoreListCarriesThePolicyOfOpenStores() throws {
        var open = StoreListJSON.Entry(name: "photos", open: true, statistics: StoreStatistics(count: 1, bytes: 2))
        open.policy = StorePolicy(maximumBytes: 1024)
        let bytes = StoreListJSON.encode([StoreListJSON.Entry(name: "archive", open: false), open])
        #expect(text(bytes).contains(#"{"name":"photos","open":true,"count":1,"bytes":2,"policy":{"maxBytes":1024,"maxCount":null,"defaultTTL":null}}"#))
        let decoded = try StoreListJSON.decodeWithPolicies(bytes)
        #expect(decoded.map(\.policy) == [nil, StorePolicy(maximumBytes: 1024)])
    }

    @Test func theStorePathNamesOneStore() throws {
        #expect(try Route(encodedPath: ArraySlice("/v1/stores/photos".utf8)) == .store(store: "photos"))
        #expect(Route.store(store: "a b").target == "/v1/stores/a%20b")
        #expect(Route.store(store: "s").allowedMethods == "GET, HEAD, PUT")
        #expect(ErrorCode.invalidPolicy.status == .badRequest)
    }
}
