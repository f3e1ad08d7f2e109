import Foundation

/// Finds and aborts multipart uploads that were started and never finished under a key prefix:
/// parts of an upload whose process died (or whose abort failed) stay stored, invisible and billed,
/// until the upload is aborted.
///
/// blobd runs it through ``S3StaleUploadSweeper``: for each store's prefix when it starts, then
/// periodically, with a cutoff of now minus ``defaultAge``.
///
/// **Why the age keeps a fleet safe.** The sweep cannot tell an abandoned upload from a slow one of
/// another process sharing the bucket, so the age must exceed the longest upload any of them may
/// still be running. The uploads of the sweeping process itself are never aborted
/// (``S3UploadsInProgress``); another process's upload older than the age is aborted, and that
/// upload then fails (its next UploadPart or its completion is answered `404 NoSuchUpload`), so its
/// put fails and stores nothing. Seven days lets the largest object S3 takes, 5 TiB, go up at
/// about 9 MB/s or faster; the gateway's `Initiated` times are compared with the local clock, and
/// the margin absorbs any clock skew the gateway tolerates (minutes).
///
/// **Blocking**, like ``S3Client``: call it off the Swift cooperative pool.
package struct S3StaleUploads: Sendable {
    /// How old an unfinished upload must be to count as abandoned, by default: seven days (see above).
    package static let defaultAge: Duration = .seconds(7 * 24 * 60 * 60)

    /// The bucket's client.
    package let client: S3Client
    /// The key prefix swept (a store's prefix); empty for the whole bucket.
    package let prefix: String

    /// A sweeper of unfinished uploads under `prefix`.
    package init(client: S3Client, prefix: String) {
        self.client = client
        self.prefix = prefix
    }

    /// Every unfinished upload under the prefix, all pages of ListMultipartUploads.
    package func unfinished() throws(S3ClientError) -> [S3MultipartUploadSummary] {
        let bucket = client.bucket
        let context = bucket.context("ListMultipartUploads", key: prefix.isEmpty ? nil : prefix)
        var uploads: [S3MultipartUploadSummary] = []
        var keyMarker: String?
        var uploadIDMarker: String?
        while true {
            let request: S3Request
            do {
                request = try bucket.listMultipartUploads(prefix: prefix, keyMarker: keyMarker, uploadIDMarker: uploadIDMarker, maxUploads: 1000)
            } catch { throw .refused(error) }
            let answer = try client.send(request, context: context)
            let page: S3ListMultipartUploadsPage
            do { page = try S3ListMultipartUploadsPage(xml: answer.body) } catch {
                throw .malformedAnswer(context, reason: "\(error)")
            }
            uploads += page.uploads
            guard page.isTruncated else { return uploads }
            guard let next = page.nextKeyMarker ?? page.uploads.last?.key,
                next != keyMarker || page.nextUploadIDMarker != uploadIDMarker
            else {
                throw .malformedAnswer(context, reason: "a truncated page without markers to go on from")
            }
            keyMarker = next
            uploadIDMarker = page.nextUploadIDMarker ?? page.uploads.last?.uploadID
        }
    }

    /// Aborts every unfinished upload under the prefix initiated before `cutoff`, except those this
    /// process is running (``S3UploadsInProgress``), calls `each` with each one aborted, and returns
    /// them. An upload without an `Initiated` time is left alone (its age is unknown); one that ended
    /// meanwhile (`404 NoSuchUpload`) is not counted.
    @discardableResult
    package func abort(
        initiatedBefore cutoff: Date, each: (S3MultipartUploadSummary) -> Void = { _ in }
    ) throws(S3ClientError) -> [S3MultipartUploadSummary] {
        let bucket = client.bucket
        var aborted: [S3MultipartUploadSummary] = []
        for upload in try unfinished() {
            guard let initiated = upload.initiated, initiated < cutoff, !S3UploadsInProgress.contains(client, uploadID: upload.uploadID) else { continue }
            let request: S3Request
            do { request = try bucket.abortMultipartUpload(key: upload.key, uploadID: upload.uploadID) } catch { throw .refused(error) }
            let answer = try client.send(request, context: bucket.context("AbortMultipartUpload", key: upload.key), alsoAccepted: [404])
            if answer.status.code != 404 {
                aborted.append(upload)
                each(upload)
            }
        }
        return aborted
    }

    /// ``abort(initiatedBefore:each:)`` with the cutoff `age` before `now`.
    @discardableResult
    package func abortAbandoned(olderThan age: Duration = defaultAge, now: Date = Date()) throws(S3ClientError) -> [S3MultipartUploadSummary] {
        try abort(initiatedBefore: Self.cutoff(age: age, now: now))
    }

    /// `now` less `age`.
    package static func cutoff(age: Duration, now: Date) -> Date {
        now.addingTimeInterval(-timeInterval(age))
    }

    /// `duration` in seconds, fractions included.
    package static func timeInterval(_ duration: Duration) -> TimeInterval {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
