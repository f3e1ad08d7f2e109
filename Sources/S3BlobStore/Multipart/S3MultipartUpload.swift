import Foundation
package import BlobSystem
internal import HTTP1

/// Uploads a file as an S3 multipart upload: create, parts in parallel, complete, then HEAD for
/// the object's ETag. Any failure aborts the upload, so no parts are left behind to be billed
/// (an upload whose process died is left to ``S3StaleUploads``). While it runs, the upload is in
/// ``S3UploadsInProgress``, so this process's own sweep never aborts it.
///
/// Every part is a `.fileRegion` body, sent from the page cache with `sendfile(2)`: memory stays
/// bounded by the transport's fixed buffers whatever the file's size. Parts run on threads of
/// their own (the calling thread and `concurrency - 1` others), at most `concurrency` in flight.
///
/// **Blocking**: call ``upload(file:length:)`` off the Swift cooperative pool (``BlockingThreads``).
package struct S3MultipartUpload: Sendable {
    /// The bucket's client.
    package let client: S3Client
    /// The object's key.
    package let key: String
    /// The headers stored with the object (content type, metadata).
    package let headers: S3ObjectHeaders
    /// The preferred part size (grown where S3's limits require, see ``S3MultipartPlan``).
    package let partSize: Int
    /// Parts in flight at most.
    package let concurrency: Int
    /// Called on the worker's thread before each part is sent, with its number; a throw fails that
    /// part. For tests: injecting a failure, observing parts in flight.
    package var beforePart: (@Sendable (_ partNumber: Int) throws(S3ClientError) -> Void)?

    /// An upload of `key` with `headers`, in parts of `partSize` bytes (at least S3's 5 MiB),
    /// `concurrency` of them in flight at most.
    package init(client: S3Client, key: String, headers: S3ObjectHeaders, partSize: Int = 16 << 20, concurrency: Int = 4) {
        self.client = client
        self.key = key
        self.headers = headers
        self.partSize = partSize
        self.concurrency = max(1, concurrency)
        beforePart = nil
    }

    /// Uploads `length` bytes of `file` (from offset 0) as parts, completes the upload and returns
    /// the object's ETag (unquoted, read with HEAD: the gateway's Complete answer has an empty one).
    /// On any failure the upload is aborted, then the error rethrown. Blocking: call it off the
    /// cooperative pool.
    package func upload(file: FileDescriptor, length: Int64) throws(S3ClientError) -> String {
        try upload(file: file, length: length, cancellation: nil)
    }

    /// ``upload(file:length:)``, giving up (abort, then throw ``S3ClientError/refused(_:)``) once
    /// `cancellation` is raised.
    package func upload(file: FileDescriptor, length: Int64, cancellation: S3UploadCancellation?) throws(S3ClientError) -> String {
        let bucket = client.bucket
        let plan: S3MultipartPlan
        do { plan = try S3MultipartPlan(length: length, preferredPartSize: partSize) } catch { throw .refused(error) }
        let uploadID = try create()
        S3UploadsInProgress.begin(client, uploadID: uploadID)
        defer { S3UploadsInProgress.end(client, uploadID: uploadID) }
        let parts: [(number: Int, etag: String)]
        do {
            parts = try uploadParts(file: file, plan: plan, uploadID: uploadID, cancellation: cancellation)
            try complete(uploadID: uploadID, parts: parts)
        } catch {
            abort(uploadID: uploadID)
            throw error
        }
        let head = try client.send(try Self.built { () throws(S3RequestError) in try bucket.headObject(key: key) }, context: bucket.context("HeadObject", key: key))
        guard let etag = head.headers.first(name: "ETag").map(S3XMLValues.unquotedETag), !etag.isEmpty else {
            throw .malformedAnswer(bucket.context("HeadObject", key: key), reason: "no ETag on the completed multipart object")
        }
        return etag
    }

    // MARK: Steps

    private func create() throws(S3ClientError) -> String {
        let bucket = client.bucket
        let context = bucket.context("CreateMultipartUpload", key: key)
        let request = try Self.built { () throws(S3RequestError) in try bucket.createMultipartUpload(key: key, headers: headers) }
        let answer = try client.send(request, body: .empty, context: context, isIdempotent: false)
        do {
            return try S3InitiateMultipartUploadResult(xml: answer.body).uploadID
        } catch {
            throw .malformedAnswer(context, reason: "\(error)")
        }
    }

    /// Who owns what: `Progress` is shared by the workers and reached only under its lock; each
    /// worker owns the part it took until it stores the part's ETag or the failure.
    private struct Progress {
        var next = 1
        var etags: [String?]
        var failure: S3ClientError?
    }

    private func uploadParts(
        file: FileDescriptor, plan: S3MultipartPlan, uploadID: String, cancellation: S3UploadCancellation?
    ) throws(S3ClientError) -> [(number: Int, etag: String)] {
        let progress = Locked(Progress(etags: Array(repeating: nil, count: plan.partCount)))
        let work: @Sendable () -> Void = { [self] in
            while true {
                let taken: Int? = progress.withLock { state in
                    guard state.failure == nil, state.next <= plan.partCount else { return nil }
                    if let cancellation, cancellation.isCancelled {
                        let sent = state.etags.count { $0 != nil }
                        state.failure = .refused(.invalidArgument(
                            name: "upload", reason: "s3://\(client.bucket.name)/\(key): cancelled by the caller after \(sent) of \(plan.partCount) parts; the upload is aborted",
                            operation: "UploadPart"))
                        return nil
                    }
                    defer { state.next += 1 }
                    return state.next
                }
                guard let number = taken else { return }
                do throws(S3ClientError) {
                    let etag = try uploadPart(number, file: file, plan: plan, uploadID: uploadID)
                    progress.withLock { $0.etags[number - 1] = etag }
                } catch {
                    progress.withLock { state in
                        if state.failure == nil { state.failure = error }
                    }
                    return
                }
            }
        }
        let helpers = min(concurrency, plan.partCount) - 1
        let finished = DispatchGroup()
        for index in 0..<helpers {
            finished.enter()
            let thread = Thread {
                work()
                finished.leave()
            }
            thread.name = "S3MultipartUpload.part-worker-\(index + 1)"
            thread.start()
        }
        work()
        finished.wait()
        let outcome = progress.withLock { $0 }
        if let failure = outcome.failure { throw failure }
        return outcome.etags.enumerated().map { index, etag in (index + 1, etag!) }
    }

    private func uploadPart(_ number: Int, file: FileDescriptor, plan: S3MultipartPlan, uploadID: String) throws(S3ClientError) -> String {
        try beforePart?(number)
        let bucket = client.bucket
        let context = bucket.context("UploadPart \(number)/\(plan.partCount)", key: key)
        let range = plan.range(ofPart: number)
        // UNSIGNED-PAYLOAD: hashing the part first would read it twice; sendfile reads it once.
        let request = try Self.built { () throws(S3RequestError) in
            try bucket.uploadPart(key: key, uploadID: uploadID, partNumber: number, payload: .unsigned)
        }
        let answer = try client.send(request, body: .fileRegion(file, offset: range.offset, length: range.length), context: context, responseLimit: 1 << 20)
        guard let etag = answer.headers.first(name: "ETag").map(S3XMLValues.unquotedETag), !etag.isEmpty else {
            throw .malformedAnswer(context, reason: "no ETag in the UploadPart answer")
        }
        return etag
    }

    private func complete(uploadID: String, parts: [(number: Int, etag: String)]) throws(S3ClientError) {
        let bucket = client.bucket
        let context = bucket.context("CompleteMultipartUpload", key: key)
        let built = try Self.built { () throws(S3RequestError) in try bucket.completeMultipartUpload(key: key, uploadID: uploadID, parts: parts) }
        let answer = try client.send(built.request, body: .bytes(built.body), context: context, isIdempotent: false)
        let result: S3CompleteMultipartUploadResult
        do { result = try S3CompleteMultipartUploadResult(xml: answer.body) } catch {
            throw .malformedAnswer(context, reason: "\(error)")
        }
        // S3 may answer 200 and then report a failure in the body (the status was sent before the
        // parts were assembled).
        if case .failed(let document) = result {
            throw .answered(S3Error(context: context, status: answer.status.code, document: document))
        }
    }

    /// Aborts the upload, best effort: when this fails too the stale-upload sweep removes it later,
    /// and the caller learns of the failure that made it abort.
    private func abort(uploadID: String) {
        let bucket = client.bucket
        guard let request = try? bucket.abortMultipartUpload(key: key, uploadID: uploadID) else { return }
        _ = try? client.send(request, context: bucket.context("AbortMultipartUpload", key: key), alsoAccepted: [404])
    }

    private static func built<T>(_ body: () throws(S3RequestError) -> T) throws(S3ClientError) -> T {
        do { return try body() } catch { throw .refused(error) }
    }
}
