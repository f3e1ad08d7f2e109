import Foundation
import Testing

@testable import BlobStore

@Suite struct FileNameCodingTests {
    @Test(arguments: [
        "plain", "../x", "/etc/passwd", "%2e%2e", "a/../../b", ".", "..", ".hidden", "~tilde", "a~b", "100%",
        "with space", "ünïcödé/📦", "a//b/", String(repeating: "x", count: 200), String(repeating: "/", count: 66),
    ])
    func namesAreSingleSafeComponentsThatRoundTrip(identifier: String) {
        let name = FileNameCoding.name(for: identifier)
        #expect(!name.contains("/"))
        #expect(name != "." && name != "..")
        #expect(!name.hasPrefix("."))
        #expect(name.utf8.count <= 255)
        #expect(FileNameCoding.decode(name) == .identifier(identifier))
    }

    @Test func longIdentifiersGetHashedNamesWithinTheLimit() {
        let ids = [
            String(repeating: "a", count: 1024),
            String(repeating: "é", count: 512),
            String(repeating: "/", count: 300),
            String(repeating: "a", count: 199) + "/" + String(repeating: "b", count: 50),
        ]
        var names = Set<String>()
        for id in ids {
            let name = FileNameCoding.name(for: id)
            #expect(name.utf8.count <= 255)
            #expect(name.contains("~"))
            #expect(!name.contains("/"))
            #expect(FileNameCoding.decode(name) == .hashed)
            // Cut at a character boundary: the name is valid UTF-8 that decodes to itself.
            #expect(String(validating: Array(name.utf8), as: UTF8.self) == name)
            names.insert(name)
        }
        #expect(names.count == ids.count)
        // Same prefix, different tails: different names.
        #expect(FileNameCoding.name(for: String(repeating: "q", count: 300) + "1") != FileNameCoding.name(for: String(repeating: "q", count: 300) + "2"))
    }

    @Test func randomIdentifiersNeverEscape() {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Character] = ["a", "/", ".", "%", "~", "é", "😀", " ", "2", "e", "Z"]
        for _ in 0..<2000 {
            let length = Int.random(in: 1...300, using: &generator)
            let id = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            guard BlobIdentifier.violation(in: id) == nil else { continue }
            let name = FileNameCoding.name(for: id)
            #expect(!name.contains("/") && !name.hasPrefix(".") && name.utf8.count <= 255)
            let decoded = FileNameCoding.decode(name)
            #expect(decoded == .identifier(id) || (decoded == .hashed && name.utf8.count > 0))
        }
    }

    /// Names are the on-disk format: the escaping written into a String's storage must give exactly the
    /// names the format describes (`/`, `%`, `~` and a leading `.` as uppercase `%XX`; longer than 200
    /// bytes: hashed), checked against that rule spelled out byte by byte.
    @Test func escapedNamesFollowTheFormatExactly() {
        /// The escaped name, and where a hashed name cuts it: the last byte boundary at most 160 bytes in
        /// that comes before a byte starting a UTF-8 sequence.
        func reference(_ identifier: String) -> (name: String, cut: Int) {
            var out: [UInt8] = []
            var cut = 0
            for (index, byte) in identifier.utf8.enumerated() {
                if byte & 0xC0 != 0x80, out.count <= 160 { cut = out.count }
                if byte == 0x2F || byte == 0x25 || byte == 0x7E || (index == 0 && byte == 0x2E) {
                    let hex = "%" + String(byte, radix: 16, uppercase: true)  // all four are ≥ 0x10: two digits
                    out.append(contentsOf: hex.utf8)
                } else {
                    out.append(byte)
                }
            }
            return (String(decoding: out, as: UTF8.self), cut)
        }
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Character] = ["a", "/", ".", "%", "~", "Z", "-", "0", "é"]
        var checked = 0
        for _ in 0..<3000 {
            let length = Int.random(in: 1...120, using: &generator)
            let id = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            let expected = reference(id)
            let name = FileNameCoding.name(for: id)
            if expected.name.utf8.count <= FileNameCoding.maximumPlainLength {
                #expect(name == expected.name, "\(id)")
                checked += 1
            } else {
                let prefix = String(decoding: Array(expected.name.utf8.prefix(expected.cut)), as: UTF8.self)
                #expect(name == prefix + "~" + ETag(checksum: XXH64.hash(Data(id.utf8))).rawValue, "\(id)")
            }
        }
        #expect(checked > 1000)
        #expect(FileNameCoding.name(for: "ünï/📦") == "ünï%2F📦")
        #expect(FileNameCoding.name(for: String(repeating: "/", count: 66)) == String(repeating: "%2F", count: 66))
        #expect(FileNameCoding.name(for: String(repeating: "/", count: 67)).contains("~"))
    }

    /// The store hashes names longer than the plain limit, so a longer plain name is not one of its
    /// own (found by the identifier-mapping fuzz target).
    @Test func overlongPlainNamesAreForeign() {
        let long = String(repeating: "j", count: FileNameCoding.maximumPlainLength + 1)
        #expect(FileNameCoding.decode(long) == .foreign)
        #expect(FileNameCoding.name(for: long) != long)
        let longest = String(repeating: "j", count: FileNameCoding.maximumPlainLength)
        #expect(FileNameCoding.decode(longest) == .identifier(longest))
    }

    @Test(arguments: [".tmp", "%zz", "%41", "a/b", "%2", "abc%2Fdef%"])
    func foreignNamesAreRecognised(name: String) {
        #expect(FileNameCoding.decode(name) == .foreign)
    }
}

