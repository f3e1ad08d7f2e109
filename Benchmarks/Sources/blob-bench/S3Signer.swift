import Glibc

/// AWS Signature V4 in the `Authorization` header, for the S3 scenarios' direct requests to the
/// gateway: path-style, payload `UNSIGNED-PAYLOAD`, signed headers `host`, `x-amz-content-sha256`
/// and `x-amz-date`: the same kind of request blobd's S3 client sends, so the gateway does the
/// same authentication work for both variants.
///
/// Every head is signed when the plan is built, before the clock starts; blobd signs each request
/// while it is timed. The direct client therefore does less work per request than blobd, which can
/// only make the blobd/direct ratios lower (conservative). One signing time per signer: the gateway
/// accepts a signature for 15 minutes, far longer than one run.
struct S3Signer: Sendable {
    let accessKeyID: String
    let region: String
    /// `host:port`, as sent in the `Host` header (and signed).
    let host: String
    /// `YYYYMMDD'T'HHMMSS'Z'`.
    let timestamp: String
    /// `YYYYMMDD/region/s3/aws4_request`.
    let scope: String
    /// HMAC chain over the date, region, service and `aws4_request`, keyed with `AWS4` + secret.
    private let signingKey: [UInt8]

    /// A signer for `gateway`, signing with the current time.
    init(_ gateway: S3Gateway) {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        func digits(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        let date = digits(parts.tm_year + 1900, 4) + digits(parts.tm_mon + 1, 2) + digits(parts.tm_mday, 2)
        timestamp = date + "T" + digits(parts.tm_hour, 2) + digits(parts.tm_min, 2) + digits(parts.tm_sec, 2) + "Z"
        accessKeyID = gateway.accessKeyID
        region = gateway.region
        host = gateway.hostHeader
        scope = "\(date)/\(region)/s3/aws4_request"
        var key = S3SHA256.hmac(key: Array(("AWS4" + gateway.secretAccessKey).utf8), Array(date.utf8))
        for part in [region, "s3", "aws4_request"] { key = S3SHA256.hmac(key: key, Array(part.utf8)) }
        signingKey = key
    }

    /// The complete head (through the blank line) of `method` on `key` in `bucket`, with
    /// `headers` (not signed) after the signed ones.
    func head(_ method: String, bucket: String, key: String, headers: [(name: String, value: String)] = []) -> [UInt8] {
        let path = "/" + bucket + "/" + PercentEncoding.encode(key, keepingSlash: true)
        let payload = "UNSIGNED-PAYLOAD"
        let signedHeaders = "host;x-amz-content-sha256;x-amz-date"
        let canonical = "\(method)\n\(path)\n\nhost:\(host)\nx-amz-content-sha256:\(payload)\nx-amz-date:\(timestamp)\n\n\(signedHeaders)\n\(payload)"
        let stringToSign = "AWS4-HMAC-SHA256\n\(timestamp)\n\(scope)\n\(S3SHA256.hex(S3SHA256.hash(Array(canonical.utf8))))"
        let signature = S3SHA256.hex(S3SHA256.hmac(key: signingKey, Array(stringToSign.utf8)))
        var text = "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\nx-amz-content-sha256: \(payload)\r\nx-amz-date: \(timestamp)\r\n"
        text += "Authorization: AWS4-HMAC-SHA256 Credential=\(accessKeyID)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)\r\n"
        for header in headers { text += "\(header.name): \(header.value)\r\n" }
        return Array((text + "\r\n").utf8)
    }
}
