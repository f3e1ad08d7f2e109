import Foundation

/// The body of every error response: `{"error":{"code":"<code>","message":"<sentence>"}}`.
package enum ErrorBody {
    /// The body for `code` and `message`.
    package static func encode(code: ErrorCode, message: String) -> [UInt8] {
        var out: [UInt8] = []
        out.append(contentsOf: #"{"error":{"code":"#.utf8)
        JSONText.appendString(code.rawValue, into: &out)
        out.append(contentsOf: #","message":"#.utf8)
        JSONText.appendString(message, into: &out)
        out.append(contentsOf: "}}".utf8)
        return out
    }

    private struct Envelope: Decodable {
        struct Body: Decodable {
            var code: String
            var message: String
        }
        var error: Body
    }

    /// The code (as sent: a daemon newer than this build may send codes ``ErrorCode`` lacks) and
    /// message of an error body, or `nil` when `body` is not one.
    package static func decode(_ body: [UInt8]) -> (code: String, message: String)? {
        guard let envelope = try? JSONDecoder().decode(Envelope.self, from: Data(body)) else { return nil }
        return (envelope.error.code, envelope.error.message)
    }
}
