import BlobSystem
import Foundation
import HTTP1
import S3BlobStore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Bytes `position % 251` from a start position: a pattern in which every misplaced, lost or
/// repeated byte shows.
func patternByte(_ position: Int64) -> UInt8 { UInt8(truncatingIfNeeded: position % 251) }

/// A streamed body source producing the pattern in pieces of at most `pieceSize` bytes.
final class PatternSource: TransportBodySource, @unchecked Sendable {
    let length: Int64
    let pieceSize: Int
    private(set) var produced: Int64 = 0

    init(length: Int64, pieceSize: Int = 100_000) {
        self.length = length
        self.pieceSize = pieceSize
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let count = Int(min(Int64(min(buffer.count, pieceSize)), length - produced))
        for index in 0..<count { buffer[index] = patternByte(produced + Int64(index)) }
        produced += Int64(count)
        return count
    }
}

/// Counts a body's bytes and the positions where it departs from the pattern.
final class PatternCheck: @unchecked Sendable {
    private(set) var count: Int64 = 0
    private(set) var mismatches = 0

    func feed(_ bytes: UnsafeRawBufferPointer) {
        for byte in bytes {
            if byte != patternByte(count) { mismatches += 1 }
            count += 1
        }
    }
}

/// Streamed request and response bodies, chunked responses, and `Expect: 100-continue`.
@Suite struct TransportBodyTests {
    /// Reads each request's body against the pattern and answers `count mismatches`.
    static func checkingServer() throws -> TransportTestServer {
        try TransportTestServer { connection in
            while let request = connection.readHead() {
                let check = PatternCheck()
                guard connection.readBody(of: request, check.feed) != nil else { return }
                connection.respond(text: "\(check.count) \(check.mismatches)")
            }
        }
    }

    @Test func aLargeStreamedUploadArrivesWholeWithItsLength() throws {
        let server = try Self.checkingServer()
        defer { server.stop() }
        let length: Int64 = 8 << 20
        let source = PatternSource(length: length)
        let response = try HTTPTransport().send(TransportRequest(method: .put, target: "/b/large", body: .stream(length: length, source)), to: server.endpoint)
        #expect(String(decoding: response.body, as: UTF8.self) == "\(length) 0")
        #expect(source.produced == length)
    }

    @Test func aStreamThatEndsEarlyFailsTheRequestSayingSo() throws {
        let server = try Self.checkingServer()
        defer { server.stop() }
        let source = PatternSource(length: 1000)
        do {
            _ = try HTTPTransport().send(TransportRequest(method: .put, target: "/b/short", body: .stream(length: 5000, source)), to: server.endpoint)
            Issue.record("a body shorter than its Content-Length was sent")
        } catch {
            #expect(error.reason == .bodySource("the source ended after 1000 of its 5000 bytes"))
        }
    }

    @Test func aFileRegionIsSentFromItsOffsetAndCanBeSentAgain() throws {
        let server = try Self.checkingServer()
        defer { server.stop() }
        let path = NSTemporaryDirectory() + "transport-region-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let file = try FileDescriptor.open(path, [.readWrite, .create, .exclusive])
        defer {
            try? file.close()
            unlink(path)
        }
        // 3,000 filler bytes, then the pattern for 2 MB, then more filler.
        let contents = [UInt8](repeating: 0xEE, count: 3000) + (0..<2_000_000).map { patternByte(Int64($0)) } + [UInt8](repeating: 0xEE, count: 3000)
        try contents.withUnsafeBytes { try file.writeAll($0) }
        let transport = HTTPTransport()
        for _ in 0..<2 {
            let response = try transport.send(TransportRequest(method: .put, target: "/b/region", body: .fileRegion(file, offset: 3000, length: 2_000_000)), to: server.endpoint)
            #expect(String(decoding: response.body, as: UTF8.self) == "2000000 0")
        }
        do {
            _ = try transport.send(TransportRequest(method: .put, target: "/b/past-the-end", body: .fileRegion(file, offset: 3000, length: 3_000_000)), to: server.endpoint)
            Issue.record("a region past the end of the file was sent")
        } catch {
            #expect(error.reason == .bodySource("the file ended 2003000 bytes into a region of 3000000 from offset 3000"))
        }
    }

