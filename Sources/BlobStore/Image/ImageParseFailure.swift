/// Why bytes were not accepted as an image.
///
/// `reason` is a human sentence that names the format and what was wrong, such as
/// "no known image signature (first bytes 3c 68 74 6d)" or "PNG header truncated: 20 of 24 bytes",
/// because it is shown to the client that uploaded the blob.
package struct ImageParseFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The sentence explaining the rejection.
    package var reason: String

    /// Creates a failure; parsers build these so every rejection carries its own explanation.
    package init(reason: String) {
        self.reason = reason
    }

    /// The reason itself, so interpolating a failure into a message reads naturally.
    package var description: String { reason }
}

extension ImageParseFailure {
    /// The common shape of "the bytes stop before the field we need", kept uniform across formats.
    static func truncated(_ format: String, _ what: String, have: Int, need: Int) -> ImageParseFailure {
        ImageParseFailure(reason: "\(format) \(what) truncated: \(have) of \(need) bytes")
    }
}
