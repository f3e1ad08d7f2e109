import Foundation
internal import HTTP1

/// Sends signed requests to one bucket: the seam between the request builders (``S3Bucket``),
/// Signature V4 and the HTTP transport, shared by every S3 operation of the backend.
///
/// **Blocking**, like ``HTTPTransport``: call it from threads of your own (``BlockingThreads``),
/// never from the Swift cooperative pool. Every error it throws is an ``S3ClientError`` naming the
/// endpoint, bucket, key and operation.
///
/// Requests are signed with the time from ``clock`` at the moment they are sent, so a retry or a
/// request that waited for a connection is never signed with a stale time.
package final class S3Client: Sendable {
    /// The bucket requests go to.
    package let bucket: S3Bucket
    /// Who signs.
    package let signer: SignatureV4
    /// The connection pool and HTTP/1.1 exchange.
    package let transport: HTTPTransport
    /// The time requests are signed with.
    package let clock: @Sendable () -> Date
    private let endpoint: TransportEndpoint
    /// The HTTPS transport, for an `https://` endpoint (``transport`` then stays unused).
    private let secure: HTTPSTransport?

    /// A client for `bucket` at `configuration`'s endpoint: plain HTTP through `transport`, HTTPS
    /// through an ``HTTPSTransport`` with `transport`'s configuration.
    package init(
        configuration: S3Configuration, bucket: String, transport: HTTPTransport = HTTPTransport(),
        clock: @escaping @Sendable () -> Date = { Date() }
    ) throws(S3ClientError) {
        let bucket = S3Bucket(configuration: configuration, name: bucket)
        guard let port = UInt16(exactly: configuration.endpoint.port) else {
            throw .refused(.invalidArgument(name: "endpoint", reason: "\(configuration.endpoint) has no valid TCP port", operation: "connect"))
        }
        secure = configuration.endpoint.scheme == .https ? HTTPSTransport(configuration: transport.configuration) : nil
        self.bucket = bucket
        signer = SignatureV4(configuration: configuration)
        self.transport = transport
        self.clock = clock
        endpoint = TransportEndpoint(host: bucket.addressingStyle == .virtualHosted ? bucket.host : configuration.endpoint.host, port: port)
    }

    /// Signs and sends `request` with `body` and returns once the answer's head has arrived,
    /// whatever its status; read (or close) its body. `isIdempotent` overrides the method's
    /// default for the transport's retry rule (clear it for a conditional PUT).
    package func start(
        _ request: S3Request, body: TransportBody = .empty, context: S3ErrorContext, isIdempotent: Bool? = nil,
        expectsContinue: Bool = false
    ) throws(S3ClientError) -> TransportResponse {
        let request = secure == nil ? request : HTTPSTransport.storedBytesRequest(request)
        let signed = signer.sign(request, at: clock())
        var headers = HTTPHeaders()
        for field in request.headers + signed.headersToAdd {
            headers.append(name: field.name, value: field.value)
        }
        let transportRequest = TransportRequest(
            method: HTTPMethod(request.method) ?? .other(request.method), target: request.target, headers: headers, body: body,
            isIdempotent: isIdempotent, expectsContinue: expectsContinue)
        do {
            if let secure { return try secure.start(transportRequest, to: endpoint) }
            return try transport.start(transportRequest, to: endpoint)
        } catch {
            throw .unreachable(context, error)
        }
    }

    /// Signs and sends `request`, reads the whole answer (at most `responseLimit` bytes) and
    /// returns it when its status is 2xx or in `alsoAccepted`; any other status throws
    /// ``S3ClientError/answered(_:)`` with the error document's code.
    package func send(
        _ request: S3Request, body: TransportBody = .empty, context: S3ErrorContext, alsoAccepted: Set<Int> = [],
        isIdempotent: Bool? = nil, expectsContinue: Bool = false, responseLimit: Int = 16 << 20
    ) throws(S3ClientError) -> TransportFullResponse {
        let response = try start(request, body: body, context: context, isIdempotent: isIdempotent, expectsContinue: expectsContinue)
        let bytes: [UInt8]
        do {
            bytes = try response.readAll(limit: responseLimit)
        } catch {
            throw .unreachable(context, error)
        }
        let status = response.status.code
        guard (200..<300).contains(status) || alsoAccepted.contains(status) else {
            throw .answered(S3Error(context: context, status: status, body: bytes))
        }
        return TransportFullResponse(status: response.status, headers: response.headers, body: bytes)
    }

    /// Reads the rest of a started answer whose status is an error, and throws it.
    package func fail(_ response: TransportResponse, context: S3ErrorContext) -> S3ClientError {
        let bytes = (try? response.readAll(limit: 1 << 20)) ?? []
        return .answered(S3Error(context: context, status: response.status.code, body: bytes))
    }
}
