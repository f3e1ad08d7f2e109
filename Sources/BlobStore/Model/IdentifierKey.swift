/// An identifier as a dictionary key that compares and hashes its UTF-8 bytes.
///
/// Swift's `String` equality is canonical equivalence, under which `"é"` precomposed and `"e"` with
/// a combining accent are equal; identifiers are byte strings (PROTOCOL.md, "Identifiers"), and those
/// two name two different blobs. Every in-memory index keyed by identifier uses this, not `String`.
struct IdentifierKey: Hashable, Sendable {
    let identifier: String

    init(_ identifier: String) { self.identifier = identifier }

    static func == (lhs: IdentifierKey, rhs: IdentifierKey) -> Bool {
        lhs.identifier.utf8.elementsEqual(rhs.identifier.utf8)
    }

    func hash(into hasher: inout Hasher) {
        var text = identifier
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(identifier.utf8.count)
    }
}

extension String {
    /// Whether the two name the same blob: the same UTF-8 bytes (not canonical equivalence).
    func isSameIdentifier(as other: String) -> Bool { utf8.elementsEqual(other.utf8) }
}
