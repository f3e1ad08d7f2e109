import BlobStore
import HTTP1

extension Router {
    /// The answer to a path with an encoded NUL (`%00`) in a store name or a blob identifier: the
    /// name's rule is broken (a control character), so the error says which; `nil` elsewhere.
    static func encodedNUL(in head: HTTPRequestHead) -> (RequestAction, MetricOperation)? {
        // A malformed escape anywhere makes the path bad_request, whichever comes first.
        var withoutNUL = Array(head.pathBytes)
        for index in withoutNUL.indices.dropLast(2)
        where withoutNUL[index] == UInt8(ascii: "%") && withoutNUL[index + 1] == UInt8(ascii: "0") && withoutNUL[index + 2] == UInt8(ascii: "0") {
            withoutNUL[index + 2] = UInt8(ascii: "1")
        }
        guard (try? PercentEncoding.decode(withoutNUL[...])) != nil else { return nil }
        // Routed on the still-encoded path: the `%00` is in the store name or in the identifier.
        guard let route = Route(decodedPath: Array(head.pathBytes)) else { return nil }
        let operation = Router.operation(route: route, method: head.method)
        let store: String
        switch route {
        case .blob(let name, _), .blobs(let name), .verify(let name): store = name
        default: return nil
        }
        let decodedStore = (try? PercentEncoding.decode(store)).map { String(decoding: $0, as: UTF8.self) }
        if let reason = decodedStore.map({ StoreName.violation(in: $0) }) ?? "a store name must not contain NUL" {
            return (.respond(APIError(BlobStoreError.invalidStoreName(name: decodedStore ?? store, reason: reason)).response()), operation)
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
        let error = BlobStoreError.invalidIdentifier(identifier: encoded, rule: .controlCharacter(scalar: 0, byteOffset: offset))
        return (.respond(APIError(error).response()), operation)
    }
}
