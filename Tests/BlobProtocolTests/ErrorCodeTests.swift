import BlobProtocol
import BlobStore
import BlobSystem
import Foundation
import HTTP1
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import BlobClient

@Suite struct ErrorCodeTests {
    /// The statuses docs/PROTOCOL.md's "Errors" table gives each code.
    static let documented: [String: Set<Int>] = {
        var codes: [String: Set<Int>] = [:]
        for row in ProtocolDocument.tableRows(ProtocolDocument.section("## Errors")) where row.count == 3 {
            let statuses = row[0].split(separator: "/").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            for code in ProtocolDocument.codeSpans(row[1]) { codes[code, default: []].formUnion(statuses) }
        }
        return codes
    }()

    @Test func everyDocumentedCodeIsInTheEnumAndEveryCaseIsDocumented() {
        #expect(Self.documented.count >= 19, "the Errors table was not found or not parsed: \(Self.documented)")
        for code in Self.documented.keys { #expect(ErrorCode(rawValue: code) != nil, "PROTOCOL.md names `\(code)`, ErrorCode lacks it") }
        for code in ErrorCode.allCases {
            let statuses = Self.documented[code.rawValue]
            #expect(statuses != nil, "`\(code.rawValue)` is not in PROTOCOL.md's Errors table")
            #expect(statuses?.contains(code.status.code) == true, "`\(code.rawValue)` is sent with \(code.status.code), the table says \(statuses ?? [])")
        }
        // Only bad_request (the codec's statuses) and too_large's codec twin have more than one status.
        #expect(Self.documented.filter { $0.value.count > 1 }.keys.sorted() == ["bad_request"])
    }

    /// One error of every case a store throws, as blobd sends it, and the error its client rebuilds
    /// from the code, the message and the headers (`nil`: a `BlobClientError.http` with the code and status).
    static let wireErrors: [(sent: BlobStoreError, rebuilt: BlobStoreError?)] = [
        (.notFound(store: "s", identifier: "a"), .notFound(store: "s", identifier: "a")),
        (.invalidIdentifier(identifier: "a", rule: BlobIdentifier.unaddressableSegment(in: "a//b")!), nil),
        (.invalidStoreName(name: "s", reason: "must match [a-z0-9][a-z0-9._-]{0,62}"),
         .invalidStoreName(name: "s", reason: "must match [a-z0-9][a-z0-9._-]{0,62}")),
        (.preconditionFailed(store: "s", identifier: "a", expected: ETag(checksum: 1), actual: ETag(checksum: 2)),
         .preconditionFailed(store: "s", identifier: "a", expected: ETag(checksum: 1), actual: ETag(checksum: 2))),
        (.preconditionFailed(store: "s", identifier: "a", expected: ETag(checksum: 1), actual: nil),
         .preconditionFailed(store: "s", identifier: "a", expected: ETag(checksum: 1), actual: nil)),
        (.notAnImage(store: "s", identifier: "a", reason: "no signature"), .notAnImage(store: "s", identifier: "a", reason: "no signature")),
        (.invalidRecord(store: "s", identifier: "a", reason: "trailing comma at byte 3 (line 1, column 4)"),
         .invalidRecord(store: "s", identifier: "a", reason: "trailing comma at byte 3 (line 1, column 4)")),
        (.invalidMetadata(store: "s", identifier: "a", reason: "key 'A' is not lowercase"),
         .invalidMetadata(store: "s", identifier: "a", reason: "key 'A' is not lowercase")),
        (.tooLarge(what: "blob 'a'", limit: 1024, actual: 2048), .tooLarge(what: "blob 'a' for store 's'", limit: 1024, actual: 2048)),
        (.invalidQuery(store: "s", reason: "limit must be 1...10000 (got 0)"), .invalidQuery(store: "s", reason: "limit must be 1...10000 (got 0)")),
        (.rangeNotSatisfiable(store: "s", identifier: "a", size: 10), .rangeNotSatisfiable(store: "s", identifier: "a", size: 10)),
        (.io(operation: "open", path: "/r/s/b/1/a", errno: Errno(rawValue: EIO)), nil),
        (.io(operation: "write", path: "/r/s/tmp", errno: .noSpace), nil),
        (.storeLocked(path: "/r/s/.lock", holder: "pid 4242"), .storeLocked(path: "store 's' (served by blobd)", holder: "pid 4242")),
        (.corrupt(path: "/r/s/b/1/a", reason: "bad header"), .corrupt(path: "store 's' (served by blobd)", reason: "corrupt file /r/s/b/1/a: bad header")),
        (.unsupportedFormat(path: "/r/s", found: "9"), .unsupportedFormat(path: "store 's' (served by blobd)", found: "9")),
    ]

    /// What blobd sends for a store error (code, status, message, headers) comes back through the
    /// client as the error the embedded store throws, or as `BlobClientError.http` with the same
    /// status and code where the client cannot rebuild one.
    @Test(arguments: wireErrors.indices) func storeErrorsRoundTripThroughTheWire(_ index: Int) throws {
        let (error, expected) = Self.wireErrors[index]
        let code = ErrorCode(error)
        #expect(ErrorCode(rawValue: code.rawValue) == code)
        let body = ErrorBody.encode(code: code, message: error.description)
        var headers = HTTPHeaders()
        if case .preconditionFailed(_, _, _, let actual?) = error { headers.append(.etag, value: MetadataHeaders.etagValue(actual)) }
        if case .rangeNotSatisfiable(_, _, let size) = error { headers.append(.contentRange, value: "bytes */\(size)") }
        var context = ErrorMapping.Context(store: "s", identifier: "a")
        if case .preconditionFailed(_, _, let expected?, _) = error { context.condition = .ifMatch(expected) }
        let rebuilt = ErrorMapping.error(status: code.status.code, headers: headers, body: body, context: context)
        if let expected {
            #expect(rebuilt as? BlobStoreError == expected, "\(code.rawValue)")
        } else if case .http(let status, let sent, _)? = rebuilt as? BlobClientError {
            #expect(status == code.status.code && sent == code.rawValue)
        } else {
            Issue.record("\(code.rawValue) came back as \(rebuilt)")
        }
    }

    /// The client rebuilds an invalid identifier from the identifier it sent, by the same rule as blobd.
    @Test func invalidIdentifiersAreRebuiltFromTheRequest() {
        let rule = BlobIdentifier.unaddressableSegment(in: "a//b")!
        let sent = BlobStoreError.invalidIdentifier(identifier: "a//b", rule: rule)
        let rebuilt = ErrorMapping.error(
            status: 400, headers: nil, body: ErrorBody.encode(code: ErrorCode(sent), message: sent.description),
            context: .init(store: "s", identifier: "a//b"))
        #expect(rebuilt as? BlobStoreError == sent)
    }

    @Test func noSpaceAndQuotaAreInsufficientStorage() {
        #expect(ErrorCode(BlobStoreError.io(operation: "write", path: "p", errno: .noSpace)) == .insufficientStorage)
        #expect(ErrorCode(BlobStoreError.io(operation: "write", path: "p", errno: Errno(rawValue: EDQUOT))) == .insufficientStorage)
        #expect(ErrorCode(BlobStoreError.io(operation: "open", path: "p", errno: Errno(rawValue: EIO))) == .ioError)
    }

    /// Codes no store error maps to come back as `BlobClientError.http` with their status and code.
    @Test func codesWithoutAStoreErrorBecomeHTTPErrors() {
        for code in ErrorCode.allCases {
            let context = ErrorMapping.Context(store: nil)
            guard code.storeError(message: "m", headers: nil, context: context) == nil else { continue }
            let error = ErrorMapping.error(status: code.status.code, headers: nil, body: ErrorBody.encode(code: code, message: "m"), context: context)
            guard case .http(let status, let sent, _)? = error as? BlobClientError else {
                Issue.record("\(code.rawValue) → \(error)")
                continue
            }
            #expect(status == code.status.code && sent == code.rawValue)
        }
        // Every code the store has no error for is among them (and an identifier the client finds valid).
        let unmapped = ErrorCode.allCases.filter { $0.storeError(message: "m", headers: nil, context: .init(store: "s", identifier: "a")) == nil }
        #expect(
            Set(unmapped) == [
                .badRequest, .invalidPolicy, .unsupportedPolicy, .forbidden, .methodNotAllowed, .ioError, .internalError, .insufficientStorage,
                .invalidIdentifier,
            ])
    }

    @Test func errorBodyIsTheDocumentedEnvelope() throws {
        let bytes = ErrorBody.encode(code: .badRequest, message: "a\"b\\c\nd\u{1}")
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"error":{"code":"bad_request","message":"a\"b\\c\nd\u0001"}}"#)
        let decoded = try #require(ErrorBody.decode(bytes))
        #expect(decoded.code == "bad_request" && decoded.message == "a\"b\\c\nd\u{1}")
        #expect(ErrorBody.decode(Array("<html>".utf8)) == nil)
        // A code this build does not know is kept as sent.
        #expect(ErrorBody.decode(Array(#"{"error":{"code":"new_code","message":"m"}}"#.utf8))?.code == "new_code")
    }
}
