import Foundation
import Testing

@testable import S3BlobStore

/// SHA-256 against the FIPS 180-4 / CAVP example messages and, on random inputs, against the system's sha256sum.
@Suite struct SigningSHA256Tests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        // 448 bits: the padding's length field no longer fits in the message's block.
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        // 896 bits.
        ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
    ])
    func nistExampleMessages(message: String, expected: String) {
        #expect(SHA256.hash(message).hex == expected)
        #expect(SHA256.hash(Array(message.utf8)).hex == expected)
    }

    @Test func oneMillionA() {
        let expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        #expect(SHA256.hash([UInt8](repeating: 0x61, count: 1_000_000)).hex == expected)
        // The same million bytes in uneven pieces, so pending tails are carried across updates.
        var hasher = SHA256()
        let piece = [UInt8](repeating: 0x61, count: 999)
        var fed = 0
        while fed < 1_000_000 {
            let count = min(piece.count, 1_000_000 - fed)
            hasher.update(piece[0..<count])
            fed += count
        }
        #expect(hasher.finalize().hex == expected)
    }

    @Test func nonContiguousSequenceHashesLikeItsBytes() {
        let bytes = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        #expect(SHA256.hash(bytes.lazy.map { $0 }) == SHA256.hash(bytes))
    }

    @Test func digestBytesAndHexAgree() {
        let digest = SHA256.hash("abc")
        #expect(digest.bytes.count == 32)
        #expect(digest.bytes.map { String(format: "%02x", $0) }.joined() == digest.hex)
        #expect(digest != SHA256.hash("abd"))
    }

    /// Every split of each message into two updates (and byte-by-byte) gives the one-shot digest.
    @Test func updatesSplitAtEveryBoundary() {
        var random = SeededRandom(seed: 0x5348_4132_3536)
        for length in [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 200] {
            let message = random.bytes(count: length)
            let whole = SHA256.hash(message)
            for split in 0...length {
                var hasher = SHA256()
                hasher.update(message[0..<split])
                hasher.update(message[split...])
                #expect(hasher.finalize() == whole, "length \(length), split at \(split)")
            }
            var byteByByte = SHA256()
            for byte in message { byteByByte.update(CollectionOfOne(byte)) }
            #expect(byteByByte.finalize() == whole, "length \(length), byte by byte")
        }
    }

    /// Random messages of random lengths, hashed here in random pieces, against sha256sum.
    @Test(.enabled(if: ReferenceSHA256.isAvailable, "\(ReferenceSHA256.path) is not installed: no reference hasher"))
    func randomMessagesMatchSha256sum() throws {
        let seed = UInt64(UInt32.random(in: 0...UInt32.max))
        var random = SeededRandom(seed: seed)
        var messages: [[UInt8]] = []
        for _ in 0..<60 {
            let length = random.next() % 4 == 0 ? Int(random.next() % 70_000) : Int(random.next() % 300)
            messages.append(random.bytes(count: length))
        }
        let expected = try ReferenceSHA256.digests(of: messages)
        for (index, message) in messages.enumerated() {
            var hasher = SHA256()
            var offset = 0
            while offset < message.count {
                let count = min(Int(random.next() % 200), message.count - offset)
                hasher.update(message[offset..<(offset + count)])
                offset += count
            }
            #expect(hasher.finalize().hex == expected[index], "seed \(seed), message \(index) of \(message.count) bytes")
        }
    }
}

/// A deterministic generator (SplitMix64), so a failing seed can be replayed.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    mutating func bytes(count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) }
    }
}

/// The system's sha256sum, run once over a folder of files.
enum ReferenceSHA256 {
    static let path = "/usr/bin/sha256sum"

    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: path) }

    static func digests(of messages: [[UInt8]]) throws -> [String] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sha256-reference-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var files: [String] = []
        for (index, message) in messages.enumerated() {
            let file = folder.appendingPathComponent("m\(index)")
            try Data(message).write(to: file)
            files.append(file.path)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = files
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        try #require(lines.count == messages.count)
        return lines.map { String($0.prefix(64)) }
    }
}
