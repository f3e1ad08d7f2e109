import Glibc

/// Every request of one load-generator run, serialised to bytes before the clock starts.
///
/// Heads live back to back in one buffer; a PUT's body is the workload's content, sent from its own
/// buffer with the head in one `sendmsg`, so a plan of 100,000 PUTs costs about 10 MB, not 400 MB.
final class RequestPlan: @unchecked Sendable {
    // @unchecked: everything is written in `init` and only read afterwards, from the generator's threads.

    /// One request: where its head is, whether the workload's content follows as its body, and what
    /// the response must look like to count as a success.
    struct Request {
        /// Offset of the head in ``heads``.
        var headOffset: Int
        /// Length of the head (up to and including the blank line).
        var headLength: Int
        /// Whether ``body`` follows the head.
        var hasBody: Bool
        /// The exact response body length a success must have, or -1 for any (PUT responses differ
        /// between servers: blobd answers with a JSON description, nginx with nothing).
        var expectedBodyLength: Int
    }

    /// What a request does.
    enum Operation {
        /// GET of an existing blob that is `bytes` long.
        case get(identifier: String, bytes: Int)
        /// PUT of the workload's content under `identifier`.
        case put(identifier: String)
    }

    /// The store every request addresses (`/v1/stores/bench/…`); nginx's location uses the same prefix.
    static let pathPrefix = "/v1/stores/bench/blobs/"

    /// All heads, back to back.
    let heads: UnsafeMutableRawBufferPointer
    /// The requests, in the order the generator hands them out.
    let requests: [Request]
    /// The body of every PUT (kept alive with the plan).
    let workload: Workload

    /// Serialises `operations`; PUT bodies are `workload`'s content.
    init(_ operations: [Operation], workload: Workload) {
        self.workload = workload
        var bytes: [UInt8] = []
        bytes.reserveCapacity(operations.count * 128)
        var requests: [Request] = []
        requests.reserveCapacity(operations.count)
        let contentLength = String(workload.content.count)
        for operation in operations {
            let start = bytes.count
            switch operation {
            case .get(let identifier, let size):
                bytes += Array("GET \(Self.path(identifier)) HTTP/1.1\r\nHost: bench\r\n\r\n".utf8)
                requests.append(Request(headOffset: start, headLength: bytes.count - start, hasBody: false, expectedBodyLength: size))
            case .put(let identifier):
                // An explicit type, so neither server sniffs the bytes for an image type.
                bytes += Array(
                    ("PUT \(Self.path(identifier)) HTTP/1.1\r\nHost: bench\r\nContent-Type: application/octet-stream\r\n"
                        + "Content-Length: \(contentLength)\r\n\r\n").utf8)
                requests.append(Request(headOffset: start, headLength: bytes.count - start, hasBody: true, expectedBodyLength: -1))
            }
        }
        let heads = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 64)
        bytes.withUnsafeBytes { heads.copyMemory(from: $0) }
        self.heads = heads
        self.requests = requests
    }

    /// Requests whose heads are serialised already (the S3 scenarios' signed requests to the gateway);
    /// a request with `hasBody` sends `workload`'s content after its head.
    init(serialised: [(head: [UInt8], hasBody: Bool, expectedBodyLength: Int)], workload: Workload) {
        self.workload = workload
        let total = serialised.reduce(0) { $0 + $1.head.count }
        let heads = UnsafeMutableRawBufferPointer.allocate(byteCount: max(total, 1), alignment: 64)
        var offset = 0
        var requests: [Request] = []
        requests.reserveCapacity(serialised.count)
        for request in serialised {
            request.head.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: heads[offset...]).copyMemory(from: $0) }
            requests.append(
                Request(headOffset: offset, headLength: request.head.count, hasBody: request.hasBody, expectedBodyLength: request.expectedBodyLength))
            offset += request.head.count
        }
        self.heads = heads
        self.requests = requests
    }

    deinit { heads.deallocate() }

    /// The request path of `identifier`, percent-encoded as docs/PROTOCOL.md asks.
    static func path(_ identifier: String) -> String {
        pathPrefix + PercentEncoding.encode(identifier, keepingSlash: true)
    }

    /// A random token for identifiers that no earlier run used (PUTs must never overwrite here:
    /// an overwrite frees the old blocks, which costs a synchronous TRIM on this disk).
    static func freshToken() -> String {
        String(UInt64.random(in: 0...UInt64.max), radix: 36)
    }
}
