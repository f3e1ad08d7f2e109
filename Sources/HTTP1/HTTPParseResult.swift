/// The outcome of feeding buffered bytes to a head parser.
package enum HTTPParseResult<Head: Sendable>: Sendable {
    /// The head is not complete yet. Read more, then feed the same bytes again with the new ones appended.
    case needMore
    /// A complete head, and how many bytes of the fed buffer it occupied.
    ///
    /// Bytes after `consumed` belong to the body or to the next pipelined message.
    case complete(Head, consumed: Int)
    /// The bytes are not a valid head; answer (for a server, with ``HTTPParseError/statusCode``) and close.
    case failed(HTTPParseError)
}

extension HTTPParseResult: Equatable where Head: Equatable {}
