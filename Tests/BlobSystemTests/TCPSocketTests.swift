import BlobSystem
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct TCPSocketTests {
    @Test func resolvesLiteralsAndLocalhostWithThePort() throws {
        let v4 = try TCPSocket.resolve(host: "127.0.0.1", port: 7480)
        #expect(v4.map(\.description) == ["127.0.0.1:7480"])
        #expect(v4.first?.family == AF_INET)
        let v6 = try TCPSocket.resolve(host: "::1", port: 80)
        #expect(v6.map(\.description) == ["[::1]:80"])
        #expect(try TCPSocket.resolve(host: "[::1]", port: 80) == v6, "a bracketed IPv6 literal (as in a URL) resolves too")
        let local = try TCPSocket.resolve(host: "localhost", port: 9)
        #expect(!local.isEmpty)
        #expect(local.allSatisfy { $0.port == 9 && ($0.family == AF_INET || $0.family == AF_INET6) })
    }

    @Test func anUnresolvableNameSaysSoNamingTheHost() throws {
        do {
            _ = try TCPSocket.resolve(host: "no-such-host.invalid", port: 80)
            Issue.record("resolved a .invalid name")
        } catch {
            guard case .unresolvable(let host, let reason) = error else {
                Issue.record("expected unresolvable, got \(error)")
                return
            }
            #expect(host == "no-such-host.invalid")
            #expect(!reason.isEmpty)
            #expect(error.description.contains("no-such-host.invalid"))
        }
    }

    @Test func connectsWithNoDelayAndMovesBytesBothWays() throws {
        let listener = try TCPSocket.listen()
        defer { try? listener.close() }
        let port = try TCPSocket.localAddress(listener).port
        #expect(port != 0)
        let client = try TCPSocket.connect(host: "localhost", port: port, timeout: .seconds(10))
        defer { try? client.close() }
        let server = try TCPSocket.accept(listener)
        defer { try? server.close() }

        var noDelay: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        #expect(getsockopt(client.rawValue, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, &length) == 0)
        #expect(noDelay != 0)
        #expect(fcntl(client.rawValue, F_GETFL) & O_NONBLOCK != 0, "connected sockets are non-blocking")
        #expect(fcntl(client.rawValue, F_GETFD) & FD_CLOEXEC != 0)

        let message = Array("GET / HTTP/1.1\r\n\r\n".utf8)
        try message.withUnsafeBytes { try client.sendAll($0, timeout: .seconds(10)) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = try buffer.withUnsafeMutableBytes { try server.receive(into: $0, timeout: .seconds(10)) }
        #expect(Array(buffer[..<count]) == message)

        try Array("HTTP/1.1 200 OK\r\n".utf8).withUnsafeBytes { try server.sendAll($0, timeout: .seconds(10)) }
        let back = try buffer.withUnsafeMutableBytes { try client.receive(into: $0, timeout: .seconds(10)) }
        #expect(String(decoding: buffer[..<back], as: UTF8.self) == "HTTP/1.1 200 OK\r\n")

        try server.close()
        #expect(try buffer.withUnsafeMutableBytes { try client.receive(into: $0, timeout: .seconds(10)) } == 0, "end of stream reads 0")
    }

    @Test func connectsOverIPv6WhenTheMachineHasIt() throws {
        let listener: FileDescriptor
        do { listener = try TCPSocket.listen(host: "::1") } catch {
            print("TCPSocketTests: skipped the IPv6 connect, no ::1 here (\(error))")
            return
        }
        defer { try? listener.close() }
        let address = try TCPSocket.localAddress(listener)
        #expect(address.family == AF_INET6)
        let client = try TCPSocket.connect(host: "::1", port: address.port, timeout: .seconds(10))
        defer { try? client.close() }
        let server = try TCPSocket.accept(listener)
        try? server.close()
    }

    @Test func aClosedPortIsRefusedWithTheErrno() throws {
        let listener = try TCPSocket.listen()
        let port = try TCPSocket.localAddress(listener).port
        try listener.close()
        #expect(throws: TCPSocketError.system(Errno(rawValue: ECONNREFUSED))) {
            try TCPSocket.connect(host: "127.0.0.1", port: port, timeout: .seconds(10))
        }
    }

    @Test func aConnectThatIsNeverAnsweredTimesOut() throws {
        // A listener that never accepts, with a backlog of 0: once its queue is full, Linux drops
        // further SYNs, so those connects hang until the timeout.
        let listener = try TCPSocket.listen(backlog: 0)
        defer { try? listener.close() }
        let port = try TCPSocket.localAddress(listener).port
        var held: [FileDescriptor] = []
        defer { for fd in held { try? fd.close() } }
        var timedOut = false
        for _ in 0..<16 {
            do {
                held.append(try TCPSocket.connect(host: "127.0.0.1", port: port, timeout: .milliseconds(300)))
            } catch {
                #expect(error == .timedOut(.milliseconds(300)))
                #expect(error.description == "timed out after 0.3 s")
                timedOut = true
                break
            }
        }
        #expect(timedOut, "16 connects to a full backlog all succeeded")
    }

    @Test func aSilentPeerMakesReceiveTimeOut() throws {
        let listener = try TCPSocket.listen()
        defer { try? listener.close() }
        let client = try TCPSocket.connect(host: "127.0.0.1", port: try TCPSocket.localAddress(listener).port, timeout: .seconds(10))
        defer { try? client.close() }
        let server = try TCPSocket.accept(listener)
        defer { try? server.close() }
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(throws: TCPSocketError.timedOut(.milliseconds(100))) {
            _ = try buffer.withUnsafeMutableBytes { try client.receive(into: $0, timeout: .milliseconds(100)) }
        }
    }

    @Test func aPeerThatStopsReadingMakesSendTimeOut() throws {
        let listener = try TCPSocket.listen()
        defer { try? listener.close() }
        let client = try TCPSocket.connect(host: "127.0.0.1", port: try TCPSocket.localAddress(listener).port, timeout: .seconds(10))
        defer { try? client.close() }
        let server = try TCPSocket.accept(listener)
        defer { try? server.close() }
        let chunk = [UInt8](repeating: 0x61, count: 1 << 20)
        var outcome: TCPSocketError?
        // The socket buffers hold a few MiB at most; the peer reads nothing.
        for _ in 0..<256 {
            do { try chunk.withUnsafeBytes { try client.sendAll($0, timeout: .milliseconds(100)) } } catch {
                outcome = error as? TCPSocketError
                break
            }
        }
        #expect(outcome == .timedOut(.milliseconds(100)))
    }
}
