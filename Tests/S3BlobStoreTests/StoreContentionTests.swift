import BlobStore
import BlobSystem
import BlobTestSupport
import Foundation
import HTTP1
import S3BlobStore
import Testing

/// A put on a key that other writers keep changing, against a scripted gateway: each HEAD finds a
/// version newer than the last, and every conditional PUT is refused `412`. Needs no gateway.
@Suite struct StoreContentionTests {
    /// What the scripted gateway was asked: the method, and the condition a PUT carried.
    static func script(_ asked: Locked<[String]>) throws -> TransportTestServer {
        try TransportTestServer { connection in
            var version = 0
            while let (request, _) = connection.readRequest() {
                let headers = request.head.headers
                switch request.head.method {
                case .head:
                    version += 1
                    asked.withLock { $0.append("HEAD") }
                    connection.respond(headers: ["ETag: \"v\(version)\"", "Last-Modified: Mon, 23 Nov 2026 10:00:00 GMT"])
                case .put:
                    let condition = headers.first(name: "if-match").map { "If-Match \($0)" } ?? headers.first(name: "if-none-match").map { "If-None-Match \($0)" }
                    asked.withLock { $0.append(condition.map { "PUT \($0)" } ?? "PUT") }
                    if condition != nil {
                        connection.respond(
                            status: "412 Precondition Failed", headers: ["Content-Type: application/xml"],
                            text: "<?xml version=\"1.0\"?><Error><Code>PreconditionFailed</Code></Error>")
                    } else {
                        connection.respond(headers: ["ETag: \"stored\""])
                    }
                default:
                    asked.withLock { $0.append("\(request.head.method)") }
                    connection.respond(status: "400 Bad Request")
                }
            }
        }
    }

    @Test func anUnconditionalPutStoresThoughEveryConditionalPutLosesTheRace() async throws {
        let asked = Locked<[String]>([])
        let server = try Self.script(asked)
        defer { server.stop() }
        let configuration = S3Configuration(
            credentials: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret"), region: "us-east-1",
            endpoint: S3Endpoint(scheme: .http, host: "127.0.0.1", port: Int(server.endpoint.port)), addressingStyle: .path)
        let store = try S3BlobStore(name: "contended", bucket: "bucket", keyPrefix: "p", configuration: configuration)

        let metadata = try await store.put(Data("last writer wins".utf8), identifier: "key")
        #expect(metadata.etag == expectedETag(Data("last writer wins".utf8)))
        let requests = asked.withLock { $0 }
        let attempts = S3BlobStore.maximumPutAttempts
        #expect(requests.filter { $0.hasPrefix("PUT ") }.count == attempts - 1, "\(requests)")
        #expect(requests.last == "PUT", "the last attempt carries no condition: \(requests)")
        #expect(requests.count == 2 * attempts - 1, "a HEAD after each refused PUT: \(requests)")

        // A conditional put is refused instead: it never drops its condition.
        asked.withLock { $0.removeAll() }
        await #expect(throws: BlobStoreError.self) {
            try await store.put(Data("x".utf8), identifier: "key", options: PutOptions(condition: .ifMatch(expectedETag(Data("y".utf8)))))
        }
        #expect(!asked.withLock { $0 }.contains("PUT"))
    }
}
