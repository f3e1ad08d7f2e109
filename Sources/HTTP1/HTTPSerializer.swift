/// Writes heads into a caller's reusable `[UInt8]`.
///
/// The building blocks (``appendStatusLine(_:version:reasonPhrase:into:)``,
/// ``appendHeader(_:_:into:)-(KnownHeader,String,_)``, ``appendEndOfHead(into:)``) let a server write a
/// response head straight into its output buffer without building an ``HTTPHeaders`` at all;
/// ``HTTPResponseHead/serialize(into:)`` and ``appendRequest(method:target:version:headers:into:)``
/// are the whole-head conveniences.
///
/// Field values are sanitized, never trusted: control bytes become spaces and surrounding
/// whitespace is dropped, so no value can end the head early. Names and targets must be valid;
/// an invalid one is a programming error and traps.
package enum HTTPSerializer {
    // MARK: Start lines

    /// Appends `HTTP/1.1 200 OK` CR LF (with the given status, version and phrase).
    package static func appendStatusLine(
        _ status: HTTPStatus, version: HTTPVersion = .http1_1, reasonPhrase: String? = nil,
        into buffer: inout [UInt8]
    ) {
        // "HTTP/1.x ddd " is 13 bytes; the three digits are written in place.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 13) { prefix in
            let versionText: StaticString = version == .http1_1 ? "HTTP/1.1 " : "HTTP/1.0 "
            prefix.baseAddress!.initialize(from: versionText.utf8Start, count: 9)
            let code = status.code
            prefix[9] = ASCII.zero &+ UInt8(truncatingIfNeeded: code / 100)
            prefix[10] = ASCII.zero &+ UInt8(truncatingIfNeeded: code / 10 % 10)
            prefix[11] = ASCII.zero &+ UInt8(truncatingIfNeeded: code % 10)
            prefix[12] = ASCII.space
            let prefixBytes = UnsafeBufferPointer(prefix)
            if let reasonPhrase {
                buffer.append(contentsOf: prefixBytes)
                buffer.appendSanitizedValue(reasonPhrase)
                buffer.appendCRLF()
            } else {
                let standard = status.standardReasonPhrase ?? ""
                buffer.appendLine(prefixBytes, "", UnsafeBufferPointer(start: standard.utf8Start, count: standard.utf8CodeUnitCount))
            }
        }
    }

    /// Appends `METHOD target HTTP/1.1` CR LF.
    ///
    /// `target` must be non-empty visible ASCII without `#`; build it with ``PercentEncoding``.
    package static func appendRequestLine(
        method: HTTPMethod, target: String, version: HTTPVersion = .http1_1, into buffer: inout [UInt8]
    ) {
        precondition(!target.isEmpty && target.utf8.allSatisfy(isTargetByte), "invalid request target \(target)")
        if case .other(let token) = method {
            precondition(!token.isEmpty && token.utf8.allSatisfy(isTokenByte), "invalid method \(token)")
        }
        method.appendToken(into: &buffer)
        buffer.append(ASCII.space)
        buffer.append(contentsOf: target.utf8)
        buffer.append(ASCII.space)
        version.append(into: &buffer)
        buffer.appendCRLF()
    }

    // MARK: Fields

    /// Appends `Name: value` CR LF for a well-known name.
    package static func appendHeader(_ name: KnownHeader, _ value: String, into buffer: inout [UInt8]) {
        buffer.appendFieldLine(name: name.nameBytes, value: value)
    }

    /// Appends `Name: value` CR LF for a well-known name, with the value given as bytes
    /// (an ETag kept as bytes, say); sanitized like a String value.
    package static func appendHeader(_ name: KnownHeader, bytes value: [UInt8], into buffer: inout [UInt8]) {
        value.withUnsafeBufferPointer { buffer.appendFieldLine(name: name.nameBytes, value: $0) }
    }

    /// Appends `Name: value` CR LF for a well-known name, with the value in a caller's buffer (a
    /// date or an ETag formatted on the stack); sanitized like a String value.
    package static func appendHeader(_ name: KnownHeader, bytes value: UnsafeBufferPointer<UInt8>, into buffer: inout [UInt8]) {
        buffer.appendFieldLine(name: name.nameBytes, value: value)
    }

    /// Appends `Name: value` CR LF for a constant name (which must be a token), with the value in a
    /// caller's buffer; sanitized like a String value.
    package static func appendHeader(name: StaticString, bytes value: UnsafeBufferPointer<UInt8>, into buffer: inout [UInt8]) {
        let nameBytes = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        assert(!nameBytes.isEmpty && nameBytes.allSatisfy(isTokenByte), "invalid header name \(name)")
        buffer.appendFieldLine(name: nameBytes, value: value)
    }

    /// Appends `Name: 1234` CR LF for a well-known name, formatting the number without a String.
    package static func appendHeader(_ name: KnownHeader, _ value: Int64, into buffer: inout [UInt8]) {
        precondition(value >= 0, "header values written as numbers must be non-negative")
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var position = 20
            var remaining = UInt64(value)
            repeat {
                position &-= 1
                digits[position] = ASCII.zero &+ UInt8(truncatingIfNeeded: remaining % 10)
                remaining /= 10
            } while remaining != 0
            buffer.appendLine(name.nameBytes, ": ", UnsafeBufferPointer(rebasing: digits[position..<20]))
        }
    }

    /// Appends `name: value` CR LF; `name` must be a non-empty token.
    package static func appendHeader(name: String, value: String, into buffer: inout [UInt8]) {
        precondition(!name.isEmpty && name.utf8.allSatisfy(isTokenByte), "invalid header name \(name)")
        Array(name.utf8).withUnsafeBufferPointer { buffer.appendFieldLine(name: $0, value: value) }
    }

    /// Appends every field of `headers`; their bytes were validated when they were parsed or appended,
    /// so each line is copied as it is.
    package static func appendHeaders(_ headers: HTTPHeaders, into buffer: inout [UInt8]) {
        headers.storage.withUnsafeBufferPointer { storage in
            for field in headers.fields {
                buffer.appendLine(
                    UnsafeBufferPointer(rebasing: storage[Int(field.nameStart)..<Int(field.nameEnd)]), ": ",
                    UnsafeBufferPointer(rebasing: storage[Int(field.valueStart)..<Int(field.valueEnd)]))
            }
        }
    }

    /// Appends the empty line that ends a head.
    package static func appendEndOfHead(into buffer: inout [UInt8]) {
        buffer.appendCRLF()
    }

    // MARK: Whole heads

    /// Appends a whole response head; the same as `head.serialize(into: &buffer)`.
    package static func appendResponse(_ head: HTTPResponseHead, into buffer: inout [UInt8]) {
        head.serialize(into: &buffer)
    }

    /// Appends a whole request head: request line, fields, empty line.
    ///
    /// Framing fields are the caller's to add (`Host`, `Content-Length` or `Transfer-Encoding: chunked`),
    /// because only the caller knows the body.
    package static func appendRequest(
        method: HTTPMethod, target: String, version: HTTPVersion = .http1_1, headers: HTTPHeaders,
        into buffer: inout [UInt8]
    ) {
        appendRequestLine(method: method, target: target, version: version, into: &buffer)
        appendHeaders(headers, into: &buffer)
        appendEndOfHead(into: &buffer)
    }
}
