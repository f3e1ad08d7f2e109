/// The field lines of a head, in order, with duplicates kept.
///
/// Names and values live in one byte array; each field is four offsets into it plus its
/// ``KnownHeader`` tag. A parsed head therefore costs two allocations however many fields it has,
/// and reading a value as bytes (``valueBytes(at:)``, ``firstBytes(_:)``) copies nothing.
/// Name lookups ignore ASCII case, as field names are case-insensitive.
package struct HTTPHeaders: Sendable {
    /// Where one field's name and value sit in ``storage``.
    struct Field: Sendable {
        var nameStart: Int32
        var nameEnd: Int32
        var valueStart: Int32
        var valueEnd: Int32
        /// ``KnownHeader`` raw value, or 0.
        var known: UInt8
    }

    /// Bytes the fields point into. For a parsed head this is the whole head, start line included.
    var storage: [UInt8]
    var fields: [Field]

    /// Creates an empty set of fields.
    package init() {
        storage = []
        fields = []
    }

    init(storage: [UInt8], fields: [Field]) {
        self.storage = storage
        self.fields = fields
    }

    // MARK: Reading by position

    /// The field name at `index` as received (or appended), preserving case.
    package func name(at index: Int) -> String {
        String(decoding: nameBytes(at: index), as: UTF8.self)
    }

    /// The field value at `index`, without surrounding whitespace.
    ///
    /// Bytes that are not UTF-8 (obs-text) decode to U+FFFD; use ``valueBytes(at:)`` to see them.
    package func value(at index: Int) -> String {
        String(decoding: valueBytes(at: index), as: UTF8.self)
    }

    /// The name bytes at `index`, sharing this value's storage.
    package func nameBytes(at index: Int) -> ArraySlice<UInt8> {
        let field = fields[index]
        return storage[Int(field.nameStart)..<Int(field.nameEnd)]
    }

    /// The value bytes at `index`, sharing this value's storage.
    package func valueBytes(at index: Int) -> ArraySlice<UInt8> {
        let field = fields[index]
        return storage[Int(field.valueStart)..<Int(field.valueEnd)]
    }

    /// The well-known name of the field at `index`, if it has one.
    package func knownName(at index: Int) -> KnownHeader? {
        KnownHeader(rawValue: fields[index].known)
    }

    // MARK: Reading by name

    /// The value of the first field named `name`.
    package func first(_ name: KnownHeader) -> String? {
        firstBytes(name).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The value bytes of the first field named `name`, without copying.
    package func firstBytes(_ name: KnownHeader) -> ArraySlice<UInt8>? {
        firstIndex(of: name).map(valueBytes(at:))
    }

    /// The value of the first field whose name equals `name`, ignoring case.
    package func first(name: String) -> String? {
        firstIndex(of: name).map(value(at:))
    }

    /// The value of the first field whose name equals `name`, ignoring case.
    package subscript(name: String) -> String? { first(name: name) }

    /// The value of the first field named `name`.
    package subscript(name: KnownHeader) -> String? { first(name) }

    /// The values of every field named `name`, in order.
    package func values(_ name: KnownHeader) -> [String] {
        fields.indices.filter { fields[$0].known == name.rawValue }.map(value(at:))
    }

    /// The values of every field whose name equals `name` (ignoring case), in order.
    package func values(name: String) -> [String] {
        if let known = Self.knownHeader(named: name) { return values(known) }
        return fields.indices.filter { nameEquals(at: $0, name) }.map(value(at:))
    }

    /// Whether any field is named `name`.
    package func contains(_ name: KnownHeader) -> Bool { firstIndex(of: name) != nil }

    /// Whether any field's name equals `name`, ignoring case.
    package func contains(name: String) -> Bool { firstIndex(of: name) != nil }

    /// The position of the first field named `name`.
    package func firstIndex(of name: KnownHeader) -> Int? {
        let tag = name.rawValue
        var index = 0
        while index < fields.count {
            if fields[index].known == tag { return index }
            index &+= 1
        }
        return nil
    }

    /// The position of the first field whose name equals `name`, ignoring case.
    package func firstIndex(of name: String) -> Int? {
        if let known = Self.knownHeader(named: name) { return firstIndex(of: known) }
        return fields.indices.first { nameEquals(at: $0, name) }
    }

    // MARK: Helpers

    /// Classifies an arbitrary name so lookups by a known name use the tag.
    static func knownHeader(named name: String) -> KnownHeader? {
        var name = name
        return name.withUTF8 { utf8 in
            guard let base = utf8.baseAddress, utf8.allSatisfy(isTokenByte) else { return nil }
            return KnownHeader(rawValue: KnownHeader.classify(base, count: utf8.count))
        }
    }

    /// ASCII case-insensitive comparison of the name at `index` with `name`.
    func nameEquals(at index: Int, _ name: String) -> Bool {
        let field = fields[index]
        let length = Int(field.nameEnd - field.nameStart)
        guard name.utf8.count == length else { return false }
        var position = Int(field.nameStart)
        for byte in name.utf8 {
            if lowercased(storage[position]) != lowercased(byte) { return false }
            position &+= 1
        }
        return true
    }
}

/// Lowercases ASCII letters and leaves every other byte alone.
@inline(__always)
func lowercased(_ byte: UInt8) -> UInt8 {
    byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
}

extension HTTPHeaders: RandomAccessCollection {
    /// Positions are 0 ..< ``count``.
    package var startIndex: Int { 0 }
    /// One past the last field.
    package var endIndex: Int { fields.count }
    /// The name and value at `position`, as Strings.
    package subscript(position: Int) -> (name: String, value: String) {
        (name(at: position), value(at: position))
    }
}

extension HTTPHeaders: Equatable {
    /// Same fields in the same order; names compare ignoring case, values byte for byte.
    package static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for index in 0..<lhs.count {
            let (leftName, rightName) = (lhs.nameBytes(at: index), rhs.nameBytes(at: index))
            guard leftName.count == rightName.count,
                zip(leftName, rightName).allSatisfy({ lowercased($0) == lowercased($1) }),
                lhs.valueBytes(at: index).elementsEqual(rhs.valueBytes(at: index))
            else { return false }
        }
        return true
    }
}

extension HTTPHeaders: CustomStringConvertible {
    /// The fields as `Name: value` lines, for debugging.
    package var description: String {
        map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }
}
