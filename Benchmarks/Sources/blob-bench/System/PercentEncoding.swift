/// Percent-encoding for request targets, as docs/PROTOCOL.md asks: unreserved bytes as they are,
/// every other byte as `%XX`.
enum PercentEncoding {
    /// `text` percent-encoded; with `keepingSlash`, `/` stays as it is (identifiers in paths).
    static func encode(_ text: String, keepingSlash: Bool = false) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where keepingSlash:
                result += "/"
            default:
                result += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return result
    }
}
