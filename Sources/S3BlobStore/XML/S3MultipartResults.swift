import Foundation

/// `<InitiateMultipartUploadResult>`: the new upload's ID.
package struct S3InitiateMultipartUploadResult: Sendable, Hashable {
    /// The upload ID, for UploadPart, Complete and Abort.
    package var uploadID: String
    /// The key, as the answer names it.
    package var key: String?

    /// Parses the answer's body.
    package init(xml: some Collection<UInt8>) throws(S3ResponseParseError) {
        let root = try S3ResponseParseError.root(of: xml, expecting: "InitiateMultipartUploadResult")
        guard let uploadID = root.text(of: "UploadId"), !uploadID.isEmpty else {
            throw S3ResponseParseError(reason: "no <UploadId>")
        }
        self.uploadID = uploadID
        key = root.text(of: "Key")
    }
}

/// `<CompleteMultipartUploadResult>`, or the `<Error>` S3 may send with a `200` to Complete.
package enum S3CompleteMultipartUploadResult: Sendable, Hashable {
    /// The upload became an object; the ETag is `nil` when the answer's is empty (the Ceph gateway's).
    case completed(etag: String?)
    /// The upload failed after the `200` was sent.
    case failed(S3ErrorBody)

    /// Parses the answer's body.
    package init(xml: some Collection<UInt8>) throws(S3ResponseParseError) {
        let root: XMLElement
        do { root = try XMLReader.read(xml) } catch { throw S3ResponseParseError(reason: error.description) }
        if root.name == "Error" {
            self = .failed(S3ErrorBody(root))
            return
        }
        guard root.name == "CompleteMultipartUploadResult" else {
            throw S3ResponseParseError(reason: "expected <CompleteMultipartUploadResult>, found <\(root.name)>")
        }
        let etag = S3XMLValues.unquotedETag(root.text(of: "ETag") ?? "")
        self = .completed(etag: etag.isEmpty ? nil : etag)
    }
}

/// One unfinished multipart upload.
package struct S3MultipartUploadSummary: Sendable, Hashable {
    /// The key, URL-decoded.
    package var key: String
    /// The upload ID.
    package var uploadID: String
    /// When it was created (stale uploads are aborted by age).
    package var initiated: Date?
}

/// One page of ListMultipartUploads (`<ListMultipartUploadsResult>`).
package struct S3ListMultipartUploadsPage: Sendable, Hashable {
    /// The uploads.
    package var uploads: [S3MultipartUploadSummary]
    /// Whether another page follows.
    package var isTruncated: Bool
    /// The `key-marker` of the next page, URL-decoded.
    package var nextKeyMarker: String?
    /// The `upload-id-marker` of the next page.
    package var nextUploadIDMarker: String?

    /// Parses the answer's body.
    package init(xml: some Collection<UInt8>) throws(S3ResponseParseError) {
        let root = try S3ResponseParseError.root(of: xml, expecting: "ListMultipartUploadsResult")
        let decode = root.text(of: "EncodingType")?.lowercased() == "url"
        func key(_ text: String) -> String { decode ? S3XMLValues.urlDecoded(text) : text }
        var uploads: [S3MultipartUploadSummary] = []
        for upload in root.children("Upload") {
            guard let name = upload.text(of: "Key"), let uploadID = upload.text(of: "UploadId") else {
                throw S3ResponseParseError(reason: "an <Upload> without a <Key> or <UploadId>")
            }
            uploads.append(S3MultipartUploadSummary(
                key: key(name), uploadID: uploadID, initiated: upload.text(of: "Initiated").flatMap(S3XMLValues.date)
            ))
        }
        self.uploads = uploads
        isTruncated = root.text(of: "IsTruncated")?.lowercased() == "true"
        nextKeyMarker = root.text(of: "NextKeyMarker").flatMap { $0.isEmpty ? nil : key($0) }
        nextUploadIDMarker = root.text(of: "NextUploadIdMarker").flatMap { $0.isEmpty ? nil : $0 }
    }
}
