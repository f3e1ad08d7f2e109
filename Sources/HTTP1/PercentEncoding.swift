/// Why percent-decoding failed.
package enum PercentDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A `%` not followed by two hexadecimal digits.
    case malformedEscape
    /// The bytes decode to a NUL (`%00`), which no path or name may contain: it ends C strings.
    case nulByte

    /// Always 400: the client sent a target it cannot mean.
    package var statusCode: Int { 400 }

    /// A stable, short, machine-readable name.
    package var code: String {
        switch self {
        case .malformedEscape: "bad_percent_escape"
        case .nulByte: "encoded_nul"
        }
    }

    /// The machine code and status.
    package var description: String { "\(code) (400)" }
}

/// Percent-decoding of request targets and percent-encoding for building them (RFC 3986 §2.1).
///
/// Decoding returns bytes, not a String: a decoded path may be any bytes, and whether they must be
/// UTF-8 is the caller's policy, not the codec's.
package enum PercentEncoding {
    // MARK: Decoding

    /// Decodes `%XX` escapes; `+` stays `+` (RFC 3986 gives it no meaning, so neither do paths or queries here).
    ///
    /// - Throws: ``PercentDecodingError/malformedEscape`` for a `%` without two hex digits,
    ///   ``PercentDecodingError/nulByte`` if the result would contain NUL.
    package static func decode(_ encoded: UnsafeRawBufferPointer) throws(PercentDecodingError) -> [UInt8] {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(encoded.count)
        try decode(encoded, into: &decoded)
        return decoded
    }

    /// Decodes `%XX` escapes in `encoded`.
    package static func decode(_ encoded: ArraySlice<UInt8>) throws(PercentDecodingError) -> [UInt8] {
        // withUnsafeBytes rethrows untyped errors, so carry the typed result out of the closure.
        let result = encoded.withUnsafeBytes { raw in
            Result { () throws(PercentDecodingError) in try decode(raw) }
        }
        return try result.get()
    }

    /// Decodes `%XX` escapes in the UTF-8 of `encoded`.
    package static func decode(_ encoded: String) throws(PercentDecodingError) -> [UInt8] {
        try decode(ArraySlice(encoded.utf8))
    }

    /// Appends the decoding of `encoded` to `output`. `+` is kept: HTML form encoding's `+` for a
    /// space is not URI syntax, and decoding it would turn `type=image/svg+xml` into `image/svg xml`.
    static func decode(_ encoded: UnsafeRawBufferPointer, into output: inout [UInt8]) throws(PercentDecodingError) {
        guard let base = encoded.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        let count = encoded.count
        // Runs of plain bytes are appended whole: a path is mostly plain, and appending byte by byte
        // showed in the daemon's per-GET profile (`Benchmarks/scripts/instructions get`).
        var runStart = 0
        var index = 0
        while index < count {
            let byte = base[index]
            guard byte == ASCII.percent || byte == 0 else {
                index &+= 1
                continue
            }
            output.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: index &- runStart))
            switch byte {
            case 0:
                throw .nulByte
            default:
                guard index &+ 2 < count, let high = hexValue(base[index &+ 1]), let low = hexValue(base[index &+ 2])
                else { throw .malformedEscape }
                let decoded = high &<< 4 | low
                if decoded == 0 { throw .nulByte }
                output.append(decoded)
                index &+= 3
            }
            runStart = index
        }
        output.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: count &- runStart))
    }

    // MARK: Encoding

    /// Appends `bytes` to `output`, escaping every byte outside RFC 3986's unreserved set
    /// (`A–Z a–z 0–9 - . _ ~`) and, when `keepingSlash` is true, `/`.
    ///
    /// Escaping this much is always safe: a decoder turns any escape back into the same byte.
    package static func append(encoding bytes: UnsafeRawBufferPointer, keepingSlash: Bool = true, into output: inout [UInt8]) {
        for byte in bytes {
            if isUnreserved(byte) || (keepingSlash && byte == ASCII.slash) {
                output.append(byte)
            } else {
                output.append(ASCII.percent)
                output.append(hexDigit(byte &>> 4))
                output.append(hexDigit(byte & 0xF))
            }
        }
    }

    /// `bytes` percent-encoded as a String, ready to put in a target.
    package static func encode(_ bytes: [UInt8], keepingSlash: Bool = true) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        bytes.withUnsafeBytes { append(encoding: $0, keepingSlash: keepingSlash, into: &output) }
        return String(decoding: output, as: UTF8.self)
    }

    /// The UTF-8 of `string` percent-encoded, ready to put in a target.
    package static func encode(_ string: String, keepingSlash: Bool = true) -> String {
        encode(Array(string.utf8), keepingSlash: keepingSlash)
    }

    @inline(__always)
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2D, 0x2E, 0x5F, 0x7E: true
        default: false
        }
    }
}
