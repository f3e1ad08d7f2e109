/// A response body that did not come over the transport's own connection (an HTTPS response read
/// through FoundationNetworking): what lets a ``TransportResponse`` be read the same way whichever
/// transport produced it.
///
/// Used by one thread at a time, like the response that holds it.
protocol TransportResponseBody: AnyObject, Sendable {
    /// Copies the next piece into `destination`; `nil` once the body is complete.
    func read(into destination: UnsafeMutableRawBufferPointer) throws(TransportError) -> Int?
    /// Whether the body was read to its end.
    var isComplete: Bool { get }
    /// Abandons the rest of the body. Idempotent.
    func close()
}
