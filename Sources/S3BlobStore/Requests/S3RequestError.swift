/// A request the backend was about to build is one S3 would refuse or misread; nothing was sent.
package enum S3RequestError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The key is empty or too long.
    case invalidKey(key: String, reason: String, operation: String)
    /// A header (a metadata name or value, a content type) cannot be sent as it is.
    case invalidHeader(name: String, reason: String, operation: String)
    /// A multipart argument is out of range (a part number, an empty part list).
    case invalidArgument(name: String, reason: String, operation: String)

    /// What was refused and why.
    package var description: String {
        switch self {
        case .invalidKey(let key, let reason, let operation):
            "\(operation): invalid key '\(key)': \(reason)"
        case .invalidHeader(let name, let reason, let operation):
            "\(operation): invalid header \(name): \(reason)"
        case .invalidArgument(let name, let reason, let operation):
            "\(operation): invalid \(name): \(reason)"
        }
    }
}
