import BlobTestSupport
import BlobSystem
import HTTP1
import S3BlobStore
import Testing

/// Every wait is bounded: a gateway that accepts and never answers, one that stalls mid-body, and
/// an endpoint whose every connection is busy.
@Suite struct TransportTimeoutTests {
    static let short = TransportConfiguration(
        connectTimeout: .milliseconds(300), firstByteTimeout: .milliseconds(300), idleTimeout: .milliseconds(300))

    /// `/stall` gets no answer (the handler waits for the client to go away); anything else `200`.
    static func stallingServer() throws -> TransportTestServer {
        try TransportTestServer { connection in
            while let (request, _) = connection.readRequest() {
                if request.target == "/stall" {
                    _ = connection.waitForClose()
                    return
                }
                if request.target == "/half" {
                    connection.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
                    _ = connection.waitForClose()
                    return
                }
                connection.respond(text: "fine")
            }
        }
    }

    @Test func aGatewayThatNeverAnswersTimesOutNamingTheRequest() async throws { try await onOwnThread { try Self().aGatewayThatNeverAnswersTimesOutNamingTheRequestBlocking() } }

    func aGatewayThatNeverAnswersTimesOutNamingTheRequestBlocking() throws {
        let server = try Self.stallingServer()
        defer { server.stop() }
        let transport = HTTPTransport(configuration: Self.short)
        do {
            _ = try transport.send(TransportRequest(method: .get, target: "/stall"), to: server.endpoint)
            Issue.record("a stalled request returned")
        } catch {
            #expect(error.reason == .timedOut(.waitingForResponse, .milliseconds(300)))
            #expect(error.description == "GET /stall on \(server.endpoint): timed out after 0.3 s waiting for the first response byte")
        }
        // The stalled connection was closed, not pooled; the next request gets a fresh one.
        #expect(transport.idleConnectionCount(for: server.endpoint) == 0)
        let response = try transport.send(TransportRequest(method: .get, target: "/ok"), to: server.endpoint)
        #expect(String(decoding: response.body, as: UTF8.self) == "fine")
        #expect(server.acceptedConnections == 2)
    }

    @Test func aStalledRequestDoesNotHoldUpAnotherOne() async throws {
        let server = try Self.stallingServer()
        defer { server.stop() }
        // The stalled request may wait long; the other one must not wait for it.
        let transport = HTTPTransport(configuration: TransportConfiguration(firstByteTimeout: .seconds(30)))
        let endpoint = server.endpoint
        let stalled = Task {
            try await BlockingThreads.run { try transport.start(TransportRequest(method: .get, target: "/stall"), to: endpoint) }
        }
        while server.acceptedConnections < 1 { try await Task.sleep(for: .milliseconds(10)) }
        let response = try await BlockingThreads.run { try transport.send(TransportRequest(method: .get, target: "/ok"), to: endpoint) }
        #expect(String(decoding: response.body, as: UTF8.self) == "fine")
        #expect(server.acceptedConnections == 2)
        server.stop()  // Closes the stalled connection: its request fails now.
        await #expect(throws: TransportError.self) { try await stalled.value }
    }

    @Test func aBodyThatStallsMidwayTimesOut() async throws { try await onOwnThread { try Self().aBodyThatStallsMidwayTimesOutBlocking() } }

    func aBodyThatStallsMidwayTimesOutBlocking() throws {
        let server = try Self.stallingServer()
        defer { server.stop() }
        let transport = HTTPTransport(configuration: Self.short)
        let response = try transport.start(TransportRequest(method: .get, target: "/half"), to: server.endpoint)
        #expect(response.status.code == 200)
        #expect(response.contentLength == 100)
        do {
            _ = try response.readAll()
            Issue.record("read a body the server never finished")
        } catch {
            #expect(error.reason == .timedOut(.receiving, .milliseconds(300)))
            #expect(error.description.hasSuffix("timed out after 0.3 s reading the response"))
        }
        #expect(transport.idleConnectionCount(for: server.endpoint) == 0)
    }

    @Test func whenEveryConnectionIsBusyANewRequestWaitsABoundedTime() async throws { try await onOwnThread { try Self().whenEveryConnectionIsBusyANewRequestWaitsABoundedTimeBlocking() } }

    func whenEveryConnectionIsBusyANewRequestWaitsABoundedTimeBlocking() throws {
        let server = try TransportTestServer { connection in
            while let _ = connection.readRequest() { connection.respond(text: "0123456789") }
        }
        defer { server.stop() }
        let transport = HTTPTransport(configuration: TransportConfiguration(connectTimeout: .milliseconds(200), maximumConnectionsPerEndpoint: 1))
        let held = try transport.start(TransportRequest(method: .get, target: "/held"), to: server.endpoint)
        do {
            _ = try transport.send(TransportRequest(method: .get, target: "/waiting"), to: server.endpoint)
            Issue.record("a second request ran while the only connection was busy")
        } catch {
            #expect(error.reason == .timedOut(.waitingForConnection, .milliseconds(200)))
            #expect(error.description == "GET /waiting on \(server.endpoint): timed out after 0.2 s waiting for a free connection")
        }
        #expect(try held.readAll() == Array("0123456789".utf8))
        let after = try transport.send(TransportRequest(method: .get, target: "/after"), to: server.endpoint)
        #expect(after.status.code == 200)
        #expect(server.acceptedConnections == 1, "the held connection went back to the pool and carried the next request")
    }

    @Test func anAbandonedResponseFreesItsSlotAndClosesItsConnection() async throws { try await onOwnThread { try Self().anAbandonedResponseFreesItsSlotAndClosesItsConnectionBlocking() } }

    func anAbandonedResponseFreesItsSlotAndClosesItsConnectionBlocking() throws {
        let server = try TransportTestServer { connection in
            while let _ = connection.readRequest() { connection.respond(body: [UInt8](repeating: 7, count: 100_000)) }
        }
        defer { server.stop() }
        let transport = HTTPTransport(configuration: TransportConfiguration(connectTimeout: .milliseconds(200), maximumConnectionsPerEndpoint: 1))
        for _ in 0..<3 {
            let response = try transport.start(TransportRequest(method: .get, target: "/big"), to: server.endpoint)
            var piece = [UInt8](repeating: 0, count: 10)
            #expect(try piece.withUnsafeMutableBytes { try response.read(into: $0) } == 10)
            response.close()
        }
        #expect(server.acceptedConnections == 3, "a half-read response's connection is never reused")
        #expect(transport.idleConnectionCount(for: server.endpoint) == 0)
    }
}
