import HTTP1
import Testing

/// A connection's receiving side made of fixed pieces: each fill or receive takes the next piece
/// (as a socket would deliver it), then the stream ends.
private final class PiecewiseInput: HTTPResponseInput {
    struct Failure: Error, Equatable {}
    private var pieces: [[UInt8]]
    private var buffer: [UInt8] = []
    private let failAtEnd: Bool

    init(_ text: String, pieceSize: Int, failAtEnd: Bool = false) {
        let bytes = Array(text.utf8)
        pieces = stride(from: 0, to: bytes.count, by: pieceSize).map { Array(bytes[$0..<min($0 + pieceSize, bytes.count)]) }
        self.failAtEnd = failAtEnd
    }

    var available: Int { buffer.count }
    func withUnconsumedBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R { buffer.withUnsafeBytes(body) }
    func consume(_ count: Int) { buffer.removeFirst(count) }
    func take(into destination: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(destination.count, buffer.count)
        destination.copyBytes(from: buffer[0..<count])
        buffer.removeFirst(count)
        return count
    }
    func fill() throws(Failure) -> Int {
        guard !pieces.isEmpty else { if failAtEnd { throw Failure() } else { return 0 } }
        let piece = pieces.removeFirst()
        buffer += piece
        return piece.count
    }
    func receive(into destination: UnsafeMutableRawBufferPointer) throws(Failure) -> Int {
        guard try fill() > 0 else { return 0 }
        return take(into: destination)
    }
}

@Suite struct ResponseReadingTests {
    /// Reads the head and the whole body in reads of at most `readSize` bytes.
    private func read(_ text: String, pieceSize: Int, readSize: Int = 3, method: HTTPMethod = .get) throws -> (status: Int, body: String) {
        let input = PiecewiseInput(text, pieceSize: pieceSize)
        let head = try #require(try input.readHead(method: method))
        var body = HTTPResponseBody(head.framing)
        var bytes: [UInt8] = []
        var scratch = [UInt8](repeating: 0, count: readSize)
        while let count = try scratch.withUnsafeMutableBytes({ try body.read(into: $0, from: input) }) { bytes += scratch[0..<count] }
        #expect(body.isComplete)
        return (Int(head.status.code), String(decoding: bytes, as: UTF8.self))
    }

    @Test(arguments: [1, 2, 5, 64])
    func everyFramingReadsTheSameBodyHoweverTheBytesArrive(pieceSize: Int) throws {
        let interim = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n"
        #expect(try read(interim + "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world", pieceSize: pieceSize) == (200, "hello world"))
        let chunked = "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;x=y\r\n world\r\n0\r\nT: v\r\n\r\n"
        #expect(try read(chunked, pieceSize: pieceSize) == (201, "hello world"))
        #expect(try read("HTTP/1.0 200 OK\r\n\r\nuntil the end", pieceSize: pieceSize) == (200, "until the end"))
        #expect(try read("HTTP/1.1 204 No Content\r\n\r\n", pieceSize: pieceSize) == (204, ""))
        #expect(try read("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n", pieceSize: pieceSize, method: .head) == (200, ""))
    }

    @Test func aHundredContinueStopsTheHeadWhenAsked() throws {
        let input = PiecewiseInput("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", pieceSize: 7)
        #expect(try input.readHead(method: .put, stopAtContinue: true) == nil)
        #expect(try input.readHead(method: .put, stopAtContinue: true)?.status.code == 200)
    }

    @Test func endsAndFailuresSayWhere() throws {
        func headError(_ text: String, failAtEnd: Bool = false) -> HTTPResponseReadError<PiecewiseInput.Failure>? {
            do throws(HTTPResponseReadError<PiecewiseInput.Failure>) {
                _ = try PiecewiseInput(text, pieceSize: 4, failAtEnd: failAtEnd).readHead(method: .get)
                return nil
            } catch { return error }
        }
        guard case .ended(inHead: false) = headError("") else { Issue.record("nothing at all"); return }
        guard case .ended(inHead: true) = headError("HTTP/1.1 200 OK\r\nConte") else { Issue.record("a cut head"); return }
        guard case .malformedHead = headError("HTTP/1.1 2xx OK\r\n\r\n") else { Issue.record("a bad status line"); return }
        guard case .input = headError("HTTP/1.1 200", failAtEnd: true) else { Issue.record("a receive failure"); return }

        func bodyError(_ text: String) -> HTTPResponseReadError<PiecewiseInput.Failure>? {
            let input = PiecewiseInput(text, pieceSize: 4)
            do throws(HTTPResponseReadError<PiecewiseInput.Failure>) {
                guard let head = try input.readHead(method: .get) else { return nil }
                var body = HTTPResponseBody(head.framing)
                let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 1)
                defer { scratch.deallocate() }
                while try body.read(into: scratch, from: input) != nil {}
                return nil
            } catch { return error }
        }
        guard case .ended(inHead: false) = bodyError("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort") else { Issue.record("a short body"); return }
        guard case .ended(inHead: false) = bodyError("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel") else { Issue.record("a cut chunk"); return }
        guard case .malformedChunked = bodyError("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n") else { Issue.record("a bad chunk size"); return }
        #expect(bodyError("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") == nil)
    }
}
