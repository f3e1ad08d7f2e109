@testable import BlobServer
import BlobStore
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// Pure parts of the server: ranges (field names are BlobProtocolTests' HeaderTests).
struct UnitTests {
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
