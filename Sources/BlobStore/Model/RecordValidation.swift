import Foundation

/// Checks and explains JSON records.
enum RecordValidation {
    /// The largest record a put validates, in bytes (the file store reads the whole document into
    /// memory to check it).
    static let maximumByteCount: Int64 = 64 * 1024 * 1024

    /// Why `data` is not a JSON text under RFC 8259 (see ``JSONValidator`` for the exact rules),
    /// or `nil` if it is one.
    static func violation(in data: Data) -> String? {
        let failure = data.withUnsafeBytes { JSONValidator.violation(in: $0) }
        return failure.map { "not valid JSON: \($0)" }
    }

    /// A readable account of a JSON decoding error: what was wrong and where.
    static func describe(_ error: any Error) -> String {
        guard let decoding = error as? DecodingError else {
            let nsError = error as NSError
            return (nsError.userInfo[NSDebugDescriptionErrorKey] as? String) ?? nsError.localizedDescription
        }
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            return keys.isEmpty ? "the top level" : keys.joined(separator: ".")
        }
        switch decoding {
        case .typeMismatch(let type, let context):
            return "type mismatch at \(path(context)): expected \(type); \(context.debugDescription)"
        case .valueNotFound(let type, let context):
            return "missing value at \(path(context)): expected \(type)"
        case .keyNotFound(let key, let context):
            return "missing key '\(key.stringValue)' at \(path(context))"
        case .dataCorrupted(let context):
            return "data corrupted at \(path(context)): \(context.debugDescription)"
        @unknown default:
            return "\(decoding)"
        }
    }
}
