/// Multipart upload requests: create, upload parts, complete or abort, and list the unfinished.
extension S3Bucket {
    /// The smallest part but the last (S3 enforces it when completing: `EntityTooSmall`).
    package static let minimumPartByteCount = 5 * 1024 * 1024
    /// The highest part number.
    package static let maximumPartNumber = 10_000

    /// CreateMultipartUpload: `POST ?uploads` with the object's headers; the answer's upload ID
    /// (``S3InitiateMultipartUploadResult``) names the upload in the other calls.
    package func createMultipartUpload(key: String, headers: S3ObjectHeaders = S3ObjectHeaders()) throws(S3RequestError) -> S3Request {
        try validate(key: key, "CreateMultipartUpload")
        return request("POST", path: path(forKey: key), query: [S3QueryItem("uploads")], headers: try headers.fields("CreateMultipartUpload"))
    }

    /// UploadPart: `PUT ?partNumber=N&uploadId=ID`; keep the answer's `ETag` for completing.
    package func uploadPart(key: String, uploadID: String, partNumber: Int, payload: PayloadHash) throws(S3RequestError) -> S3Request {
        try validate(key: key, "UploadPart")
        guard (1...Self.maximumPartNumber).contains(partNumber) else {
            throw .invalidArgument(name: "part number", reason: "must be 1–\(Self.maximumPartNumber), not \(partNumber)", operation: "UploadPart")
        }
        let query = [S3QueryItem("partNumber", String(partNumber)), S3QueryItem("uploadId", uploadID)]
        return request("PUT", path: path(forKey: key), query: query, payload: payload)
    }

    /// CompleteMultipartUpload: `POST ?uploadId=ID` with the parts' numbers and ETags in XML. The
    /// body's hash is signed. A `200` answer may still hold an `<Error>` (S3 reports late failures
    /// that way), and the gateway's `<ETag>` there is empty: read the ETag with HeadObject.
    package func completeMultipartUpload(
        key: String, uploadID: String, parts: [(number: Int, etag: String)]
    ) throws(S3RequestError) -> (request: S3Request, body: [UInt8]) {
        try validate(key: key, "CompleteMultipartUpload")
        guard !parts.isEmpty else {
            throw .invalidArgument(name: "parts", reason: "an upload completes with at least one part", operation: "CompleteMultipartUpload")
        }
        var xml = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        var previous = 0
        for part in parts {
            guard part.number > previous, part.number <= Self.maximumPartNumber else {
                throw .invalidArgument(name: "parts", reason: "part numbers must rise from 1 to at most \(Self.maximumPartNumber)", operation: "CompleteMultipartUpload")
            }
            previous = part.number
            xml += "<Part><PartNumber>\(part.number)</PartNumber><ETag>\(S3XMLValues.escaped(S3XMLValues.quotedETag(part.etag)))</ETag></Part>"
        }
        xml += "</CompleteMultipartUpload>"
        let body = Array(xml.utf8)
        let request = request(
            "POST", path: path(forKey: key), query: [S3QueryItem("uploadId", uploadID)],
            headers: [S3HeaderField("Content-Type", "application/xml")], payload: .sha256(SHA256.hash(body))
        )
        return (request, body)
    }

    /// AbortMultipartUpload: `DELETE ?uploadId=ID` (`204`); frees the parts stored so far.
    package func abortMultipartUpload(key: String, uploadID: String) throws(S3RequestError) -> S3Request {
        try validate(key: key, "AbortMultipartUpload")
        return request("DELETE", path: path(forKey: key), query: [S3QueryItem("uploadId", uploadID)])
    }

    /// ListMultipartUploads: `GET ?uploads`, one page, keys URL-encoded; parse it with
    /// ``S3ListMultipartUploadsPage/init(xml:)``. For cleaning up stale uploads.
    package func listMultipartUploads(
        prefix: String? = nil, keyMarker: String? = nil, uploadIDMarker: String? = nil, maxUploads: Int? = nil
    ) throws(S3RequestError) -> S3Request {
        var query = [S3QueryItem("uploads"), S3QueryItem("encoding-type", "url")]
        if let prefix, !prefix.isEmpty { query.append(S3QueryItem("prefix", prefix)) }
        if let keyMarker { query.append(S3QueryItem("key-marker", keyMarker)) }
        if let uploadIDMarker { query.append(S3QueryItem("upload-id-marker", uploadIDMarker)) }
        if let maxUploads {
            guard (1...1000).contains(maxUploads) else {
                throw .invalidArgument(name: "max-uploads", reason: "must be 1–1000, not \(maxUploads)", operation: "ListMultipartUploads")
            }
            query.append(S3QueryItem("max-uploads", String(maxUploads)))
        }
        return request("GET", path: bucketPath, query: query)
    }
}