    @Test func aLargeResponseIsReadInPiecesOfTheCallersSize() throws {
        // 251 × 4,096 bytes repeat the pattern exactly, so 5 blocks make one unbroken pattern.
        let block = (0..<(251 * 4096)).map { patternByte(Int64($0)) }
        let blocks = 5
        let server = try TransportTestServer { connection in
            while let _ = connection.readRequest() {
                guard connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(block.count * blocks)\r\n\r\n") else { return }
                for _ in 0..<blocks { guard connection.write(block) else { return } }
            }
        }
        defer { server.stop() }
        let transport = HTTPTransport()
        for _ in 0..<2 {
            let response = try transport.start(TransportRequest(method: .get, target: "/b/large"), to: server.endpoint)
            #expect(response.contentLength == Int64(block.count * blocks))
            let check = PatternCheck()
            let piece = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
            defer { piece.deallocate() }
            var largest = 0
            while let count = try response.read(into: piece) {
                largest = max(largest, count)
                check.feed(UnsafeRawBufferPointer(rebasing: piece[0..<count]))
            }
            #expect(check.count == Int64(block.count * blocks))
            #expect(check.mismatches == 0)
            #expect(largest <= 64 * 1024)
            #expect(response.isComplete)
        }
        #expect(server.acceptedConnections == 1, "a body read to its end leaves the connection reusable")
    }

    @Test func aChunkedResponseIsDecodedAndItsConnectionReused() throws {
        let server = try TransportTestServer { connection in
            while let _ = connection.readRequest() {
                var wire = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
                var position: Int64 = 0
                for size in [1, 7, 4096, 70_000, 3] {
                    wire += Array((String(size, radix: 16) + ";ext=1\r\n").utf8)
                    wire += (0..<size).map { patternByte(position + Int64($0)) }
                    wire += Array("\r\n".utf8)
                    position += Int64(size)
                }
                wire += Array("0\r\nX-Trailer: yes\r\n\r\n".utf8)
                // In two writes split inside a chunk's data.
                guard connection.write(Array(wire[..<5000])), connection.write(Array(wire[5000...])) else { return }
            }
        }
        defer { server.stop() }
        let transport = HTTPTransport()
        for _ in 0..<2 {
            let response = try transport.send(TransportRequest(method: .get, target: "/b/chunked"), to: server.endpoint)
            #expect(response.body.count == 74_107)
            #expect(response.body.enumerated().allSatisfy { $0.element == patternByte(Int64($0.offset)) })
        }
        #expect(server.acceptedConnections == 1)
    }

