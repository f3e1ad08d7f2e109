@testable import BlobServer
import Foundation
import Testing

/// Pure parts of the server: routes, ranges, dates, JSON.
struct UnitTests {
    @Test func routes() {
        #expect(Route(decodedPath: Array("/v1/health".utf8)) == .health)
        #expect(Route(decodedPath: Array("/v1/stores".utf8)) == .stores)
        #expect(Route(decodedPath: Array("/v1/stores/s/blobs".utf8)) == .blobs(store: "s"))
        #expect(Route(decodedPath: Array("/v1/stores/s/blobs/a/b/c".utf8)) == .blob(store: "s", identifier: "a/b/c"))
        #expect(Route(decodedPath: Array("/v1/stores/s".utf8)) == nil)
        #expect(Route(decodedPath: Array("/v1/other".utf8)) == nil)
    }

    @Test func byteRanges() {
        #expect(ByteRange.parse("bytes=0-0", size: 10) == .satisfiable(0..<1))
        #expect(ByteRange.parse("bytes=5-100", size: 10) == .satisfiable(5..<10))
        #expect(ByteRange.parse("bytes=-4", size: 10) == .satisfiable(6..<10))
        #expect(ByteRange.parse("bytes=-40", size: 10) == .satisfiable(0..<10))
        #expect(ByteRange.parse("bytes=10-", size: 10) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=-0", size: 10) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=0-1,3-4", size: 10) == .ignore)
        #expect(ByteRange.parse("items=0-1", size: 10) == .ignore)
        #expect(ByteRange.parse("bytes=5-2", size: 10) == .ignore)
    }

    @Test func dates() {
        let date = Date(timeIntervalSince1970: 784_111_777.5)
        #expect(HTTPDates.imfFixdate(date) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDates.rfc3339(date) == "1994-11-06T08:49:37.500Z")
    }

    @Test func jsonEscaping() {
        let bytes = JSONWriter.error(code: "x", message: "a\"b\\c\nd\u{1}")
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"error":{"code":"x","message":"a\"b\\c\nd\u0001"}}"#)
    }
}

/// Who may connect.
struct PeerPolicyTests {
    @Test func ownUserRootAndAllowedGroupOnly() {
        let policy = PeerPolicy(ownUserID: 1000, allowedGroup: 50)
        #expect(policy.allows(userID: 1000, groupID: 1000))
        #expect(policy.allows(userID: 0, groupID: 0))
        #expect(policy.allows(userID: 1001, groupID: 50))
        #expect(!policy.allows(userID: 1001, groupID: 1001))
        #expect(!PeerPolicy(ownUserID: 1000, allowedGroup: nil).allows(userID: 1001, groupID: 50))
    }
}
