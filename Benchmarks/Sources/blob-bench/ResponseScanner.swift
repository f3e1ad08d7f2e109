/// The few facts the load generator needs from an HTTP/1.1 response head, read byte by byte.
///
/// Deliberately minimal (no header table, no strings): the generator shares the 2 cores with the
/// server it measures, so every microsecond it spends is taken from the server. Both servers under
/// test frame every response with `Content-Length` (or send none on 204/304), which is all it handles.
enum ResponseScanner {
    /// What a complete head says.
    struct Head {
        /// The status code.
        var status: Int
        /// Body bytes that follow the head.
        var contentLength: Int
    }

    /// Why a head cannot be used.
    enum Problem: Error {
        /// Not `HTTP/1.x NNN …`.
        case badStatusLine
        /// A status that normally has a body but no `Content-Length` (chunked or close-delimited).
        case noContentLength
    }

    /// The index just past the `\r\n\r\n` that ends the head, searching `bytes[from..<to]`; -1 if absent.
    /// `from` may start up to 3 bytes before new data so a terminator split across reads is found.
    @inline(__always)
    static func headEnd(_ bytes: UnsafePointer<UInt8>, from: Int, to: Int) -> Int {
        var index = from + 3
        while index < to {
            // Step on the last byte of the terminator; most positions are rejected by one compare.
            if bytes[index] == 0x0A {
                if bytes[index - 1] == 0x0D, bytes[index - 2] == 0x0A, bytes[index - 3] == 0x0D { return index + 1 }
                index += 2
            } else {
                index += 1
            }
        }
        return -1
    }

    /// Reads the status code and `Content-Length` of the head `bytes[0..<length]` (which ends with the blank line).
    static func parse(_ bytes: UnsafePointer<UInt8>, length: Int) throws(Problem) -> Head {
        // "HTTP/1.1 200 …": the code is always at offsets 9–11.
        guard length >= 16, bytes[0] == 0x48, bytes[4] == 0x2F, bytes[8] == 0x20 else { throw .badStatusLine }
        var status = 0
        for offset in 9...11 {
            let digit = Int(bytes[offset]) - 0x30
            guard digit >= 0, digit <= 9 else { throw .badStatusLine }
            status = status * 10 + digit
        }
        var lineStart = 0
        var contentLength = -1
        while lineStart < length {
            // The next line starts after the next LF.
            var lineEnd = lineStart
            while lineEnd < length, bytes[lineEnd] != 0x0A { lineEnd += 1 }
            if lineEnd - lineStart > contentLengthName.count, matchesContentLength(bytes + lineStart) {
                var index = lineStart + contentLengthName.count
                while index < lineEnd, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
                var value = 0
                while index < lineEnd, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                    value = value * 10 + Int(bytes[index] - 0x30)
                    index += 1
                }
                contentLength = value
                break
            }
            lineStart = lineEnd + 1
        }
        if contentLength < 0 {
            guard status == 204 || status == 304 || status < 200 else { throw .noContentLength }
            contentLength = 0
        }
        return Head(status: status, contentLength: contentLength)
    }

    /// `content-length:` in lowercase; header names compare case-insensitively.
    private static let contentLengthName: [UInt8] = Array("content-length:".utf8)

    /// Whether the line at `line` starts with `Content-Length:` in any case.
    @inline(__always)
    private static func matchesContentLength(_ line: UnsafePointer<UInt8>) -> Bool {
        // Only letters differ by case; OR-ing 0x20 lowercases them and leaves '-' and ':' as they are.
        for (offset, expected) in contentLengthName.enumerated() {
            let byte = line[offset]
            let folded = (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
            if folded != expected { return false }
        }
        return true
    }
}
