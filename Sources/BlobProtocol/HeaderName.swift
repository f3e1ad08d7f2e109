/// The protocol's own header fields (`Blob-*`); the standard ones (`ETag`, `If-Match`, `Range`,
/// `Last-Event-ID`, …) are HTTP1's ``HTTP1/KnownHeader``.
package enum HeaderName: String, CaseIterable, Sendable {
    /// `Blob-Created`: the blob's `created`, RFC 3339.
    case created = "Blob-Created"
    /// `Blob-Validate: image|record|none` on a PUT.
    case validate = "Blob-Validate"
    /// `Blob-Image-Format`, for recognised images.
    case imageFormat = "Blob-Image-Format"
    /// `Blob-Image-Width`.
    case imageWidth = "Blob-Image-Width"
    /// `Blob-Image-Height`.
    case imageHeight = "Blob-Image-Height"

    /// `Blob-Meta-`, followed by a user metadata key (lowercased on receipt).
    package static let metaPrefix = "Blob-Meta-"
    /// Every protocol field starts with this, in any case.
    package static let blobPrefix = "Blob-"

    /// The name as a constant, for the daemon's byte-level header writers.
    package var staticName: StaticString {
        switch self {
        case .created: "Blob-Created"
        case .validate: "Blob-Validate"
        case .imageFormat: "Blob-Image-Format"
        case .imageWidth: "Blob-Image-Width"
        case .imageHeight: "Blob-Image-Height"
        }
    }

    /// Whether a field name starts with `Blob-`, in any case (the fields a PUT reads; lowercasing
    /// every name to find them would cost an allocation per field).
    package static func hasBlobPrefix(_ name: String) -> Bool {
        var remaining = "blob-".utf8.makeIterator()
        for byte in name.utf8 {
            guard let expected = remaining.next() else { return true }
            let lowered = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            if lowered != expected { return false }
        }
        return remaining.next() == nil
    }
}
