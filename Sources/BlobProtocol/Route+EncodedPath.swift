import BlobStore
import HTTP1

extension Route {
    /// The resource a percent-encoded request path names, with the rules of docs/PROTOCOL.md
    /// applied: the path is decoded first, then matched; a blob identifier must be valid UTF-8 and
    /// free of empty, `.` and `..` segments; an encoded NUL (`%00`) is refused as a broken
    /// store-name or identifier rule where it falls in one, and as a bad path elsewhere.
    ///
    /// The other rules of store names and identifiers (length, characters) are the store's, checked
    /// when it is called.
    package init(encodedPath: ArraySlice<UInt8>) throws(RouteError) {
        let path: [UInt8]
        do { path = try PercentEncoding.decode(encodedPath) } catch {
            if error == .nulByte, let (refusal, route) = Route.encodedNUL(in: encodedPath) { throw .invalidName(refusal, in: route) }
            throw .malformedPath(error)
        }
        guard let route = Route(decodedPath: path) else { throw .unknownPath }
        // `Route` decodes leniently (invalid UTF-8 becomes U+FFFD), which would store and serve
        // `%ff%fe` as the different identifier "\u{FFFD}\u{FFFD}". The store's rule is that an
        // identifier must be valid UTF-8; a store name with such bytes fails its own rule later.
        if case .blob(let store, let identifier) = route, StoreName.violation(in: store) == nil {
            let rule: BlobIdentifier.Rule?
            if !path.allSatisfy({ $0 < 0x80 }), String(validating: path, as: UTF8.self) == nil {
                rule = .invalidUTF8
            } else {
                rule = BlobIdentifier.unaddressableSegment(in: identifier)
            }
            if let rule { throw .invalidName(.invalidIdentifier(identifier: identifier, rule: rule), in: route) }
        }
        self = route
    }

    /// The broken rule of a path with an encoded NUL in a store name or a blob identifier (a
    /// control character); `nil` when the NUL is elsewhere or the path is malformed anyway.
    private static func encodedNUL(in encodedPath: ArraySlice<UInt8>) -> (BlobStoreError, Route)? {
        // A malformed escape anywhere makes the path bad_request, whichever comes first.
        var withoutNUL = Array(encodedPath)
        for index in withoutNUL.indices.dropLast(2)
        where withoutNUL[index] == UInt8(ascii: "%") && withoutNUL[index + 1] == UInt8(ascii: "0") && withoutNUL[index + 2] == UInt8(ascii: "0") {
            withoutNUL[index + 2] = UInt8(ascii: "1")
        }
        guard (try? PercentEncoding.decode(withoutNUL[...])) != nil else { return nil }
        // Routed on the still-encoded path: the `%00` is in the store name or in the identifier.
        guard let route = Route(decodedPath: Array(encodedPath)) else { return nil }
        let store: String
        switch route {
        case .blob(let name, _), .blobs(let name), .verify(let name), .store(let name): store = name
        default: return nil
        }
        let decodedStore = (try? PercentEncoding.decode(store)).map { String(decoding: $0, as: UTF8.self) }
        if let reason = decodedStore.map({ StoreName.violation(in: $0) }) ?? "a store name must not contain NUL" {
            return (.invalidStoreName(name: decodedStore ?? store, reason: reason), route)
        }
        guard case .blob(_, let encoded) = route else { return nil }
        // The byte offset of the NUL in the decoded identifier: escapes before it are well formed
        // (the decoder stops at the first problem), so each counts one byte.
        var offset = 0
        var bytes = encoded.utf8[...]
        while let first = bytes.first {
            if first == UInt8(ascii: "%") {
                if bytes.dropFirst().prefix(2).elementsEqual("00".utf8) { break }
                bytes = bytes.dropFirst(3)
            } else {
                bytes = bytes.dropFirst()
            }
            offset += 1
        }
        return (.invalidIdentifier(identifier: encoded, rule: .controlCharacter(scalar: 0, byteOffset: offset)), route)
    }
}
