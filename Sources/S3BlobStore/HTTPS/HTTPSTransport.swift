import Foundation
import FoundationNetworking
internal import BlobSystem
internal import HTTP1

#if canImport(Glibc)
import Glibc
#endif

/// HTTP/1.1 over TLS for S3 endpoints such as AWS's, through FoundationNetworking (libcurl and
/// OpenSSL underneath), with the same blocking shape as ``HTTPTransport``: ``start(_:to:)`` returns
/// once the response head has arrived, and the body is read from the ``TransportResponse``.
///
/// - Request bodies stream: a file region is read with `pread` and a source is pulled piece by
///   piece, both sent with their `Content-Length` (S3 refuses chunked uploads).
/// - Response bodies stream in bounded memory (``HTTPSExchange``: a slow reader spills to a file).
/// - Certificates are verified against the system's trust store (`/etc/ssl/certs`); a private CA
///   is trusted by adding it there (`update-ca-certificates`). Verification is never turned off.
/// - Connections are kept alive and pooled by libcurl, at most
///   ``TransportConfiguration/maximumConnectionsPerEndpoint`` per host.
///
/// **Blocking**: call it from threads of your own (``BlockingThreads``), never from the Swift
/// cooperative pool.
package final class HTTPSTransport: Sendable {
    /// The timeouts and limits.
    package let configuration: TransportConfiguration
    /// Body bytes a response holds in memory before it spills to a temporary file.
    package let responseMemoryLimit: Int
    private let session: URLSession
    private let router: HTTPSSessionRouter
    private let spilled = Locked<Int64>(0)

    /// Response body bytes that went through a spill file so far (a reader was slower than the
    /// network), for tests and metrics.
    package var spilledByteCount: Int64 { spilled.withLock { $0 } }

    /// A transport with its own URLSession.
    package init(configuration: TransportConfiguration = TransportConfiguration(), responseMemoryLimit: Int = 4 << 20) {
        self.configuration = configuration
        self.responseMemoryLimit = responseMemoryLimit
        let settings = URLSessionConfiguration.ephemeral
        settings.httpMaximumConnectionsPerHost = configuration.maximumConnectionsPerEndpoint
        settings.requestCachePolicy = .reloadIgnoringLocalCacheData
        settings.urlCache = nil
        settings.httpCookieStorage = nil
        settings.httpShouldSetCookies = false
        // FoundationNetworking's request timeout covers the whole transfer (its timer is not reset
        // by progress), so it is only a backstop here; the exchange enforces the idle timeouts.
        settings.timeoutIntervalForRequest = 24 * 60 * 60
        settings.timeoutIntervalForResource = 7 * 24 * 60 * 60
        let router = HTTPSSessionRouter()
        let queue = OperationQueue()
        queue.name = "S3BlobStore.https-delegate"
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: settings, delegate: router, delegateQueue: queue)
        self.router = router
    }

    deinit {
        session.invalidateAndCancel()
    }

    /// Sends `request` to `https://endpoint` and returns once the response head has arrived.
    /// Blocking.
    package func start(_ request: TransportRequest, to endpoint: TransportEndpoint) throws(TransportError) -> TransportResponse {
        let path = request.path
        func failure(_ reason: TransportError.Reason) -> TransportError {
            TransportError(endpoint: endpoint, method: request.method, path: path, reason: reason)
        }
        let host = endpoint.host.utf8.contains(UInt8(ascii: ":")) ? "[\(endpoint.host)]" : endpoint.host
        guard let url = URL(string: "https://\(host):\(endpoint.port)\(Self.dotSegmentsEscaped(request.target))") else {
            throw failure(.malformedResponse("the request target \(request.target) does not make a URL"))
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method.token
        for (name, value) in request.headers { urlRequest.addValue(value, forHTTPHeaderField: name) }
        let bodyStream = HTTPSRequestBodyStream(request.body)
        switch request.body {
        case .empty:
            if request.method == .put || request.method == .post { urlRequest.httpBody = Data() }
        case .bytes(let bytes):
            urlRequest.httpBody = Data(bytes)
        case .fileRegion, .stream:
            urlRequest.httpBodyStream = bodyStream
            urlRequest.setValue(String(request.body.length), forHTTPHeaderField: "Content-Length")
            // FoundationNetworking sends a stream of unknown length chunked; a Transfer-Encoding
            // field of blanks makes libcurl send neither that field nor chunks, so the declared
            // Content-Length frames the body, as S3 requires.
            urlRequest.setValue(" ", forHTTPHeaderField: "Transfer-Encoding")
        }
        let exchange = HTTPSExchange(memoryLimit: responseMemoryLimit, spilled: spilled)
        let task = session.dataTask(with: urlRequest)
        router.register(exchange, for: task)
        exchange.started(task)
        task.resume()

        // Waiting for the head covers sending the body too: upload progress counts as progress.
        let timeout = max(configuration.firstByteTimeout, configuration.idleTimeout)
        guard let head = exchange.waitForHead(timeout: timeout) else {
            router.unregister(task)
            if let reason = bodyStream?.failure { throw failure(.bodySource(reason)) }
            if let error = exchange.endError { throw failure(Self.reason(error, receiving: false)) }
            throw failure(.timedOut(.waitingForResponse, timeout))
        }
        var headers = HTTPHeaders()
        for (name, value) in head.allHeaderFields {
            guard let name = name as? String, let value = value as? String else { continue }
            headers.append(name: name, value: value)
        }
        let length = headers.first(name: "Content-Length").flatMap { Int64($0) }
        let body = HTTPSResponseBody(exchange: exchange, idleTimeout: configuration.idleTimeout, failure: failure) { [router] in
            router.unregister(task)
        }
        return TransportResponse(status: HTTPStatus(code: head.statusCode), headers: headers, contentLength: length, external: body, endpoint: endpoint, method: request.method, path: path)
    }

    /// `request` as it must be signed and sent over HTTPS to get an object's stored bytes.
    ///
    /// FoundationNetworking always lets libcurl decode a body whose `Content-Encoding` is gzip,
    /// deflate, br or zstd, so an object stored with such an encoding would be read decoded, not as
    /// stored. A GetObject therefore asks S3 to answer with `Content-Encoding: identity`
    /// (`response-content-encoding`, which S3 honours on signed requests); HeadObject still shows
    /// the stored encoding.
    package static func storedBytesRequest(_ request: S3Request) -> S3Request {
        guard request.method == "GET", request.queryItems.allSatisfy({ $0.name == "versionId" || $0.name == "partNumber" }) else {
            return request
        }
        var request = request
        request.queryItems.append(S3QueryItem("response-content-encoding", "identity"))
        return request
    }

    /// `target` with every path segment that is `.` or `..` sent as `%2E` or `%2E%2E`. libcurl
    /// resolves dot segments in the URL it is given, which would send another key than the one
    /// signed; S3 keys may hold such segments, and the gateway decodes the escaped dots back, so
    /// the key and its signature arrive as they were.
    static func dotSegmentsEscaped(_ target: String) -> String {
        let queryStart = target.firstIndex(of: "?") ?? target.endIndex
        let segments = target[..<queryStart].split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment == "." ? "%2E" : segment == ".." ? "%2E%2E" : String(segment)
        }
        return segments.joined(separator: "/") + target[queryStart...]
    }

    /// The transport's reason for a FoundationNetworking error.
    static func reason(_ error: any Error, receiving: Bool) -> TransportError.Reason {
        guard let error = error as? URLError else { return .malformedResponse("\(error)") }
        let text = (error as NSError).localizedDescription
        switch error.code {
        case .timedOut: return .timedOut(receiving ? .receiving : .waitingForResponse, .seconds(24 * 60 * 60))
        case .cannotFindHost, .dnsLookupFailed: return .unresolvable(text)
        case .cannotConnectToHost: return .connect(Errno(rawValue: ECONNREFUSED))
        case .networkConnectionLost: return receiving ? .closedInBody : .closedBeforeResponse
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
            .serverCertificateHasUnknownRoot, .clientCertificateRejected:
            return .malformedResponse("no TLS session: \(text)")
        default: return .malformedResponse("FoundationNetworking: \(text) (URLError \(error.code.rawValue))")
        }
    }
}

