/// Why an S3 operation failed, naming the endpoint, bucket, key and operation in every case.
package enum S3ClientError: Error, Sendable, CustomStringConvertible {
    /// The object store answered with an error status (its code: `NoSuchKey`, `PreconditionFailed`,
    /// `AccessDenied`, `RequestTimeTooSkewed`, `NoSuchBucket`, ...).
    case answered(S3Error)
    /// The request did not get an answer: the endpoint could not be reached, timed out, or
    /// dropped the connection.
    case unreachable(S3ErrorContext, TransportError)
    /// The request was refused before anything was sent (a key too long, a header S3 would misread).
    case refused(S3RequestError)
    /// The answer was not what S3 sends (an unparsable listing, a missing header).
    case malformedAnswer(S3ErrorContext, reason: String)

    /// The S3 error answer, if the store answered with one.
    package var answer: S3Error? {
        if case .answered(let error) = self { return error }
        return nil
    }

    /// The HTTP status of the answer, if there was one.
    package var status: Int? { answer?.status }

    /// The S3 error code of the answer, if there was one.
    package var code: String? { answer?.code }

    /// One sentence naming what was asked, where, and what went wrong.
    package var description: String {
        switch self {
        case .answered(let error):
            return error.description
        case .unreachable(let context, let error):
            return "\(context.operation) s3://\(context.bucket)/\(context.key ?? "") at \(context.endpoint): no answer: \(error)"
        case .refused(let error):
            return error.description
        case .malformedAnswer(let context, let reason):
            return "\(context.operation) s3://\(context.bucket)/\(context.key ?? "") at \(context.endpoint): unexpected answer: \(reason)"
        }
    }
}
