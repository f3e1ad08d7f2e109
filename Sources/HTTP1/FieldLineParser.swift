/// The second pass over a complete head: splits field lines into names and values.
///
/// Runs only after ``HeadScanner`` has found the end of the head, which guarantees that every LF is
/// preceded by CR and that the head ends in CR LF CR LF. Every loop below stops at a CR at the
/// latest, so none needs a bounds check against the buffer's end; a CR that is not followed by LF is
/// rejected here.
enum FieldLineParser {
    /// Parses the field lines in `buffer[start..<end]` (`end` is the CR of the final empty line).
    ///
    /// Positions are recorded relative to `origin`, where the copied head will begin.
    /// Framing-relevant fields are interpreted into `framing` as they go by.
    @inline(__always)
    static func parse(
        _ buffer: UnsafeRawBufferPointer, from start: Int, to end: Int, origin: Int,
        into fields: inout [HTTPHeaders.Field], framing: inout FramingFields
    ) throws(HTTPParseError) {
        let bytes = buffer.bytePointer
        // Word loads may read past a line, never past the head's final LF.
        let loadLimit = end &+ 2
        var lineStart = start
        while lineStart < end {
            if isWhitespace(bytes[lineStart]) { throw .obsoleteLineFolding }

            var index = lineStart
            while isTokenByte(bytes[index]) { index &+= 1 }
            let nameEnd = index
            guard bytes[index] == ASCII.colon else {
                throw nameError(bytes, at: index, nameIsEmpty: nameEnd == lineStart)
            }
            guard nameEnd > lineStart else { throw .invalidHeaderName }

            index &+= 1
            while isWhitespace(bytes[index]) { index &+= 1 }
            let valueStart = index
            // Skip eight ordinary bytes at a time; stop at the first control byte (or DEL), which
            // is the line's CR unless the value holds a tab or something invalid.
            while true {
                if index &+ 8 <= loadLimit {
                    let controls = SWAR.controls(SWAR.load(bytes, index))
                    if controls == 0 {
                        index &+= 8
                        continue
                    }
                    index &+= SWAR.firstByte(controls)
                }
                let byte = bytes[index]
                if byte == ASCII.carriageReturn { break }
                guard isFieldValueByte(byte) else { throw .invalidHeaderValue }
                index &+= 1
            }
            guard bytes[index &+ 1] == ASCII.lineFeed else { throw .invalidLineEnding }
            var valueEnd = index
            while valueEnd > valueStart && isWhitespace(bytes[valueEnd &- 1]) { valueEnd &-= 1 }

            let known = KnownHeader.classify(bytes + lineStart, count: nameEnd &- lineStart)
            if known != 0 {
                try framing.interpret(known, UnsafeRawBufferPointer(start: bytes + valueStart, count: valueEnd &- valueStart))
            }
            fields.append(
                HTTPHeaders.Field(
                    nameStart: Int32(truncatingIfNeeded: lineStart &- origin),
                    nameEnd: Int32(truncatingIfNeeded: nameEnd &- origin),
                    valueStart: Int32(truncatingIfNeeded: valueStart &- origin),
                    valueEnd: Int32(truncatingIfNeeded: valueEnd &- origin),
                    known: known))
            lineStart = index &+ 2  // Past CR LF.
        }
    }

    /// Names the problem with a field name that stopped at `index` instead of at a colon.
    private static func nameError(_ bytes: UnsafePointer<UInt8>, at index: Int, nameIsEmpty: Bool) -> HTTPParseError {
        var index = index
        let byte = bytes[index]
        if byte == ASCII.carriageReturn && bytes[index &+ 1] != ASCII.lineFeed { return .invalidLineEnding }
        // `Name : value` is rejected by name, because lenient parsers strip the space and read a
        // different field than strict ones (RFC 9112 §5.1).
        while isWhitespace(bytes[index]) { index &+= 1 }
        if bytes[index] == ASCII.colon && !nameIsEmpty && isWhitespace(byte) { return .whitespaceBeforeColon }
        return .invalidHeaderName
    }
}
