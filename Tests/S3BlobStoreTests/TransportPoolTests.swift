import BlobSystem
import HTTP1
import S3BlobStore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Keep-alive reuse, `Connection: close`, connections the server closed, and the retry rule.
@Suite struct TransportPoolTests {
    /// Answers every request on the connection with `200` and `echo <target>`.
    static let echo: @Sendable (TestConnection) throws -> Void = { connection in
        while let (request, _) = connection.readRequest() {
            guard connection.respond(text: "echo \(request.target)") else { return }
        }
    }

    @Test func keepAliveRequestsShareOneConnection() throws {
        let server = try TransportTestServer(handler: Self.echo)
        defer { server.stop() }
        let transport = HTTPTransport()
        for index in 0..<3 {
            let response = try transport.send(TransportRequest(method: .get, target: "/bucket/k\(index)"), to: server.endpoint)
            #expect(response.status.code == 200)
            #expect(String(decoding: response.body, as: UTF8.self) == "echo /bucket/k\(index)")
        }
        #expect(server.acceptedConnections == 1)
        #expect(transport.idleConnectionCount(for: server.endpoint) == 1)
    }

    @Test func theTransportSendsHostAndContentLength() throws {
        let seen = Locked<[String]>([])
        let server = try TransportTestServer { connection in
            while let (request, body) = connection.readRequest() {
                let fields = ["host", "content-length", "x-amz-date"].map { "\($0)=\(request.head.headers[$0] ?? "-")" }
                seen.withLock { $0.append("\(request.head.method.token) \(fields.joined(separator: " ")) \(body.count)") }
                connection.respond(status: "204 No Content")
            }
        }
        defer { server.stop() }
        let transport = HTTPTransport()
        var fields = HTTPHeaders()
        fields.append(name: "x-amz-date", value: "20261124T000000Z")
        _ = try transport.send(TransportRequest(method: .put, target: "/b/k", headers: fields, body: .bytes(Array("abc".utf8))), to: server.endpoint)
        _ = try transport.send(TransportRequest(method: .get, target: "/b/k"), to: server.endpoint)
        _ = try transport.send(TransportRequest(method: .put, target: "/b/empty"), to: server.endpoint)
        let host = "127.0.0.1:\(server.endpoint.port)"
        #expect(seen.withLock { $0 } == [
            "PUT host=\(host) content-length=3 x-amz-date=20261124T000000Z 3",
            "GET host=\(host) content-length=- x-amz-date=- 0",
            "PUT host=\(host) content-length=0 x-amz-date=- 0",
        ])
    }

    @Test func aConnectionAnsweredWithConnectionCloseIsNotReused() throws {
        let server = try TransportTestServer { connection in
            guard let (request, _) = connection.readRequest() else { return }
            connection.respond(headers: ["Connection: close"], text: "bye \(request.target)")
            _ = connection.waitForClose()
        }
        defer { server.stop() }
        let transport = HTTPTransport()
        for index in 0..<2 {
            let response = try transport.send(TransportRequest(method: .get, target: "/k\(index)"), to: server.endpoint)
            #expect(String(decoding: response.body, as: UTF8.self) == "bye /k\(index)")
            #expect(transport.idleConnectionCount(for: server.endpoint) == 0)
        }
        #expect(server.acceptedConnections == 2)
    }

    @Test func aConnectionTheServerClosedWhileIdleIsReplacedAndTheRequestSucceeds() throws {
        // Each connection answers one request and closes (no Connection: close field): the
        // client finds out only when it tries the idle connection again.
        let server = try TransportTestServer { connection in
            guard let (request, _) = connection.readRequest() else { return }
            connection.respond(text: "once \(request.target)")
            connection.close()
        }
        defer { server.stop() }
        let transport = HTTPTransport()
        for index in 0..<3 {
            let response = try transport.send(TransportRequest(method: .get, target: "/k\(index)"), to: server.endpoint)
            #expect(String(decoding: response.body, as: UTF8.self) == "once /k\(index)")
        }
        #expect(server.acceptedConnections == 3)
    }

    /// A server whose first connection answers one request, then reads the next one and closes
    /// without answering: the race between a gateway's idle close and a request sent on the idle
    /// connection. Later connections answer everything. Records every request with its connection.
    static func racingServer(_ seen: Locked<[String]>) throws -> TransportTestServer {
        try TransportTestServer { connection in
            var served = 0
            while let (request, body) = connection.readRequest() {
                seen.withLock { $0.append("\(connection.index): \(request.head.method.token) \(request.target) \(body.count)") }
                if connection.index == 0 && served == 1 {
                    connection.close()
                    return
                }
                served += 1
                connection.respond(text: "ok \(request.target)")
            }
        }
    }

    @Test func anIdempotentRequestLostToAnIdleCloseIsSentOnceMoreOnAFreshConnection() throws {
        let seen = Locked<[String]>([])
        let server = try Self.racingServer(seen)
        defer { server.stop() }
        let transport = HTTPTransport()
        _ = try transport.send(TransportRequest(method: .get, target: "/b/first"), to: server.endpoint)
        let response = try transport.send(TransportRequest(method: .put, target: "/b/second", body: .bytes([1, 2, 3])), to: server.endpoint)
        #expect(String(decoding: response.body, as: UTF8.self) == "ok /b/second")
        #expect(seen.withLock { $0 } == ["0: GET /b/first 0", "0: PUT /b/second 3", "1: PUT /b/second 3"])
    }

    @Test func aNonIdempotentRequestThatWasSentIsNotRetried() throws {
        let seen = Locked<[String]>([])
        let server = try Self.racingServer(seen)
        defer { server.stop() }
        let transport = HTTPTransport()
        _ = try transport.send(TransportRequest(method: .get, target: "/b/first"), to: server.endpoint)
        do {
            _ = try transport.send(TransportRequest(method: .post, target: "/b/second?uploads", body: .bytes([1])), to: server.endpoint)
            Issue.record("the POST succeeded")
        } catch {
            #expect(error.reason == .closedBeforeResponse)
            #expect(error.description == "POST /b/second on \(server.endpoint): the connection was closed before any response")
        }
        #expect(seen.withLock { $0 } == ["0: GET /b/first 0", "0: POST /b/second?uploads 1"])
        #expect(server.acceptedConnections == 1)
    }

    @Test func aConditionalPutMarkedNotIdempotentIsNotRetried() throws {
        let seen = Locked<[String]>([])
        let server = try Self.racingServer(seen)
        defer { server.stop() }
        let transport = HTTPTransport()
        _ = try transport.send(TransportRequest(method: .get, target: "/b/first"), to: server.endpoint)
        var fields = HTTPHeaders()
        fields.append(.ifNoneMatch, value: "*")
        let request = TransportRequest(method: .put, target: "/b/create-only", headers: fields, body: .bytes([1]), isIdempotent: false)
        #expect(throws: TransportError.self) { try transport.send(request, to: server.endpoint) }
        #expect(seen.withLock { $0 }.count == 2)
    }

    @Test func aStreamedBodyAlreadyPulledIsNotReplayed() throws {
        let seen = Locked<[String]>([])
        let server = try Self.racingServer(seen)
        defer { server.stop() }
        let transport = HTTPTransport()
        _ = try transport.send(TransportRequest(method: .get, target: "/b/first"), to: server.endpoint)
        let source = PatternSource(length: 1000)
        #expect(throws: TransportError.self) {
            try transport.send(TransportRequest(method: .put, target: "/b/streamed", body: .stream(length: 1000, source)), to: server.endpoint)
        }
        #expect(seen.withLock { $0 } == ["0: GET /b/first 0", "0: PUT /b/streamed 1000"])
    }

    @Test func anUnreachableEndpointIsNamedWithTheErrno() throws {
        let listener = try TCPSocket.listen()
        let port = try TCPSocket.localAddress(listener).port
        try listener.close()
        let endpoint = TransportEndpoint(host: "127.0.0.1", port: port)
        do {
            _ = try HTTPTransport().send(TransportRequest(method: .get, target: "/b/k?X-Amz-Signature=secret"), to: endpoint)
            Issue.record("connected to a closed port")
        } catch {
            #expect(error.reason == .connect(Errno(rawValue: ECONNREFUSED)))
            #expect(error.description == "GET /b/k on 127.0.0.1:\(port): cannot connect: ECONNREFUSED (Connection refused)")
        }
    }
}
