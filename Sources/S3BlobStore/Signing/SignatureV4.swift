import Foundation

/// AWS Signature Version 4 (`AWS4-HMAC-SHA256`) for S3, over plain values: a request description
/// and a time in, the header fields to add (or a presigned target) out. No I/O and no clock of its
/// own, so a signature is reproducible in tests.
package struct SignatureV4: Sendable {
    /// The algorithm name written into the string to sign and the `Authorization` header.
    package static let algorithm = "AWS4-HMAC-SHA256"
    /// The longest a presigned URL stays valid, in seconds (seven days).
    package static let maximumPresignedLifetime = 604_800

    /// Who signs.
    package var credentials: AWSCredentials
    /// The region in the credential scope (a Ceph gateway does not check it; AWS does).
    package var region: String
    /// The service in the credential scope: `s3`.
    package var service: String
    /// Whether ``sign(_:at:)`` adds `x-amz-content-sha256` (S3 requires it; the generic
    /// Signature V4 test suite's requests do not carry it).
    package var sendsContentSHA256: Bool
    /// The last key derived, reused while its scope (day, secret, region, service) stays the same.
    private let keyCache = SigningKeyCache()

    /// A signer for `service` in `region`.
    package init(credentials: AWSCredentials, region: String, service: String = "s3", sendsContentSHA256: Bool = true) {
        self.credentials = credentials
        self.region = region
        self.service = service
        self.sendsContentSHA256 = sendsContentSHA256
    }

    /// A signer for S3 with `configuration`'s credentials and region.
    package init(configuration: S3Configuration) {
        self.init(credentials: configuration.credentials, region: configuration.region)
    }

    /// What signing produced: the fields to add to the request, and the intermediate texts for
    /// diagnosis (a `SignatureDoesNotMatch` answer is debugged by comparing canonical requests).
    package struct Signed: Sendable, Hashable {
        /// `x-amz-date`, `x-amz-content-sha256` (S3), `x-amz-security-token` (temporary
        /// credentials) and `Authorization`, in that order: add them all to the request as sent.
        package var headersToAdd: [S3HeaderField]
        /// The canonical request that was signed.
        package var canonicalRequest: String
        /// The string to sign.
        package var stringToSign: String
        /// The hex signature.
        package var signature: String
        /// The `Authorization` header's value.
        package var authorization: String
    }

    /// Signs `request` at `date` with an `Authorization` header.
    package func sign(_ request: S3Request, at date: Date) -> Signed {
        let time = AMZDate(date)
        var signedRequest = request
        var added = [S3HeaderField("x-amz-date", time.timestamp)]
        if sendsContentSHA256 {
            added.append(S3HeaderField("x-amz-content-sha256", request.payload.headerValue))
        }
        if let token = credentials.sessionToken {
            added.append(S3HeaderField("x-amz-security-token", token))
        }
        signedRequest.headers += added
        let canonical = CanonicalRequest(signedRequest)
        let scope = credentialScope(time)
        let stringToSign = Self.stringToSign(canonicalRequest: canonical.text, time: time, scope: scope)
        let signature = HMACSHA256.authenticationCode(for: stringToSign, key: signingKey(time)).hex
        let authorization = "\(Self.algorithm) Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(canonical.signedHeaders), Signature=\(signature)"
        added.append(S3HeaderField("Authorization", authorization))
        return Signed(
            headersToAdd: added, canonicalRequest: canonical.text, stringToSign: stringToSign,
            signature: signature, authorization: authorization
        )
    }

    /// Signs `request` in its query string (a presigned URL), valid for `expires` seconds from
    /// `date`. The payload is `UNSIGNED-PAYLOAD`; the request's headers (at least `Host`) are signed.
    /// Returns the request with the `X-Amz-*` parameters added, `X-Amz-Signature` last; send its
    /// ``S3Request/target``. S3 accepts `expires` from 1 second to 7 days; it is clamped to that.
    package func presign(_ request: S3Request, at date: Date, expires: Int) -> S3Request {
        let expires = min(max(expires, 1), Self.maximumPresignedLifetime)
        let time = AMZDate(date)
        let scope = credentialScope(time)
        var presigned = request
        presigned.payload = .unsigned
        let signedHeaders = CanonicalRequest.canonicalHeaders(request.headers).map(\.name).joined(separator: ";")
        presigned.queryItems += [
            S3QueryItem("X-Amz-Algorithm", Self.algorithm),
            S3QueryItem("X-Amz-Credential", "\(credentials.accessKeyID)/\(scope)"),
            S3QueryItem("X-Amz-Date", time.timestamp),
            S3QueryItem("X-Amz-Expires", String(expires)),
            S3QueryItem("X-Amz-SignedHeaders", signedHeaders),
        ]
        if let token = credentials.sessionToken {
            presigned.queryItems.append(S3QueryItem("X-Amz-Security-Token", token))
        }
        let canonical = CanonicalRequest(presigned)
        let stringToSign = Self.stringToSign(canonicalRequest: canonical.text, time: time, scope: scope)
        let signature = HMACSHA256.authenticationCode(for: stringToSign, key: signingKey(time)).hex
        presigned.queryItems.append(S3QueryItem("X-Amz-Signature", signature))
        return presigned
    }

    /// `date/region/service/aws4_request`.
    package func credentialScope(_ time: AMZDate) -> String {
        "\(time.dateStamp)/\(region)/\(service)/aws4_request"
    }

    /// The signing key: HMAC chained over the date, region, service and `aws4_request`, keyed
    /// first with `AWS4` and the secret. It changes once a day, so the last one is kept.
    package func signingKey(_ time: AMZDate) -> SHA256Digest {
        let scope = SigningKeyCache.Scope(dateStamp: time.dateStamp, credentials: credentials, region: region, service: service)
        return keyCache.key(for: scope) { Self.deriveSigningKey(time, secretAccessKey: credentials.secretAccessKey, region: region, service: service) }
    }

    /// The signing key derived afresh (four HMACs).
    package static func deriveSigningKey(_ time: AMZDate, secretAccessKey: String, region: String, service: String) -> SHA256Digest {
        let dateKey = HMACSHA256.authenticationCode(for: Array(time.dateStamp.utf8), key: Array(("AWS4" + secretAccessKey).utf8))
        let regionKey = HMACSHA256.authenticationCode(for: region, key: dateKey)
        let serviceKey = HMACSHA256.authenticationCode(for: service, key: regionKey)
        return HMACSHA256.authenticationCode(for: "aws4_request", key: serviceKey)
    }

    /// The algorithm, the timestamp, the scope and the hex hash of the canonical request, one per line.
    static func stringToSign(canonicalRequest: String, time: AMZDate, scope: String) -> String {
        "\(algorithm)\n\(time.timestamp)\n\(scope)\n\(SHA256.hash(canonicalRequest).hex)"
    }
}
