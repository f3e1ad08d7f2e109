/// Where a request went: the endpoint, bucket, key and operation an ``S3Error`` names.
package struct S3ErrorContext: Sendable, Hashable {
    /// `scheme://host[:port]`.
    package var endpoint: String
    /// The bucket.
    package var bucket: String
    /// The key, for object operations.
    package var key: String?
    /// The S3 operation (`PutObject`, `ListObjectsV2`, ...).
    package var operation: String

    /// A context.
    package init(endpoint: String, bucket: String, key: String? = nil, operation: String) {
        self.endpoint = endpoint
        self.bucket = bucket
        self.key = key
        self.operation = operation
    }
}

/// An S3 request that failed at the object store: what was asked, where, and what S3 answered.
package struct S3Error: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where the request went.
    package var context: S3ErrorContext
    /// The HTTP status.
    package var status: Int
    /// S3's error code, `nil` when the answer had no error document.
    package var code: String?
    /// S3's message.
    package var message: String?
    /// S3's request ID.
    package var requestID: String?

    /// An error from a status and whatever error document the body holds.
    package init(context: S3ErrorContext, status: Int, body: some Collection<UInt8>) {
        self.context = context
        self.status = status
        let document = S3ErrorBody(xml: body)
        code = document?.code
        message = document?.message
        requestID = document?.requestID
    }

    /// An error from an error document (a `200` CompleteMultipartUpload that failed, say).
    package init(context: S3ErrorContext, status: Int, document: S3ErrorBody) {
        self.context = context
        self.status = status
        code = document.code
        message = document.message
        requestID = document.requestID
    }

    /// `PutObject s3://bucket/key at http://host:port: 412 PreconditionFailed (message) [request ID]`.
    package var description: String {
        var text = "\(context.operation) s3://\(context.bucket)/\(context.key ?? "") at \(context.endpoint): \(status)"
        text += " \(code ?? "(no error code in the answer)")"
        if let message, !message.isEmpty { text += " (\(message))" }
        if let requestID, !requestID.isEmpty { text += " [request \(requestID)]" }
        return text
    }
}
