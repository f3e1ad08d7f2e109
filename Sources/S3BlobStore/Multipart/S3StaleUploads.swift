import Foundation

/// Finds and aborts multipart uploads that were started and never finished under a key prefix:
/// parts of an upload whose process died (or whose abort failed) stay stored, invisible and billed,
/// until the upload is aborted.
///
/// **When blobd calls it**: when it opens a store on S3, then periodically (hourly suits), with a
/// cutoff of now minus ``defaultAge``. The age must exceed the longest upload any fleet member may
/// still be running, since the sweep cannot tell an abandoned upload from a slow one of another
/// blobd; a day is far above what a 5 TiB object takes at gateway speeds, and the gateway's
/// `Initiated` times are compared with the local clock, so the margin also absorbs clock skew.
///
/// **Blocking**, like ``S3Client``: call it off the Swift cooperative pool.
package struct S3StaleUploads: Sendable {
    /// How old an unfinished upload must be to count as abandoned, by default.
    package static let defaultAge: Duration = .seconds(24 * 60 * 60)

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

    /// Aborts every unfinished upload under the prefix initiated before `cutoff` and returns
    /// them. An upload without an `Initiated` time is left alone (its age is unknown); one that
    /// ended meanwhile (`404 NoSuchUpload`) is not counted.
    package func abort(initiatedBefore cutoff: Date) throws(S3ClientError) -> [S3MultipartUploadSummary] {
        let bucket = client.bucket
        var aborted: [S3MultipartUploadSummary] = []
        for upload in try unfinished() {
            guard let initiated = upload.initiated, initiated < cutoff else { continue }
            let request: S3Request
            do { request = try bucket.abortMultipartUpload(key: upload.key, uploadID: upload.uploadID) } catch { throw .refused(error) }
            let answer = try client.send(request, context: bucket.context("AbortMultipartUpload", key: upload.key), alsoAccepted: [404])
            if answer.status.code != 404 { aborted.append(upload) }
        }
        return aborted
    }

    /// ``abort(initiatedBefore:)`` with the cutoff `age` before now.
    package func abortAbandoned(olderThan age: Duration = defaultAge, now: Date = Date()) throws(S3ClientError) -> [S3MultipartUploadSummary] {
        let seconds = Double(age.components.seconds) + Double(age.components.attoseconds) / 1e18
        return try abort(initiatedBefore: now.addingTimeInterval(-seconds))
    }
}
