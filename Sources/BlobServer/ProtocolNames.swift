import BlobProtocol

// BlobProtocol's names for the server files that do not import it yet (Router*.swift); once they
// do, these aliases go.

/// What a request path names: ``BlobProtocol/Route``.
typealias Route = BlobProtocol.Route
/// The wire's date formats: ``BlobProtocol/HTTPDates``.
typealias HTTPDates = BlobProtocol.HTTPDates
