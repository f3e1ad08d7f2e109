// Appending to a caller's reusable `[UInt8]` without building intermediate Strings.

extension [UInt8] {
    /// Appends the UTF-8 bytes of a compile-time constant: a pointer copy, no String involved.
    @inline(__always)
    mutating func append(staticString: StaticString) {
        append(contentsOf: UnsafeBufferPointer(start: staticString.utf8Start, count: staticString.utf8CodeUnitCount))
    }

    /// Appends the decimal digits of a non-negative integer.
    @inline(__always)
    package mutating func appendDecimal(_ value: UInt64) {
        // Digits come out least significant first: fill a stack buffer from its end, then copy once.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var position = 20
            var remaining = value
            repeat {
                position &-= 1
                digits[position] = ASCII.zero &+ UInt8(truncatingIfNeeded: remaining % 10)
                remaining /= 10
            } while remaining != 0
            append(contentsOf: UnsafeBufferPointer(rebasing: digits[position..<20]))
        }
    }

    /// Appends the uppercase hexadecimal digits of a value, without leading zeros.
    @inline(__always)
    mutating func appendHexadecimal(_ value: UInt64) {
        var shift = 60
        while shift > 0 && (value &>> UInt64(shift)) & 0xF == 0 { shift &-= 4 }
        while shift >= 0 {
            append(hexDigit(UInt8(truncatingIfNeeded: (value &>> UInt64(shift)) & 0xF)))
            shift &-= 4
        }
    }

    /// Appends CR LF.
    @inline(__always)
    mutating func appendCRLF() {
        append(staticString: "\r\n")
    }

    /// Appends the `: ` between a field name and its value.
    @inline(__always)
    mutating func appendColonSpace() {
        append(staticString: ": ")
    }
}

extension [UInt8] {
    /// Appends pieces as one line with a single `append(contentsOf:)`.
    ///
    /// Each `Array.append(contentsOf:)` has a fixed cost (capacity and uniqueness checks, generic
    /// copying) of a hundred-odd instructions, far more than copying a short piece, so a line is
    /// assembled on the stack first and appended once.
    @inline(__always)
    mutating func appendLine(
        _ first: UnsafeBufferPointer<UInt8>, _ separator: StaticString, _ second: UnsafeBufferPointer<UInt8>
    ) {
        let total = first.count &+ separator.utf8CodeUnitCount &+ second.count &+ 2
        // A constant capacity: with a computed one the temporary buffer comes from malloc, once per line.
        guard total <= 256 else {
            append(contentsOf: first)
            append(contentsOf: UnsafeBufferPointer(start: separator.utf8Start, count: separator.utf8CodeUnitCount))
            append(contentsOf: second)
            appendCRLF()
            return
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { line in
            var position = 0
            func copy(_ piece: UnsafeBufferPointer<UInt8>) {
                guard let base = piece.baseAddress, !piece.isEmpty else { return }
                (line.baseAddress! + position).initialize(from: base, count: piece.count)
                position &+= piece.count
            }
            copy(first)
            copy(UnsafeBufferPointer(start: separator.utf8Start, count: separator.utf8CodeUnitCount))
            copy(second)
            line[position] = ASCII.carriageReturn
            line[position &+ 1] = ASCII.lineFeed
            append(contentsOf: UnsafeBufferPointer(rebasing: line[..<total]))
        }
    }

    /// Appends `name: value` CR LF, sanitizing the value (see ``appendSanitizedValue(_:)-(String)``).
    mutating func appendFieldLine(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        let trimmed = trimmedValue(value)
        if allFieldValueBytes(trimmed) {
            appendLine(name, ": ", trimmed)
        } else {
            append(contentsOf: name)
            appendColonSpace()
            for byte in trimmed { append(isFieldValueByte(byte) ? byte : ASCII.space) }
            appendCRLF()
        }
    }

    /// Appends `name: value` CR LF for a String value, read in place when it is native UTF-8.
    mutating func appendFieldLine(name: UnsafeBufferPointer<UInt8>, value: String) {
        let done = value.utf8.withContiguousStorageIfAvailable { appendFieldLine(name: name, value: $0) } != nil
        if !done { Array(value.utf8).withUnsafeBufferPointer { appendFieldLine(name: name, value: $0) } }
    }

    /// Appends a field value or reason phrase so that it cannot break the head.
    ///
    /// Surrounding whitespace is dropped (a parser drops it too, so the value reads back unchanged)
    /// and control bytes, CR and LF included, become spaces.
    mutating func appendSanitizedValue(_ value: String) {
        // Native Strings are contiguous UTF-8, so this reads the value in place without copying.
        let done = value.utf8.withContiguousStorageIfAvailable { appendSanitizedValue($0) } != nil
        if !done { Array(value.utf8).withUnsafeBufferPointer { appendSanitizedValue($0) } }
    }

    /// Appends a field value given as bytes; see ``appendSanitizedValue(_:)-(String)``.
    mutating func appendSanitizedValue(_ utf8: UnsafeBufferPointer<UInt8>) {
        let trimmed = trimmedValue(utf8)
        if allFieldValueBytes(trimmed) {
            append(contentsOf: trimmed)  // The usual case: one bulk copy.
        } else {
            for byte in trimmed { append(isFieldValueByte(byte) ? byte : ASCII.space) }
        }
    }
}

/// Whether every byte may stand in a field value, eight at a time: a response writes half a dozen
/// values per request, and a test per byte was a large part of writing a header line
/// (`Benchmarks/scripts/instructions get` counts a GET's instructions).
@inline(__always)
private func allFieldValueBytes(_ value: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let base = value.baseAddress else { return true }
    let count = value.count
    var index = 0
    while index &+ 8 <= count {
        // No flag means no control byte; a flag may be HTAB (allowed) or a borrow's echo: look closer.
        if SWAR.controls(SWAR.load(base, index)) != 0 {
            for offset in index..<(index &+ 8) where !isFieldValueByte(base[offset]) { return false }
        }
        index &+= 8
    }
    while index < count {
        if !isFieldValueByte(base[index]) { return false }
        index &+= 1
    }
    return true
}

/// `value` without the leading and trailing bytes that a parser would not read back.
@inline(__always)
private func trimmedValue(_ value: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
    var start = 0
    var end = value.count
    while start < end && isBlankInValue(value[start]) { start &+= 1 }
    while end > start && isBlankInValue(value[end &- 1]) { end &-= 1 }
    return UnsafeBufferPointer(rebasing: value[start..<end])
}

/// Whitespace, or a control byte that sanitizing would turn into whitespace.
@inline(__always)
private func isBlankInValue(_ byte: UInt8) -> Bool {
    isWhitespace(byte) || !isFieldValueByte(byte)
}
