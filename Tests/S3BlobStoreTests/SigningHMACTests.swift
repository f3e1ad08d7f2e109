import Testing

@testable import S3BlobStore

/// HMAC-SHA256 against RFC 4231's test cases 1–7.
@Suite struct SigningHMACTests {
    static let cases: [(name: String, key: [UInt8], data: [UInt8], expected: String)] = [
        ("1", [UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8),
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        ("2", Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        ("3", [UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50),
         "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        ("4", Array(1...25), [UInt8](repeating: 0xcd, count: 50),
         "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        // Case 5 publishes only the first 128 bits.
        ("5", [UInt8](repeating: 0x0c, count: 20), Array("Test With Truncation".utf8),
         "a3b6167473100ee06e0c796c2955552b"),
        ("6", [UInt8](repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        ("7", [UInt8](repeating: 0xaa, count: 131),
         Array("This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.".utf8),
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ]

    @Test(arguments: cases.indices)
    func rfc4231(index: Int) {
        let testCase = Self.cases[index]
        let code = HMACSHA256.authenticationCode(for: testCase.data, key: testCase.key).hex
        #expect(code.hasPrefix(testCase.expected), "RFC 4231 test case \(testCase.name)")
        // Streamed in two pieces, the code is the same.
        var hmac = HMACSHA256(key: testCase.key)
        let middle = testCase.data.count / 2
        hmac.update(testCase.data[..<middle])
        hmac.update(testCase.data[middle...])
        #expect(hmac.finalize().hex == code, "RFC 4231 test case \(testCase.name), streamed")
    }

    @Test func keyOfExactlyOneBlockIsUsedAsIs() {
        // A 64-byte key is not hashed first; a 65-byte one is. Their codes differ from each other
        // and match an HMAC keyed with the 65-byte key's digest.
        let key64 = [UInt8](repeating: 0x42, count: 64)
        let key65 = [UInt8](repeating: 0x42, count: 65)
        let message = Array("message".utf8)
        let code65 = HMACSHA256.authenticationCode(for: message, key: key65)
        #expect(HMACSHA256.authenticationCode(for: message, key: key64) != code65)
        #expect(HMACSHA256.authenticationCode(for: message, key: SHA256.hash(key65).bytes) == code65)
    }
}
