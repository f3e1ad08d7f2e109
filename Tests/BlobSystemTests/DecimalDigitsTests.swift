import BlobSystem
import Testing

@Suite struct DecimalDigitsTests {
    @Test(arguments: [0, 7, 9, 10, 99, 100, 1_234_567, Int(Int32.max), Int.max])
    func digitsMatchStringFormatting(value: Int) {
        let expected = String(value)
        #expect(DecimalDigits.count(value) == expected.utf8.count)
        var buffer = [UInt8](repeating: 0xFF, count: 24)
        let written = buffer.withUnsafeMutableBufferPointer { DecimalDigits.write(value, to: $0.baseAddress! + 2) }
        #expect(written == expected.utf8.count)
        #expect(Array(buffer[2..<(2 + written)]) == Array(expected.utf8))
        #expect(buffer[0..<2] == [0xFF, 0xFF] && buffer[(2 + written)...].allSatisfy { $0 == 0xFF }, "wrote outside its digits")
    }
}