/// A response body read from an ``HTTPSExchange``.
final class HTTPSResponseBody: TransportResponseBody, @unchecked Sendable {
    private let exchange: HTTPSExchange
    private let idleTimeout: Duration
    private let failure: (TransportError.Reason) -> TransportError
    private let finish: @Sendable () -> Void
    private var done = false

    init(exchange: HTTPSExchange, idleTimeout: Duration, failure: @escaping (TransportError.Reason) -> TransportError, finish: @escaping @Sendable () -> Void) {
        self.exchange = exchange
        self.idleTimeout = idleTimeout
        self.failure = failure
        self.finish = finish
    }

    var isComplete: Bool { done }

    func read(into destination: UnsafeMutableRawBufferPointer) throws(TransportError) -> Int? {
        if done { return nil }
        do throws(HTTPSReadFailure) {
            guard let count = try exchange.read(into: destination, timeout: idleTimeout) else {
                done = true
                finish()
                return nil
            }
            return count
        } catch {
            close()
            switch error {
            case .task(let error): throw failure(HTTPSTransport.reason(error, receiving: true))
            case .timedOut: throw failure(.timedOut(.receiving, idleTimeout))
            case .spill(let why): throw failure(.malformedResponse("the body could not be buffered: \(why)"))
            }
        }
    }

    func close() {
        guard !done else { return }
        done = true
        exchange.close()
        finish()
    }
}
