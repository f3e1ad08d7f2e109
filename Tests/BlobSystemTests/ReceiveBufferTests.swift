import BlobSystem
import Testing

/// The receive buffer both HTTP clients (blobd's and the S3 transport's) keep their unconsumed
/// bytes in: order kept across fills, room made by moving consumed bytes out or by growing.
struct ReceiveBufferTests {
    /// Fills `buffer` with `bytes` (as much as the room takes); returns how many went in.
    private func fill(_ buffer: inout ReceiveBuffer, with bytes: [UInt8]) -> Int {
        buffer.fill { room in
            let count = min(room.count, bytes.count)
            room.copyBytes(from: bytes[..<count])
            return count
        }
    }

    private func unconsumed(_ buffer: borrowing ReceiveBuffer) -> [UInt8] {
        buffer.withUnconsumedBytes { Array($0) }
    }

    @Test func bytesComeOutInTheOrderTheyWentInAcrossFillsConsumesAndTakes() {
        var buffer = ReceiveBuffer(initialCapacity: 16, minimumRead: 8)
        #expect(fill(&buffer, with: Array(0..<10)) == 10)
        buffer.consume(3)
        #expect(unconsumed(buffer) == Array(3..<10))
        // Room left is 6 < 8: the 7 unconsumed bytes move to the front, then 9 more fit.
        #expect(fill(&buffer, with: Array(10..<30)) == 9)
        #expect(unconsumed(buffer) == Array(3..<19))
        var taken = [UInt8](repeating: 0, count: 5)
        #expect(taken.withUnsafeMutableBytes { buffer.take(into: $0) } == 5)
        #expect(taken == Array(3..<8))
        #expect(buffer.available == 11)
    }

    @Test func aFullBufferGrowsAndKeepsItsBytes() {
        var buffer = ReceiveBuffer(initialCapacity: 8, minimumRead: 4)
        #expect(fill(&buffer, with: Array(0..<8)) == 8)
        // Nothing consumed and no room: it grows to at least the unconsumed bytes plus minimumRead.
        #expect(fill(&buffer, with: Array(8..<40)) >= 4)
        let bytes = unconsumed(buffer)
        #expect(bytes == Array(0..<UInt8(bytes.count)) && bytes.count >= 12)
    }

    @Test func consumingEverythingStartsTheNextFillAtTheFront() {
        var buffer = ReceiveBuffer(initialCapacity: 8, minimumRead: 4)
        #expect(fill(&buffer, with: Array(0..<6)) == 6)
        buffer.consume(6)
        #expect(buffer.available == 0)
        // All 8 bytes of room are offered again (not the 2 left behind the consumed ones).
        #expect(fill(&buffer, with: Array(100..<120)) == 8)
        #expect(unconsumed(buffer) == Array(100..<108))
    }
}
