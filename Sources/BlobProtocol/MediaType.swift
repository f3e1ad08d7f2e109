/// The content types blobd answers with, and a blob's type when none was recorded.
package enum MediaType {
    /// Every JSON body (metadata, listings, errors, reports).
    package static let json = "application/json"
    /// The change feed, `GET /v1/events`.
    package static let eventStream = "text/event-stream"
    /// Prometheus text format, `GET /metrics`.
    package static let metrics = "text/plain; version=0.0.4; charset=utf-8"
    /// A blob stored without a type that is neither a record nor a recognised image.
    package static let octetStream = "application/octet-stream"
}
