import BlobStore
import Foundation
import HTTP1

/// A blob's metadata as the header fields of a GET, HEAD or PUT response (`ETag`, `Last-Modified`,
/// `Blob-Created`, `Blob-Meta-*`, `Blob-Image-*`, `Blob-Expires` and `Expires`), and the `Blob-Validate` values of a PUT.
package enum MetadataHeaders {
    /// The `ETag` field value: the tag in double quotes.
    package static func etagValue(_ etag: ETag) -> String { "\"\(etag.rawValue)\"" }

    /// The user metadata and image fields of `metadata`, in the order blobd sends them (user keys
    /// sorted), as name and value.
    package static func forEachBlobField(of metadata: BlobMetadata, _ body: (String, String) -> Void) {
        if !metadata.userMetadata.isEmpty {
            for (key, value) in metadata.userMetadata.sorted(by: { $0.key < $1.key }) { body(HeaderName.metaPrefix + key, value) }
        }
        if let image = metadata.image {
            body(HeaderName.imageFormat.rawValue, image.format.rawValue)
            body(HeaderName.imageWidth.rawValue, String(image.width))
            body(HeaderName.imageHeight.rawValue, String(image.height))
        }
        if let expires = metadata.expires {
            for field in ExpiryHeaders.responseFields(expires) { body(field.name, field.value) }
        }
    }

    /// The metadata in the headers of a GET or HEAD response for `identifier` whose whole content
    /// has `size` bytes. `modified` comes from `Last-Modified`, so it has one-second precision.
    package static func metadata(identifier: String, headers: HTTPHeaders, size: Int64) throws(WireFormatError) -> BlobMetadata {
        guard let etagText = headers.first(.etag), let etag = ETag(etagText) else {
            throw WireFormatError("response for '\(identifier)' lacks a valid ETag")
        }
        let modified = headers.first(.lastModified).flatMap(HTTPDates.parseIMFFixdate) ?? Date(timeIntervalSince1970: 0)
        let created = headers.first(name: HeaderName.created.rawValue).flatMap(HTTPDates.parseRFC3339) ?? modified
        var user: [String: String] = [:]
        for (name, value) in headers {
            if let key = HeaderName.userMetadataKey(fieldName: name) { user[key] = value }
        }
        var image: ImageInfo?
        if let format = headers.first(name: HeaderName.imageFormat.rawValue).flatMap(ImageFormat.init(rawValue:)),
            let width = headers.first(name: HeaderName.imageWidth.rawValue).flatMap({ Int($0) }),
            let height = headers.first(name: HeaderName.imageHeight.rawValue).flatMap({ Int($0) })
        {
            image = ImageInfo(format: format, width: width, height: height)
        }
        let expires = headers.first(name: HeaderName.expires.rawValue).flatMap(HTTPDates.parseRFC3339)
        return BlobMetadata(
            identifier: identifier, size: size, contentType: headers.first(.contentType) ?? MediaType.octetStream,
            etag: etag, created: created, modified: modified, userMetadata: user, image: image, expires: expires)
    }

    /// The `Blob-Validate` value asking for `validation` (`nil` for none: the header is left out).
    package static func validateValue(_ validation: ContentValidation) -> String? {
        switch validation {
        case .none: nil
        case .image: "image"
        case .record: "record"
        }
    }

    /// The validation a `Blob-Validate` value asks for (in any case), or `nil` for another value.
    package static func validation(fromValue value: String) -> ContentValidation? {
        switch value.lowercased() {
        case "image": .image
        case "record": .record
        case "none": ContentValidation.none
        default: nil
        }
    }
}
