/// How an object of a given length is cut into parts: S3 takes at most 10,000 parts of at least
/// 5 MiB each (the last may be smaller) and at most 5 GiB each, so the preferred part size grows
/// for objects that would otherwise need more parts.
package struct S3MultipartPlan: Sendable, Hashable {
    /// The largest part S3 accepts.
    package static let maximumPartByteCount: Int64 = 5 << 30
    /// The largest object a multipart upload can make (10,000 parts of 5 GiB would allow more, but
    /// S3 caps objects at 5 TiB).
    package static let maximumObjectByteCount: Int64 = 5 << 40

    /// The object's length.
    package let length: Int64
    /// Every part's length but the last's.
    package let partSize: Int64
    /// How many parts (at least 1: an empty object is one empty part).
    package let partCount: Int

    /// The plan for `length` bytes with parts of `preferredPartSize` where S3 allows it; throws
    /// when the object is larger than a multipart upload can make.
    package init(length: Int64, preferredPartSize: Int) throws(S3RequestError) {
        guard length >= 0, length <= Self.maximumObjectByteCount else {
            throw .invalidArgument(
                name: "length", reason: "a multipart upload holds 0–\(Self.maximumObjectByteCount) bytes, not \(length)",
                operation: "CreateMultipartUpload")
        }
        let maximumParts = Int64(S3Bucket.maximumPartNumber)
        // Fewest bytes per part that keeps the count within 10,000, rounded up to a whole MiB.
        let mebibyte: Int64 = 1 << 20
        let needed = (length + maximumParts - 1) / maximumParts
        let neededRounded = (needed + mebibyte - 1) / mebibyte * mebibyte
        let size = min(Self.maximumPartByteCount, max(Int64(preferredPartSize), Int64(S3Bucket.minimumPartByteCount), neededRounded))
        self.length = length
        partSize = size
        partCount = length == 0 ? 1 : Int((length + size - 1) / size)
    }

    /// Where part `number` (1-based) lies in the object.
    package func range(ofPart number: Int) -> (offset: Int64, length: Int64) {
        precondition((1...partCount).contains(number), "part \(number) of \(partCount)")
        let offset = Int64(number - 1) * partSize
        return (offset, min(partSize, length - offset))
    }
}
