internal import BlobSystem

/// The multipart uploads this process has started and not yet completed or aborted, so that the
/// stale-upload sweep never aborts one of them however old it is (a 5 TiB upload over a slow link
/// may outlast any age the sweep is given). An upload is recorded from the moment its
/// CreateMultipartUpload answer arrives; before that moment it is seconds old, and the sweep's age
/// keeps it safe.
///
/// Process-wide: the record is behind its lock, and any thread may call.
package enum S3UploadsInProgress {
    /// An upload, as the bucket knows it.
    struct Upload: Hashable, Sendable {
        var endpoint: String
        var bucket: String
        var uploadID: String
    }

    private static let uploads = Locked<[Upload: Int]>([:])

    private static func upload(_ client: S3Client, _ uploadID: String) -> Upload {
        Upload(endpoint: client.bucket.endpoint.description, bucket: client.bucket.name, uploadID: uploadID)
    }

    /// Records that this process is running the upload `uploadID` in `client`'s bucket.
    package static func begin(_ client: S3Client, uploadID: String) {
        uploads.withLock { $0[upload(client, uploadID), default: 0] += 1 }
    }

    /// Records that the upload ended (completed, failed or aborted).
    package static func end(_ client: S3Client, uploadID: String) {
        let key = upload(client, uploadID)
        uploads.withLock { record in
            guard let count = record[key] else { return }
            record[key] = count > 1 ? count - 1 : nil
        }
    }

    /// Whether this process is running the upload `uploadID` in `client`'s bucket.
    package static func contains(_ client: S3Client, uploadID: String) -> Bool {
        let key = upload(client, uploadID)
        return uploads.withLock { $0[key] != nil }
    }
}
