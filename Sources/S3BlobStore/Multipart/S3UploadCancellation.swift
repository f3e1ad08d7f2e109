internal import BlobSystem

/// A flag a caller raises to give up on an upload in progress: ``S3MultipartUpload`` checks it
/// before each part, stops starting parts once it is raised, aborts the upload and throws.
///
/// A part already being sent finishes first (its bytes are in flight on a transport thread), so a
/// cancellation takes effect within one part per worker.
package final class S3UploadCancellation: Sendable {
    private let flag = Locked(false)

    /// A flag, lowered.
    package init() {}

    /// Raises the flag; idempotent.
    package func cancel() {
        flag.withLock { $0 = true }
    }

    /// Whether the flag is raised.
    package var isCancelled: Bool {
        flag.withLock { $0 }
    }
}