@Suite struct BlobHeaderTests {
    func sample() -> BlobHeader {
        BlobHeader(
            identifier: "photos/cat.png", size: 1234, checksum: 0xDEAD_BEEF_0102_0304, createdNanoseconds: 1_700_000_000_123_456_789,
            modifiedNanoseconds: 1_700_000_001_000_000_000, contentType: "image/png", userMetadata: ["owner": "me", "tag": "ä"],
            image: ImageInfo(format: .png, width: 317, height: 211))
    }

    @Test func roundTrips() throws {
        let header = sample()
        let bytes = header.encoded()
        #expect(bytes.count == header.encodedLength)
        let decoded = try bytes.withUnsafeBytes { try BlobHeader.decode($0) }
        #expect(decoded == header)
    }

    @Test func everyTruncationIsReported() {
        let bytes = sample().encoded()
        for length in 0..<bytes.count {
            let result = bytes.withUnsafeBytes { raw in
                Result { () throws(BlobHeader.DecodeError) in try BlobHeader.decode(UnsafeRawBufferPointer(rebasing: raw[..<length])) }
            }
            guard case .failure(.truncated) = result else {
                Issue.record("length \(length) gave \(result)")
                return
            }
        }
    }

    @Test func fieldsThatAreNotUTF8AreRejectedEvenWithAValidChecksum() throws {
        let header = sample()
        var bytes = header.encoded()
        // The identifier is the first variable field: find its bytes.
        let identifier = Array(header.identifier.utf8)
        let identifierStart = try #require((0..<bytes.count).first { bytes[$0...].starts(with: identifier) })
        for invalid: [UInt8] in [[0xFF], [0xC3, 0x28], [0xE2, 0x82]] {
            var damaged = bytes
            damaged.replaceSubrange(identifierStart..<(identifierStart + invalid.count), with: invalid)
            let checksum = damaged.withUnsafeBytes { XXH64.hash(UnsafeRawBufferPointer(rebasing: $0[0..<(damaged.count - 8)])) }
            withUnsafeBytes(of: checksum.littleEndian) { damaged.replaceSubrange((damaged.count - 8)..., with: $0) }
            let result = damaged.withUnsafeBytes { raw in Result { () throws(BlobHeader.DecodeError) in try BlobHeader.decode(raw) } }
            guard case .failure(.invalid(let reason)) = result else {
                Issue.record("identifier bytes \(invalid) decoded as \(result)")
                continue
            }
            #expect(reason.contains("UTF-8"))
        }
        bytes = header.encoded()
        #expect(String(decoding: bytes[identifierStart..<(identifierStart + 14)], as: UTF8.self) == "photos/cat.png")
    }

    @Test func everySingleBitFlipIsDetected() {
        let bytes = sample().encoded()
        for index in 0..<bytes.count {
            var damaged = bytes
            damaged[index] ^= 0x10
            let result = damaged.withUnsafeBytes { raw in Result { () throws(BlobHeader.DecodeError) in try BlobHeader.decode(raw) } }
            if case .success = result { Issue.record("flip at byte \(index) went unnoticed") }
        }
    }
}

@Suite struct BucketMapTests {
    @Test func lookupFindsTheBucketWhoseRangeHoldsTheIdentifier() {
        var map = BucketMap.initial
        _ = map.split(bucketAt: 0, at: Array("m".utf8))
        map.pendingSplit = nil
        _ = map.split(bucketAt: 1, at: Array("t".utf8))
        map.pendingSplit = nil
        #expect(map.index(for: Array("a".utf8)) == 0)
        #expect(map.index(for: Array("l".utf8)) == 0)
        #expect(map.index(for: Array("m".utf8)) == 1)
        #expect(map.index(for: Array("s~".utf8)) == 1)
        #expect(map.index(for: Array("t".utf8)) == 2)
        #expect(map.index(for: Array("zzz".utf8)) == 2)
        #expect(map.index(for: []) == 0)
    }

    @Test func manifestRoundTripsIncludingPendingSplit() throws {
        var map = BucketMap.initial
        _ = map.split(bucketAt: 0, at: Array("köln/\u{1}".utf8))
        let parsed = try BucketMap.parse(map.manifestText()).get()
        #expect(parsed == map)
        #expect(parsed.pendingSplit == BucketMap.PendingSplit(newBucket: 2, fromBucket: 1))
    }

    @Test(arguments: [
        "", "blobstore-manifest 2\nnext 2\nbucket 1 -\n", "blobstore-manifest 1\nbucket 1 -\n",
        "blobstore-manifest 1\nnext 3\nbucket 1 61\n", "blobstore-manifest 1\nnext 3\nbucket 1 -\nbucket 2 62\nbucket 3 61\n",
        "blobstore-manifest 1\nnext 2\nbucket 1 -\nbucket 1 61\n", "blobstore-manifest 1\nnext 2\nbucket 1 -\nwhat\n",
        "blobstore-manifest 1\nnext 3\nbucket 1 -\nbucket 2 6\n",
    ])
    func malformedManifestsAreRefused(text: String) {
        #expect(throws: BucketMap.ManifestError.self) { try BucketMap.parse(text).get() }
    }
}