    @Test func aResponseLargerThanTheLimitIsRefused() throws {
        let server = try TransportTestServer { connection in
            while let _ = connection.readRequest() { connection.respond(body: [UInt8](repeating: 1, count: 5000)) }
        }
        defer { server.stop() }
        #expect(throws: TransportError.self) {
            try HTTPTransport().send(TransportRequest(method: .get, target: "/b/k"), to: server.endpoint, responseLimit: 4096)
        }
    }

    @Test func aHeadResponseHasNoBodyButKeepsItsLength() throws {
        let server = try TransportTestServer { connection in
            while let _ = connection.readRequest() { connection.write("HTTP/1.1 200 OK\r\nContent-Length: 12345\r\nETag: \"abc\"\r\n\r\n") }
        }
        defer { server.stop() }
        let transport = HTTPTransport()
        for _ in 0..<2 {
            let response = try transport.start(TransportRequest(method: .head, target: "/b/k"), to: server.endpoint)
            #expect(response.isComplete)
            #expect(response.contentLength == 12345)
            #expect(response.headers.first(.etag) == "\"abc\"")
        }
        #expect(server.acceptedConnections == 1)
    }

    /// `/refuse` answers 403 to the head and records how many body bytes arrive before the client
    /// closes; anything else gets `100 Continue`, then its body is checked.
    static func continueServer(_ lateBytes: Locked<[Int]>) throws -> TransportTestServer {
        try TransportTestServer { connection in
            while let request = connection.readHead() {
                #expect(request.head.expectsContinue)
                if request.target == "/refuse" {
                    connection.respond(status: "403 Forbidden", headers: ["Content-Type: application/xml"], text: "<Error><Code>AccessDenied</Code></Error>")
                    let late = connection.waitForClose()
                    lateBytes.withLock { $0.append(late) }
                    return
                }
                connection.write("HTTP/1.1 100 Continue\r\n\r\n")
                let check = PatternCheck()
                guard connection.readBody(of: request, check.feed) != nil else { return }
                connection.respond(text: "\(check.count) \(check.mismatches)")
            }
        }
    }

    @Test func expectContinueSendsTheBodyAfterTheGoAhead() throws {
        let server = try Self.continueServer(Locked([]))
        defer { server.stop() }
        let transport = HTTPTransport(configuration: TransportConfiguration(continueTimeout: .seconds(30)))
        for _ in 0..<2 {
            let request = TransportRequest(method: .put, target: "/accept", body: .stream(length: 1 << 20, PatternSource(length: 1 << 20)), expectsContinue: true)
            let response = try transport.send(request, to: server.endpoint)
            #expect(String(decoding: response.body, as: UTF8.self) == "1048576 0")
        }
        #expect(server.acceptedConnections == 1)
    }

    @Test func aRefusalBeforeTheGoAheadCostsNoBodyAndClosesTheConnection() throws {
        let lateBytes = Locked<[Int]>([])
        let server = try Self.continueServer(lateBytes)
        defer { server.stop() }
        let transport = HTTPTransport(configuration: TransportConfiguration(continueTimeout: .seconds(30)))
        let source = PatternSource(length: 1 << 20)
        let request = TransportRequest(method: .put, target: "/refuse", body: .stream(length: 1 << 20, source), expectsContinue: true)
        let response = try transport.send(request, to: server.endpoint)
        #expect(response.status.code == 403)
        #expect(String(decoding: response.body, as: UTF8.self).contains("<Code>AccessDenied</Code>"))
        #expect(source.produced == 0, "the body was not read")
        #expect(transport.idleConnectionCount(for: server.endpoint) == 0)
        server.stop()
        #expect(lateBytes.withLock { $0 } == [0])
    }

    @Test func anAsyncProducerFeedsAStreamedUploadThroughAChannel() async throws {
        let server = try Self.checkingServer()
        defer { server.stop() }
        // The producer is a task on the cooperative pool, which the suite's blocking tests can hold
        // for long stretches on a busy machine: a generous timeout, so only a real stall fails.
        let channel = TransportChunkChannel(capacity: 256 * 1024, timeout: .seconds(300))
        let length: Int64 = 3 << 20
        // 251 × 400 bytes: every chunk starts where the pattern starts over, so one block serves all.
        let block = (0..<(251 * 400)).map { patternByte(Int64($0)) }
        let producer = Task {
            var position: Int64 = 0
            while position < length {
                let size = Int(min(Int64(block.count), length - position))
                try await channel.send(size == block.count ? block : Array(block[0..<size]))
                position += Int64(size)
            }
            channel.finish()
        }
        let endpoint = server.endpoint
        let transport = HTTPTransport()
        let response = try await BlockingThreads.run {
            defer { channel.close() }
            return try transport.send(TransportRequest(method: .put, target: "/b/async", body: .stream(length: length, channel)), to: endpoint)
        }
        try await producer.value
        #expect(String(decoding: response.body, as: UTF8.self) == "\(length) 0")
    }

    @Test func aProducerAheadOfAnEndedRequestIsReleasedWithAnError() async throws {
        let channel = TransportChunkChannel(capacity: 10)
        let producer = Task { try await channel.send([UInt8](repeating: 1, count: 100)) }
        channel.close()
        await #expect(throws: TransportChunkChannel.Closed.self) { try await producer.value }
    }

    @Test func aProducerThatSendsNothingFailsTheRequestAfterItsTimeout() throws {
        let server = try Self.checkingServer()
        defer { server.stop() }
        let channel = TransportChunkChannel(timeout: .milliseconds(200))
        defer { channel.close() }
        do {
            _ = try HTTPTransport().send(TransportRequest(method: .put, target: "/b/silent", body: .stream(length: 10, channel)), to: server.endpoint)
            Issue.record("a body nobody produced was sent")
        } catch {
            #expect(error.reason == .bodySource("the body's producer sent nothing for 0.2 s"))
            #expect(error.description == "PUT /b/silent on \(server.endpoint): the request body could not be read: the body's producer sent nothing for 0.2 s")
        }
    }

    @Test func aResponseWithHundredsOfMetadataFieldsIsRead() throws {
        let fields = (0..<600).map { "x-amz-meta-field\($0): value \($0)" }
        let server = try TransportTestServer { connection in
            while let _ = connection.readRequest() { connection.respond(headers: fields, text: "ok") }
        }
        defer { server.stop() }
        let response = try HTTPTransport().send(TransportRequest(method: .get, target: "/b/k"), to: server.endpoint)
        #expect(response.headers["x-amz-meta-field599"] == "value 599")
        #expect(response.headers.count == 601)
    }
}
