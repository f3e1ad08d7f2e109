/// An AWS access key: what signs every request.
///
/// Its description never shows the secret (nor the session token), so a credential can be logged
/// or put in an error message without leaking it.
public struct AWSCredentials: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// The access key ID (`AWS_ACCESS_KEY_ID`, `aws_access_key_id`).
    public var accessKeyID: String
    /// The secret access key (`AWS_SECRET_ACCESS_KEY`, `aws_secret_access_key`).
    public var secretAccessKey: String
    /// The session token of temporary credentials (`AWS_SESSION_TOKEN`, `aws_session_token`),
    /// sent and signed as `x-amz-security-token`.
    public var sessionToken: String?

    /// Credentials from their parts.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// The access key ID, with the secret redacted.
    public var description: String {
        "AWSCredentials(accessKeyID: \(accessKeyID), secretAccessKey: <redacted>\(sessionToken == nil ? "" : ", sessionToken: <redacted>"))"
    }

    /// A mirror without the secret, so `dump` and debuggers do not show it either.
    public var customMirror: Mirror {
        Mirror(self, children: ["accessKeyID": accessKeyID, "secretAccessKey": "<redacted>"], displayStyle: .struct)
    }
}
