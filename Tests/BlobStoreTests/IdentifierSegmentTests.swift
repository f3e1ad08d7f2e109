import BlobStore
import Testing

/// The rule blobd adds for identifiers in URLs: no empty, `.` or `..` segment between slashes.
@Suite("Identifier segments in URLs")
struct IdentifierSegmentTests {
    @Test("refused, with the offset of the segment", arguments: [
        ("a//b", 2), ("a/./b", 2), ("a/../b", 2), ("a/", 2), ("/a", 0), (".", 0), ("..", 0), ("a/.", 2), ("a/..", 2),
        ("./a", 0), ("../a", 0), ("/", 0), ("x/y//", 4),
    ])
    func refused(identifier: String, offset: Int) {
        #expect(BlobIdentifier.unaddressableSegment(in: identifier) == .unaddressableSegment(byteOffset: offset))
        #expect(BlobIdentifier.urlViolation(in: identifier) == .unaddressableSegment(byteOffset: offset))
        // The embedded store's own rule takes them: they are names there.
        #expect(BlobIdentifier.violation(in: identifier) == nil)
    }

    @Test("dots inside a segment are ordinary", arguments: ["...", "a/.b", "a/b.", "..a/b..", ".hidden", "a.b/c", "é/..é", "a"])
    func accepted(identifier: String) {
        #expect(BlobIdentifier.urlViolation(in: identifier) == nil)
    }

    @Test("the other rules come first")
    func order() {
        #expect(BlobIdentifier.urlViolation(in: "") == .empty)
        #expect(BlobIdentifier.urlViolation(in: "a\n//") == .controlCharacter(scalar: 0x0A, byteOffset: 1))
        #expect(String(describing: BlobIdentifier.Rule.unaddressableSegment(byteOffset: 3)).contains("segment at byte 3"))
    }
}
