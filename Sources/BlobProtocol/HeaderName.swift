/// The protocol's own header fields (`Blob-*`); the standard ones (`ETag`, `If-Match`, `Range`,
/// `Last-Event-ID`, …) are HTTP1's ``HTTP1/KnownHeader``.
package enum HeaderName: String, CaseIterable, Sendable {
    /// `Blob-Created`: the blob's `created`, RFC 3339.
    case created = "Blob-Created"
    /// `Blob-Validate: image|record|none` on a PUT.
    case validate = "Blob-Validate"
    /// `Blob-Expires`: on a PUT, when the blob expires (`never`, an RFC 3339 date or an IMF-fixdate);
    /// on a GET, HEAD or PUT response, the version's expiry, RFC 3339.
    case expires = "Blob-Expires"
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
        case .expires: "Blob-Expires"
        case .imageFormat: "Blob-Image-Format"
        case .imageWidth: "Blob-Image-Width"
        case .imageHeight: "Blob-Image-Height"
        }
    }

    /// The user metadata key a `Blob-Meta-<key>` field name carries, lowercased (keys are
    /// case-insensitive on the wire); `nil` for any other field.
    package static func userMetadataKey(fieldName: String) -> String? {
        let lower = fieldName.lowercased()
        let prefix = metaPrefix.lowercased()
        return lower.hasPrefix(prefix) ? String(lower.dropFirst(prefix.count)) : nil
    }

    /// The protocol field `fieldName` names, in any case; `nil` for `Blob-Meta-*` and other fields.
    package init?(fieldName: String) {
        guard let known = HeaderName.allCases.first(where: { $0.rawValue.lowercased() == fieldName.lowercased() }) else { return nil }
        self = known
    }

    /// Whether the field name `bytes` is this one, in any case (compared byte by byte, for the
    /// daemon's header scans).
    package func matches(fieldName bytes: ArraySlice<UInt8>) -> Bool {
        let name = staticName
        guard bytes.count == name.utf8CodeUnitCount else { return false }
        var position = 0
        for byte in bytes {
            let lowered = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            let expected = name.utf8Start[position]
            if lowered != (expected >= 0x41 && expected <= 0x5A ? expected | 0x20 : expected) { return false }
            position += 1
        }
        return true
    }

    /// Whether a field name starts with `Blob-`, in any case (the fields a PUT reads; lowercasing
    /// every name to find them would cost an allocation per field).
    package static func hasBlobPrefix(_ name: String) -> Bool {
        var remaining = blobPrefix.lowercased().utf8.makeIterator()
        for byte in name.utf8 {
            guard let expected = remaining.next() else { return true }
            let lowered = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            if lowered != expected { return false }
        }
        return remaining.next() == nil
    }
}
