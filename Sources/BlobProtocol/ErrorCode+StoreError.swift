import BlobStore
import Foundation
import HTTP1

#if canImport(Glibc)
import Glibc
#endif

extension ErrorCode {
    /// The code blobd answers a store's error with.
    package init(_ error: BlobStoreError) {
        switch error {
        case .notFound: self = .notFound
        case .invalidIdentifier: self = .invalidIdentifier
        case .invalidStoreName: self = .invalidStoreName
        case .preconditionFailed: self = .preconditionFailed
        case .notAnImage: self = .notAnImage
        case .invalidRecord: self = .invalidRecord
        case .invalidMetadata: self = .invalidMetadata
        case .tooLarge: self = .tooLarge
        case .invalidQuery: self = .invalidQuery
        case .rangeNotSatisfiable: self = .rangeNotSatisfiable
        case .io(_, _, let errno) where errno.rawValue == ENOSPC || errno.rawValue == EDQUOT: self = .insufficientStorage
        case .io: self = .ioError
        case .storeLocked: self = .storeLocked
        case .corrupt: self = .corrupt
        case .unsupportedFormat: self = .unsupportedFormat
        case .backendUnavailable: self = .backendUnavailable
        }
    }

    /// What a request was about, to fill in the store, blob and condition of the error a client
    /// rebuilds from a response.
    package struct RequestContext: Sendable {
        /// The store the request named.
        package var store: String?
        /// The blob the request named.
        package var identifier: String?
        /// The request's write condition.
        package var condition: WriteCondition

        package init(store: String? = nil, identifier: String? = nil, condition: WriteCondition = .none) {
            self.store = store
            self.identifier = identifier
            self.condition = condition
        }
    }

    /// The error the embedded store would have thrown, rebuilt from an error response with this
    /// code, its `message` and `headers`; `nil` for codes that have no ``BlobStore/BlobStoreError``
    /// (`bad_request`, `forbidden`, `io_error`, …) or not enough context to build one.
    package func storeError(message: String, headers: HTTPHeaders?, context: RequestContext) -> BlobStoreError? {
        let store = context.store ?? "?"
        let identifier = context.identifier ?? ""
        let reason = ErrorCode.strippedReason(message, store: context.store)
        switch self {
        case .notFound where context.store != nil:
            return .notFound(store: store, identifier: identifier)
        case .preconditionFailed:
            let expected: ETag?
            if case .ifMatch(let tag) = context.condition { expected = tag } else { expected = nil }
            // blobd sends the current version's ETag with a 412 (none when the blob is absent).
            let actual = headers?.first(.etag).flatMap(ETag.init)
            return .preconditionFailed(store: store, identifier: identifier, expected: expected, actual: actual)
        case .notAnImage:
            return .notAnImage(store: store, identifier: identifier, reason: reason)
        case .invalidRecord:
            return .invalidRecord(store: store, identifier: identifier, reason: reason)
        case .invalidMetadata:
            return .invalidMetadata(store: store, identifier: identifier, reason: reason)
        case .invalidIdentifier:
            return BlobIdentifier.urlViolation(in: identifier).map { .invalidIdentifier(identifier: identifier, rule: $0) }
        case .invalidStoreName:
            // blobd's message is the store's own sentence about the name it was sent.
            let sentence = BlobStoreError.invalidStoreName(name: store, reason: "").description
            return .invalidStoreName(name: store, reason: message.hasPrefix(sentence) ? String(message.dropFirst(sentence.count)) : message)
        case .invalidQuery:
            return .invalidQuery(store: store, reason: reason)
        case .tooLarge:
            // blobd's message is the store's `tooLarge` sentence: "… N bytes exceeds the limit of M bytes".
            let numbers = ErrorCode.integers(in: message)
            let what = context.identifier.map { "blob '\($0)' for store '\(store)'" } ?? "request to store '\(store)'"
            return .tooLarge(
                what: what, limit: numbers.count >= 2 ? numbers[numbers.count - 1] : -1,
                actual: numbers.count >= 2 ? numbers[numbers.count - 2] : -1)
        case .rangeNotSatisfiable:
            // Content-Range: bytes */size
            let size = headers?.first(.contentRange).flatMap { $0.split(separator: "/").last }.flatMap { Int64($0) } ?? -1
            return .rangeNotSatisfiable(store: store, identifier: identifier, size: size)
        case .storeLocked:
            // blobd's message is its own `storeLocked` sentence: keep just the holder's pid from it.
            let holder = message.range(of: #"pid [0-9]+"#, options: .regularExpression).map { String(message[$0]) } ?? "unknown process"
            return .storeLocked(path: ErrorCode.servedPath(store: store), holder: holder)
        case .corrupt:
            return .corrupt(path: ErrorCode.servedPath(store: store), reason: reason)
        case .unsupportedFormat:
            // blobd's message is the store's sentence about its own path: keep the layout it found.
            let sentence = BlobStoreError.unsupportedFormat(path: "", found: "\u{0}").description.split(separator: "\u{0}")
            var found = message
            if sentence.count == 2, message.hasSuffix(sentence[1]), let start = message.range(of: sentence[0], options: .backwards) {
                found = String(message[start.upperBound..<message.index(message.endIndex, offsetBy: -sentence[1].count)])
            }
            return .unsupportedFormat(path: ErrorCode.servedPath(store: store), found: found)
        case .backendUnavailable:
            // blobd's message is the store's sentence: "store 's' cannot use its backend B: reason".
            let sentence = "store '\(store)' cannot use its backend "
            guard message.hasPrefix(sentence), let colon = message.range(of: ": ", range: message.index(message.startIndex, offsetBy: sentence.count)..<message.endIndex) else {
                return .backendUnavailable(store: store, backend: "(unknown)", reason: message)
            }
            return .backendUnavailable(
                store: store, backend: String(message[message.index(message.startIndex, offsetBy: sentence.count)..<colon.lowerBound]),
                reason: String(message[colon.upperBound...]))
        case .notFound, .badRequest, .invalidPolicy, .unsupportedPolicy, .forbidden, .methodNotAllowed, .ioError, .internalError, .insufficientStorage:
            return nil
        }
    }

    /// How a client's errors name a store's files, which only blobd sees: `store 's' (served by blobd)`.
    package static func servedPath(store: String) -> String { "store '\(store)' (served by blobd)" }

    /// The cause part of a daemon message that is a ``BlobStore/BlobStoreError`` description
    /// ("…store 's'…: cause"), else the message.
    package static func strippedReason(_ message: String, store: String?) -> String {
        guard let store, let named = message.range(of: "store '\(store)'"),
            let colon = message.range(of: ": ", range: named.upperBound..<message.endIndex)
        else { return message }
        return String(message[colon.upperBound...])
    }

    /// The non-negative integers in `text`, in order.
    static func integers(in text: String) -> [Int64] {
        text.split(whereSeparator: { !$0.isNumber }).compactMap { Int64($0) }
    }
}
