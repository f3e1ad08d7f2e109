import Foundation

/// The checks and derived metadata shared by every store's put, so all stores agree.
package enum ContentInspection {
    /// Content type used when none is given and the bytes are not a recognised image.
    package static let defaultContentType = "application/octet-stream"

    /// Checks identifier and metadata before any content is read; returns the identifier to use.
    package static func prepare(store: String, identifier: String?, options: PutOptions) throws(BlobStoreError) -> String {
        let id = identifier ?? UUID().uuidString
        try BlobIdentifier.validate(id)
        if let reason = UserMetadataRules.violation(contentType: options.contentType, userMetadata: options.userMetadata) {
            throw .invalidMetadata(store: store, identifier: id, reason: reason)
        }
        return id
    }

    /// Applies the requested validation to the image verdict on the whole content (see ``ImageValidator``).
    ///
    /// `image` is the validator's verdict; `wholeContent` is called only for record validation, which needs
    /// the whole document.
    package static func inspect(
        store: String, identifier: String, options: PutOptions, image verdict: Result<ImageInfo, ImageParseFailure>,
        size: Int64, wholeContent: () throws -> Data
    ) throws -> (contentType: String, image: ImageInfo?) {
        let image = try? verdict.get()
        switch options.validation {
        case .none:
            break
        case .image:
            if case .failure(let failure) = verdict {
                throw BlobStoreError.notAnImage(store: store, identifier: identifier, reason: failure.reason)
            }
        case .record:
            if size > RecordValidation.maximumByteCount {
                throw BlobStoreError.tooLarge(what: "record '\(identifier)'", limit: RecordValidation.maximumByteCount, actual: size)
            }
            if let reason = RecordValidation.violation(in: try wholeContent()) {
                throw BlobStoreError.invalidRecord(store: store, identifier: identifier, reason: reason)
            }
        }
        let contentType = options.contentType
            ?? (options.validation == .record ? "application/json" : image?.mimeType ?? defaultContentType)
        return (contentType, image)
    }

    /// The verdict as far as the bytes so far tell, for laying out a header before the content is complete:
    /// the signature's format (with a placeholder size) while nothing has ruled the image out.
    static func provisionalVerdict(_ validator: ImageValidator) -> Result<ImageInfo, ImageParseFailure> {
        if let failure = validator.failure { return .failure(failure) }
        guard let format = validator.format else { return .failure(ImageParseFailure(reason: "no known image signature")) }
        return .success(ImageInfo(format: format, width: 0, height: 0))
    }

    /// Clamps `range` to a blob of `size` bytes, or throws `rangeNotSatisfiable`.
    package static func clamp(_ range: Range<Int64>, size: Int64, store: String, identifier: String) throws(BlobStoreError) -> Range<Int64> {
        guard range.lowerBound >= 0, range.lowerBound < size || (range.isEmpty && range.lowerBound <= size) else {
            throw .rangeNotSatisfiable(store: store, identifier: identifier, size: size)
        }
        return range.lowerBound..<min(range.upperBound, size)
    }
}
