import BlobSystem
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct UnixSocketTests {
    let folder: String

    init() throws {
        folder = "/tmp/bs-" + String(UUID().uuidString.prefix(8))
        try FileSystem.makeDirectories(folder)
    }

    @Test func sendBufferSizeIsSetAndReadBackAsTheKernelAccountsIt() throws {
        let path = folder + "/b.sock"
        let listener = try UnixSocket.listen(path: path)
        defer { try? listener.close() }
        let client = try UnixSocket.connect(path: path)
        defer { try? client.close() }
        let before = try client.sendBufferSize()
        try client.setSendBufferSize(64 * 1024)
        // Linux doubles the request for its bookkeeping.
        #expect(try client.sendBufferSize() == 128 * 1024)
        #expect(before != 128 * 1024)
        #expect(throws: Errno.self) { try FileDescriptor(rawValue: -1).setSendBufferSize(4096) }
    }

    @Test func listenerIsOwnerOnlyAndServesAConnectionWithPeerCredentials() throws {
        let path = folder + "/s.sock"
        let listener = try UnixSocket.listen(path: path)
        defer { try? listener.close() }
        let status = try FileSystem.linkStatus(path)
        #expect(status.kind == .socket)
        #expect(status.permissions == 0o600)

        let client = try UnixSocket.connect(path: path)
        defer { try? client.close() }
        let server = try #require(try UnixSocket.accept(listener, nonBlocking: true))
        defer { try? server.close() }
        let peer = try UnixSocket.peerCredentials(server)
        #expect(peer.userID == getuid())
        #expect(peer.processID == getpid())

        let message = Array("ping".utf8)
        #expect(try message.withUnsafeBytes { try client.send($0) } == 4)
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = try buffer.withUnsafeMutableBytes { try server.receive(into: $0) }
        #expect(count == 4)
        #expect(Array(buffer[..<4]) == message)
    }

    @Test func nonBlockingAcceptWithNothingWaitingReturnsNil() throws {
        let listener = try UnixSocket.listen(path: folder + "/idle.sock")
        defer { try? listener.close() }
        try listener.setNonBlocking(true)
        #expect(try UnixSocket.accept(listener, nonBlocking: true) == nil)
    }

    @Test func connectingToNothingFailsWithErrno() {
        #expect(throws: Errno.noSuchFileOrDirectory) { try UnixSocket.connect(path: folder + "/absent.sock") }
        #expect(throws: Errno.self) { try UnixSocket.connect(path: "/tmp/" + String(repeating: "x", count: 120)) }
    }

    @Test func epollReportsReadabilityWithTheRegisteredToken() throws {
        let path = folder + "/e.sock"
        let listener = try UnixSocket.listen(path: path)
        defer { try? listener.close() }
        let epoll = try Epoll()
        defer { try? epoll.descriptor.close() }
        try epoll.add(listener, events: .readable, token: 42)
        var events = [cblobEvent()]
        #expect(try epoll.wait(into: &events, timeoutMilliseconds: 0) == 0)
        let client = try UnixSocket.connect(path: path)
        defer { try? client.close() }
        #expect(try epoll.wait(into: &events, timeoutMilliseconds: 1000) == 1)
        #expect(events[0].data == 42)
        #expect(Epoll.Events(rawValue: events[0].events).contains(.readable))

        let wake = try EventSignal()
        try epoll.add(wake.descriptor, events: .readable, token: 7)
        wake.signal()
        var more = [cblobEvent(), cblobEvent()]
        let ready = try epoll.wait(into: &more, timeoutMilliseconds: 1000)
        #expect(more[..<ready].contains { $0.data == 7 })
        wake.drain()
    }

    @Test func sendFileCopiesFileBytesToASocket() throws {
        let path = folder + "/f.sock"
        let listener = try UnixSocket.listen(path: path)
        defer { try? listener.close() }
        let client = try UnixSocket.connect(path: path)
        defer { try? client.close() }
        let server = try #require(try UnixSocket.accept(listener, nonBlocking: false))
        defer { try? server.close() }
        let file = try FileDescriptor.open(folder + "/data", [.readWrite, .create])
        defer { try? file.close() }
        try Array("0123456789".utf8).withUnsafeBytes { try file.writeAll($0) }
        var offset: Int64 = 3
        #expect(try server.sendFile(from: file, offset: &offset, count: 4) == 4)
        #expect(offset == 7)
        var buffer = [UInt8](repeating: 0, count: 8)
        let count = try buffer.withUnsafeMutableBytes { try client.receive(into: $0) }
        #expect(String(decoding: buffer[..<(count ?? 0)], as: UTF8.self) == "3456")
    }
}

private func cblobEvent() -> Epoll.Event { Epoll.Event() }
