import BlobSystem
import BlobTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The fault-injecting proxy the S3 fault tests stand between blobd and the gateway: each fault it
/// claims to inject, it does (against a one-line echo server standing in for the gateway).
@Suite("FaultyGateway", .timeLimit(.minutes(1)))
struct FaultyGatewayTests {
    /// Echoes every byte it receives, per connection, until the client closes.
    final class EchoServer: @unchecked Sendable {
        let listener: FileDescriptor
        let port: UInt16

        init() throws {
            listener = try TCPSocket.listen()
            port = try TCPSocket.localAddress(listener).port
            let listener = self.listener
            Thread {
                while let client = try? TCPSocket.accept(listener) {
                    Thread {
                        var buffer = [UInt8](repeating: 0, count: 4096)
                        while true {
                            let count = buffer.withUnsafeMutableBytes { Glibc.read(client.rawValue, $0.baseAddress, $0.count) }
                            if count <= 0 { break }
                            _ = buffer.withUnsafeBytes { Glibc.write(client.rawValue, $0.baseAddress, count) }
                        }
                        try? client.close()
                    }.start()
                }
            }.start()
        }

        func stop() { _ = Glibc.shutdown(listener.rawValue, Int32(SHUT_RDWR)) }
    }

    /// Sends `text` on a fresh connection to `port` and returns what came back within `wait`, and
    /// whether the proxy closed the connection (`nil` when the connection was refused).
    func exchange(_ text: String, port: UInt16, wait: Duration = .milliseconds(500)) -> String? {
        exchangeClosing(text, port: port, wait: wait)?.text
    }

    func exchangeClosing(_ text: String, port: UInt16, wait: Duration = .milliseconds(500)) -> (text: String, closed: Bool)? {
        guard let socket = try? TCPSocket.connect(host: "127.0.0.1", port: port, timeout: .seconds(2)) else { return nil }
        defer { try? socket.close() }
        let bytes = Array(text.utf8)
        _ = try? bytes.withUnsafeBytes { try socket.sendAll($0, timeout: .seconds(2)) }
        var received: [UInt8] = []
        var closed = false
        let deadline = ContinuousClock.now + wait
        var buffer = [UInt8](repeating: 0, count: 4096)
        while received.count < bytes.count, ContinuousClock.now < deadline {
            let count = buffer.withUnsafeMutableBytes { try? socket.receive(into: $0, timeout: deadline - ContinuousClock.now) }
            guard let count else { break }
            if count == 0 {
                closed = true
                break
            }
            received += buffer[0..<count]
        }
        return (String(decoding: received, as: UTF8.self), closed)
    }

    @Test func forwardsCutsStallsAndGoesDownAndComesBackOnTheSamePort() throws {
        let echo = try EchoServer()
        defer { echo.stop() }
        let proxy = try FaultyGateway(upstreamURL: "http://127.0.0.1:\(echo.port)")
        defer { proxy.stop() }

        #expect(exchange("hello gateway", port: proxy.port) == "hello gateway")

        proxy.inject(.cutResponse(afterBytes: 5))
        #expect(exchange("hello gateway", port: proxy.port) == "hello")

        // A request cut short never gets its answer: the connection just closes.
        proxy.inject(.cutRequest(afterBytes: 3))
        let cut = exchangeClosing("hello gateway", port: proxy.port, wait: .seconds(5))
        #expect(cut?.text == "" && cut?.closed == true)

        // A stalled gateway answers nothing and keeps the connection open.
        proxy.inject(.stall)
        let stalled = exchangeClosing("hello gateway", port: proxy.port, wait: .milliseconds(300))
        #expect(stalled?.text == "" && stalled?.closed == false)

        // A selective stall swallows only the connections whose requests contain the text.
        proxy.inject(.stallRequests(containing: "/stuck"))
        #expect(proxy.stalledConnections == 0)
        let held = try TCPSocket.connect(host: "127.0.0.1", port: proxy.port, timeout: .seconds(2))
        try Array("GET /b/stuck HTTP/1.1".utf8).withUnsafeBytes { try held.sendAll($0, timeout: .seconds(2)) }
        #expect(proxy.waitForStalledConnections(1, timeout: .seconds(10)), "the matching connection is stalled")
        #expect(exchange("GET /b/free HTTP/1.1", port: proxy.port) == "GET /b/free HTTP/1.1", "others pass")
        let selected = exchangeClosing("GET /b/stuck HTTP/1.1", port: proxy.port, wait: .milliseconds(300))
        #expect(selected?.text == "" && selected?.closed == false, "a matching request gets nothing")
        try held.close()

        proxy.inject(.down)
        // The listener closes on the accepting thread: give it a moment.
        var refused = false
        for _ in 0..<100 where !refused {
            refused = exchange("x", port: proxy.port, wait: .milliseconds(50)) == nil
            if !refused { Thread.sleep(forTimeInterval: 0.01) }
        }
        #expect(refused, "connections are refused while the proxy is down")

        proxy.inject(.none)
        #expect(exchange("back again", port: proxy.port) == "back again")
    }
}
