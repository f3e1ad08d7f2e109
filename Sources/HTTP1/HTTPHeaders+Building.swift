/// Building fields for an outgoing head.
///
/// Values are made safe rather than rejected: leading and trailing whitespace is dropped (a parser
/// drops it too, so what is sent is what is read back) and every control byte, CR and LF included,
/// becomes a space, so no value can end the head early or smuggle in a field.
/// Names must be valid tokens; a bad name is a programming error and traps.
extension HTTPHeaders: ExpressibleByDictionaryLiteral {
    /// Creates fields from `["Name": "value", …]`, in order; repeated names are kept.
    package init(dictionaryLiteral elements: (String, String)...) {
        self.init()
        for (name, value) in elements { append(name: name, value: value) }
    }

    /// Appends a field with a well-known name.
    package mutating func append(_ name: KnownHeader, value: String) {
        let nameStart = storage.count
        storage.append(staticString: name.name)
        appendValue(value, nameStart: nameStart, known: name.rawValue)
    }

    /// Appends a field with a well-known name and a decimal value, without building a String.
    package mutating func append(_ name: KnownHeader, value: Int64) {
        precondition(value >= 0, "header values written as numbers must be non-negative")
        let nameStart = storage.count
        storage.append(staticString: name.name)
        let valueStart = storage.count
        storage.appendDecimal(UInt64(value))
        appendField(nameStart: nameStart, nameEnd: valueStart, valueStart: valueStart, known: name.rawValue)
    }

    /// Appends a field; `name` must be a non-empty token (RFC 9110 §5.1).
    package mutating func append(name: String, value: String) {
        let nameStart = storage.count
        storage.append(contentsOf: name.utf8)
        let nameEnd = storage.count
        let known = storage.withUnsafeBufferPointer { buffer -> UInt8 in
            let nameBytes = UnsafeBufferPointer(rebasing: buffer[nameStart..<nameEnd])
            precondition(!nameBytes.isEmpty && nameBytes.allSatisfy(isTokenByte), "invalid header name \(name)")
            return KnownHeader.classify(nameBytes.baseAddress!, count: nameBytes.count)
        }
        appendValue(value, nameStart: nameStart, known: known)
    }

    /// Removes every field named `name`.
    package mutating func remove(_ name: KnownHeader) {
        fields.removeAll { $0.known == name.rawValue }
    }

    /// Removes every field whose name equals `name`, ignoring case.
    package mutating func remove(name: String) {
        if let known = Self.knownHeader(named: name) { return remove(known) }
        var kept: [Field] = []
        for index in fields.indices where !nameEquals(at: index, name) { kept.append(fields[index]) }
        fields = kept
    }

    /// Replaces every field named `name` with one field holding `value`.
    package mutating func set(_ name: KnownHeader, value: String) {
        remove(name)
        append(name, value: value)
    }

    /// Replaces every field whose name equals `name` (ignoring case) with one field holding `value`.
    package mutating func set(name: String, value: String) {
        remove(name: name)
        append(name: name, value: value)
    }

    // MARK: Internals

    private mutating func appendValue(_ value: String, nameStart: Int, known: UInt8) {
        let nameEnd = storage.count
        storage.appendSanitizedValue(value)
        appendField(nameStart: nameStart, nameEnd: nameEnd, valueStart: nameEnd, known: known)
    }

    private mutating func appendField(nameStart: Int, nameEnd: Int, valueStart: Int, known: UInt8) {
        precondition(storage.count <= Int(Int32.max), "headers larger than 2 GiB")
        fields.append(
            Field(
                nameStart: Int32(nameStart), nameEnd: Int32(nameEnd),
                valueStart: Int32(valueStart), valueEnd: Int32(storage.count), known: known))
    }
}

