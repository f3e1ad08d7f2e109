/// Signature V4's `UriEncode`: every byte of the UTF-8 except the unreserved `A-Z a-z 0-9 - . _ ~`
/// becomes `%XX` with uppercase hex digits. Paths keep `/`; query names and values encode it.
///
/// S3 differs from other services in encoding a path once (they encode it twice) and in never
/// normalising it. A space is `%20`, never `+`: the gateway reads a raw `+` in a query as a space.
package enum S3URIEncoding {
    /// Encodes a decoded path, keeping `/`; an empty path becomes `/`.
    package static func encodePath(_ path: String) -> String {
        path.isEmpty ? "/" : encode(path, keepingSlash: true)
    }

    /// Encodes a decoded query name or value (`/` included).
    package static func encodeQueryComponent(_ component: String) -> String {
        encode(component, keepingSlash: false)
    }

    /// Encodes `text`'s UTF-8 bytes.
    package static func encode(_ text: String, keepingSlash: Bool) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) || (keepingSlash && byte == UInt8(ascii: "/")) {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(HexDigits.uppercase(byte >> 4))
                output.append(HexDigits.uppercase(byte & 0x0f))
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    @inline(__always)
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default:
            false
        }
    }
}
