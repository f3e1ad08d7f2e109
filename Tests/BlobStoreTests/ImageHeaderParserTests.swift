import Foundation
import Testing
@testable import BlobStore

/// A real image made by a real encoder (see Fixtures/images/make-fixtures.sh), with its true size and the
/// smallest prefix that holds that size, worked out independently of the parser (see the README there).
struct ImageFixture: Sendable, CustomTestStringConvertible {
    var file: String
    var format: ImageFormat
    var width: Int
    var height: Int
    var headerEnd: Int

    var testDescription: String { file }
    var info: ImageInfo { ImageInfo(format: format, width: width, height: height) }

    func bytes() throws -> [UInt8] {
        let dot = try #require(file.lastIndex(of: "."))
        let url = try #require(
            Bundle.module.url(
                forResource: String(file[..<dot]), withExtension: String(file[file.index(after: dot)...]),
                subdirectory: "Fixtures/images"
            ),
            "fixture \(file) is missing from the test bundle"
        )
        return [UInt8](try Data(contentsOf: url))
    }

    static let all: [ImageFixture] = [
        .init(file: "png-317x211.png", format: .png, width: 317, height: 211, headerEnd: 24),
        .init(file: "png-1x1.png", format: .png, width: 1, height: 1, headerEnd: 24),
        .init(file: "png-3x500.png", format: .png, width: 3, height: 500, headerEnd: 24),
        .init(file: "jpeg-317x211.jpg", format: .jpeg, width: 317, height: 211, headerEnd: 167),
        .init(file: "jpeg-progressive-317x211.jpg", format: .jpeg, width: 317, height: 211, headerEnd: 167),
        .init(file: "jpeg-exif-317x211.jpg", format: .jpeg, width: 317, height: 211, headerEnd: 9240),
        .init(file: "jpeg-1x1.jpg", format: .jpeg, width: 1, height: 1, headerEnd: 167),
        .init(file: "jpeg-3x500.jpg", format: .jpeg, width: 3, height: 500, headerEnd: 167),
        .init(file: "gif-317x211.gif", format: .gif, width: 317, height: 211, headerEnd: 10),
        .init(file: "gif87a-1x1.gif", format: .gif, width: 1, height: 1, headerEnd: 10),
        .init(file: "gif-3x500.gif", format: .gif, width: 3, height: 500, headerEnd: 10),
        .init(file: "webp-lossy-317x211.webp", format: .webp, width: 317, height: 211, headerEnd: 30),
        .init(file: "webp-lossy-3x500.webp", format: .webp, width: 3, height: 500, headerEnd: 30),
        .init(file: "webp-lossless-317x211.webp", format: .webp, width: 317, height: 211, headerEnd: 25),
        .init(file: "webp-lossless-3x500.webp", format: .webp, width: 3, height: 500, headerEnd: 25),
        .init(file: "webp-extended-alpha-317x211.webp", format: .webp, width: 317, height: 211, headerEnd: 30),
        .init(file: "webp-extended-exif-1x1.webp", format: .webp, width: 1, height: 1, headerEnd: 30),
        .init(file: "bmp-317x211.bmp", format: .bmp, width: 317, height: 211, headerEnd: 26),
        .init(file: "bmp-topdown-317x211.bmp", format: .bmp, width: 317, height: 211, headerEnd: 26),
        .init(file: "bmp-core-3x500.bmp", format: .bmp, width: 3, height: 500, headerEnd: 22),
        .init(file: "bmp-1x1.bmp", format: .bmp, width: 1, height: 1, headerEnd: 26),
        .init(file: "tiff-le-317x211.tif", format: .tiff, width: 317, height: 211, headerEnd: 3806),
        .init(file: "tiff-be-317x211.tif", format: .tiff, width: 317, height: 211, headerEnd: 3806),
        .init(file: "tiff-be-3x500.tif", format: .tiff, width: 3, height: 500, headerEnd: 724),
        .init(file: "heic-317x211.heic", format: .heic, width: 317, height: 211, headerEnd: 456),
        .init(file: "heic-3x500.heic", format: .heic, width: 3, height: 500, headerEnd: 454),
        .init(file: "avif-317x211.avif", format: .avif, width: 317, height: 211, headerEnd: 262),
        .init(file: "avif-1x1.avif", format: .avif, width: 1, height: 1, headerEnd: 262),
    ]
}

/// Words a failure for a prefix of `format` may legitimately start from: the format's own name, the container
/// name before the brand is known, or "no known image signature" while the signature itself is incomplete.
private func acceptableReasonWords(_ format: ImageFormat) -> [String] {
    let own = switch format {
    case .png: ["PNG"]
    case .jpeg: ["JPEG"]
    case .gif: ["GIF"]
    case .webp: ["WebP"]
    case .bmp: ["BMP"]
    case .tiff: ["TIFF"]
    case .heic: ["HEIC", "ISO-BMFF"]
    case .avif: ["AVIF", "ISO-BMFF"]
    }
    return own + ["no known image signature"]
}

private func failureReason(_ result: Result<ImageInfo, ImageParseFailure>) -> String? {
    if case .failure(let failure) = result { return failure.reason }
    return nil
}

/// Any outcome is fine for hostile input except a crash or a nonsensical success; this checks the latter.
private func expectSane(_ result: Result<ImageInfo, ImageParseFailure>, _ comment: @autoclosure () -> String) {
    switch result {
    case .success(let info):
        #expect(info.width >= 1 && info.height >= 1 && info.width <= Int(UInt32.max) && info.height <= Int(UInt32.max), "\(comment())")
    case .failure(let failure):
        #expect(!failure.reason.isEmpty, "\(comment())")
    }
}

@Suite("Image header parser: real fixtures")
struct ImageFixtureTests {
    @Test("every fixture parses to its true format and size", arguments: ImageFixture.all)
    func parsesFixture(_ fixture: ImageFixture) throws {
        let bytes = try fixture.bytes()
        #expect(bytes.count < 20 * 1024, "fixtures stay small")
        #expect(try ImageHeaderParser.parse(bytes).get() == fixture.info)
        #expect(try ImageHeaderParser.parse(Data(bytes)).get() == fixture.info)
        let prefix = Array(bytes.prefix(ImageHeaderParser.recommendedPrefixLength))
        #expect(try ImageHeaderParser.parse(prefix).get().mimeType == fixture.format.mimeType)
    }

    @Test("every prefix shorter than the header fails with a reason; every longer one succeeds", arguments: ImageFixture.all)
    func truncatedPrefixes(_ fixture: ImageFixture) throws {
        let bytes = try fixture.bytes()
        try #require(fixture.headerEnd <= bytes.count)
        let words = acceptableReasonWords(fixture.format)
        var problems: [String] = []
        for length in 0...bytes.count {
            let result = bytes.withUnsafeBytes { ImageHeaderParser.parse(UnsafeRawBufferPointer(rebasing: $0[..<length])) }
            if length < fixture.headerEnd {
                if let reason = failureReason(result) {
                    if !words.contains(where: { reason.contains($0) }) { problems.append("prefix \(length): \(reason)") }
                } else {
                    problems.append("prefix \(length) should fail but gave \(result)")
                }
            } else if (try? result.get()) != fixture.info {
                problems.append("prefix \(length) gave \(result)")
            }
        }
        // Reported together so one off-by-one does not print thousands of issues.
        #expect(problems.isEmpty, "\(fixture.file): \(problems.count) bad prefixes, first: \(problems.prefix(3))")
    }

    @Test("info(_:) gives what parse(_:) succeeds with — for every prefix and every flipped bit — and nil otherwise", arguments: ImageFixture.all)
    func infoAgreesWithParse(_ fixture: ImageFixture) throws {
        var bytes = try fixture.bytes()
        var disagreements: [String] = []
        func check(_ input: UnsafeRawBufferPointer, _ what: @autoclosure () -> String) {
            let parsed = try? ImageHeaderParser.parse(input).get()
            let info = ImageHeaderParser.info(input)
            if parsed != info { disagreements.append("\(what()): parse \(String(describing: parsed)), info \(String(describing: info))") }
        }
        for length in 0...bytes.count {
            bytes.withUnsafeBytes { check(UnsafeRawBufferPointer(rebasing: $0[..<length]), "prefix \(length)") }
        }
        for index in 0..<min(bytes.count, fixture.headerEnd + 16) {
            let original = bytes[index]
            for bit in 0..<8 {
                bytes[index] = original ^ (1 << bit)
                bytes.withUnsafeBytes { check($0, "bit \(bit) of byte \(index)") }
            }
            bytes[index] = original
        }
        #expect(bytes.withUnsafeBytes { ImageHeaderParser.info($0) } == fixture.info)
        #expect(disagreements.isEmpty, "\(fixture.file): \(disagreements.count) disagreements, first: \(disagreements.prefix(3))")
    }

    @Test("flipping any bit or overwriting any byte of a header never crashes", arguments: ImageFixture.all)
    func bitFlips(_ fixture: ImageFixture) throws {
        var bytes = try fixture.bytes()
        let span = min(bytes.count, fixture.headerEnd + 16)
        for index in 0..<span {
            let original = bytes[index]
            for bit in 0..<8 {
                bytes[index] = original ^ (1 << bit)
                expectSane(ImageHeaderParser.parse(bytes), "\(fixture.file) bit \(bit) of byte \(index)")
            }
            for replacement: UInt8 in [0x00, 0xFF, 0x01, 0x80] {
                bytes[index] = replacement
                expectSane(ImageHeaderParser.parse(bytes), "\(fixture.file) byte \(index) = \(replacement)")
            }
            bytes[index] = original
        }
    }
}

@Suite("Image header parser: non-images and garbage")
struct ImageGarbageTests {
    @Test("non-images fail with 'no known image signature'", arguments: [
        "",
        "hello, world\n",
        "{\"kind\": \"record\", \"value\": 42}",
        "%PDF-1.7\n%\u{e2}\u{e3}\u{cf}\u{d3}\n1 0 obj\n<< /Type /Catalog >>\nendobj\n",
        "<html><body>not an image</body></html>",
        "G",
        "\u{89}P",
    ])
    func nonImages(_ text: String) {
        let reason = failureReason(ImageHeaderParser.parse(Array(text.utf8)))
        #expect(reason?.hasPrefix("no known image signature") == true, "\(String(describing: reason))")
        #expect(Array(text.utf8).withUnsafeBytes { ImageHeaderParser.info($0) } == nil)
    }

    @Test func reasonsShowTheFirstBytesOrSayEmpty() {
        #expect(failureReason(ImageHeaderParser.parse(Array("<html>".utf8))) == "no known image signature (first bytes 3c 68 74 6d 6c 3e)")
        // Two digits per byte, zero-padded and lower-case, at most eight bytes.
        #expect(
            failureReason(ImageHeaderParser.parse([0x00, 0x0F, 0xA0, 0xFF, 0x10, 0x01, 0x7F, 0x9C, 0xEE]))
                == "no known image signature (first bytes 00 0f a0 ff 10 01 7f 9c)")
        #expect(failureReason(ImageHeaderParser.parse([UInt8]())) == "no known image signature (the input is empty)")
        #expect(failureReason(ImageHeaderParser.parse(Data())) == "no known image signature (the input is empty)")
    }

    @Test func otherContainersAreNotImages() {
        let wave = Array("RIFF".utf8) + [36, 0, 0, 0] + Array("WAVEfmt ".utf8) + [UInt8](repeating: 0, count: 24)
        #expect(failureReason(ImageHeaderParser.parse(wave)) == "no known image signature (RIFF container of type 'WAVE', not WEBP)")
        let mp4 = BMFFBuilder.box("ftyp", Array("isom".utf8) + [0, 0, 2, 0] + Array("isomiso2mp41".utf8)) + BMFFBuilder.box("mdat", [1, 2, 3])
        let reason = failureReason(ImageHeaderParser.parse(mp4))
        #expect(reason?.hasPrefix("no known image signature (ISO-BMFF file with brand 'isom'") == true, "\(String(describing: reason))")
    }

    @Test("random garbage never crashes")
    func randomGarbage() {
        var rng = SplitMix64(seed: 0x1BAD_B002)
        for round in 0..<20_000 {
            let count = Int.random(in: 0..<300, using: &rng)
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
            expectSane(ImageHeaderParser.parse(bytes), "garbage round \(round)")
        }
    }

    @Test("garbage behind every real signature never crashes")
    func garbageBehindSignatures() {
        let signatures: [[UInt8]] = [
            [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8),
            [0xFF, 0xD8, 0xFF], [0xFF, 0xD8, 0xFF, 0xE1], Array("GIF89a".utf8), Array("GIF87a".utf8),
            Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBPVP8 ".utf8), Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBPVP8L".utf8),
            Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBPVP8X".utf8), [0x42, 0x4D],
            [0x49, 0x49, 0x2A, 0x00], [0x4D, 0x4D, 0x00, 0x2A], [0x49, 0x49, 0x2B, 0x00, 8, 0, 0, 0], [0x4D, 0x4D, 0x00, 0x2B, 0, 8, 0, 0],
            [0, 0, 0, 24] + Array("ftypheic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8),
            [0, 0, 0, 24] + Array("ftypavif".utf8) + [0, 0, 0, 0] + Array("mif1avif".utf8),
            [0, 0, 0, 24] + Array("ftypavif".utf8) + [0, 0, 0, 0] + Array("mif1avif".utf8) + [0, 0, 0, 200] + Array("meta".utf8) + [0, 0, 0, 0],
        ]
        var rng = SplitMix64(seed: 0x5EED)
        for signature in signatures {
            for round in 0..<3_000 {
                let count = Int.random(in: 0..<400, using: &rng)
                // Small values make plausible lengths, counts and offsets, which reach deeper than uniform bytes.
                let tail = (0..<count).map { _ in
                    Bool.random(using: &rng) ? UInt8.random(in: 0...255, using: &rng) : UInt8.random(in: 0...16, using: &rng)
                }
                expectSane(ImageHeaderParser.parse(signature + tail), "signature \(signature.prefix(4)) round \(round)")
            }
        }
    }
}

/// Builders for hand-made ISO-BMFF boxes in the hostile cases.
private enum BMFFBuilder {
    static func be32(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
    static func be16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(truncatingIfNeeded: value)] }
    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        be32(UInt32(8 + payload.count)) + Array(type.utf8) + payload
    }
    static func fullBox(_ type: String, version: UInt8 = 0, flags: UInt32 = 0, _ payload: [UInt8]) -> [UInt8] {
        box(type, [version] + be32(flags).suffix(3) + payload)
    }
    static func ftyp(_ major: String, _ compatible: [String]) -> [UInt8] {
        box("ftyp", Array(major.utf8) + [0, 0, 0, 0] + compatible.flatMap { Array($0.utf8) })
    }
    static func ispe(_ width: UInt32, _ height: UInt32) -> [UInt8] { fullBox("ispe", be32(width) + be32(height)) }
    static func pitm(_ item: UInt16) -> [UInt8] { fullBox("pitm", be16(item)) }
    /// ipma version 0 with 1-byte indices: (item, [property index]).
    static func ipma(_ entries: [(UInt16, [UInt8])]) -> [UInt8] {
        fullBox("ipma", be32(UInt32(entries.count)) + entries.flatMap { be16($0.0) + [UInt8($0.1.count)] + $0.1 })
    }
    static func meta(_ children: [UInt8]...) -> [UInt8] { fullBox("meta", children.flatMap { $0 }) }
    static func iprp(ipco properties: [UInt8]..., ipma: [UInt8]? = nil) -> [UInt8] {
        box("iprp", box("ipco", properties.flatMap { $0 }) + (ipma ?? []))
    }
    static func heic(_ meta: [UInt8]) -> [UInt8] { ftyp("heic", ["mif1", "heic"]) + meta }
}

@Suite("Image header parser: hand-built and hostile headers")
struct ImageHostileHeaderTests {
    private func reason(_ bytes: [UInt8]) -> String {
        failureReason(ImageHeaderParser.parse(bytes)) ?? "unexpectedly parsed as \(ImageHeaderParser.parse(bytes))"
    }

    private func info(_ bytes: [UInt8]) -> ImageInfo? { try? ImageHeaderParser.parse(bytes).get() }

    @Test func mimeTypesAndCodable() throws {
        #expect(ImageFormat.allCases.map(\.mimeType) == [
            "image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp", "image/tiff", "image/heic", "image/avif",
        ])
        let info = ImageInfo(format: .avif, width: 3, height: 500)
        #expect(info.mimeType == "image/avif")
        #expect(try JSONDecoder().decode(ImageInfo.self, from: JSONEncoder().encode(info)) == info)
        #expect("\(ImageParseFailure(reason: "why"))" == "why")
    }

    // MARK: PNG

    private func png(width: UInt32, height: UInt32, type: String = "IHDR", length: UInt32 = 13) -> [UInt8] {
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + BMFFBuilder.be32(length) + Array(type.utf8)
            + BMFFBuilder.be32(width) + BMFFBuilder.be32(height) + [8, 6, 0, 0, 0]
    }

    @Test func pngCases() {
        #expect(info(png(width: 70000, height: 2)) == ImageInfo(format: .png, width: 70000, height: 2))
        #expect(reason(Array(png(width: 1, height: 1).prefix(20))) == "PNG header truncated: 20 of 24 bytes")
        #expect(reason(png(width: 1, height: 1, type: "IDAT")) == "PNG first chunk is 'IDAT', not 'IHDR'")
        #expect(reason(png(width: 1, height: 1, length: 0xFFFF_FFFF)).contains("IHDR chunk length"))
        #expect(reason(png(width: 0, height: 5)).contains("PNG declares a zero dimension"))
        #expect(reason(png(width: 0x8000_0000, height: 5)).contains("2^31-1"))
        let crushed = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + BMFFBuilder.be32(4) + Array("CgBI".utf8) + [0x50, 0, 0x20, 2, 0, 0, 0, 0]
            + Array(png(width: 9, height: 7).dropFirst(8))
        #expect(info(crushed) == ImageInfo(format: .png, width: 9, height: 7))
    }

    // MARK: GIF, BMP, WebP

    @Test func gifAndBmpCases() {
        #expect(reason(Array("GIF89a".utf8) + [0, 0, 5, 0]).contains("GIF declares a zero dimension"))
        #expect(reason(Array("GIF89a".utf8) + [1]) == "GIF logical screen descriptor truncated: 7 of 10 bytes")
        func bmp(header: UInt32, _ fields: [UInt8]) -> [UInt8] {
            [0x42, 0x4D] + [UInt8](repeating: 0, count: 12) + [UInt8(header), 0, 0, 0] + fields
        }
        // Height -7 (top-down) and Int32.min, whose magnitude still fits the 32-bit metadata field.
        #expect(info(bmp(header: 40, [5, 0, 0, 0, 0xF9, 0xFF, 0xFF, 0xFF])) == ImageInfo(format: .bmp, width: 5, height: 7))
        #expect(info(bmp(header: 124, [5, 0, 0, 0, 0, 0, 0, 0x80])) == ImageInfo(format: .bmp, width: 5, height: 2_147_483_648))
        #expect(reason(bmp(header: 40, [0xFB, 0xFF, 0xFF, 0xFF, 7, 0, 0, 0])) == "BMP declares a negative width -5")
        #expect(reason(bmp(header: 12, [5, 0, 0, 0])).contains("BMP declares a zero dimension"))
        #expect(reason(bmp(header: 41, [5, 0, 0, 0, 7, 0, 0, 0])).hasPrefix("no known image signature (begins with 'BM', but BMP DIB header size 41"))
        #expect(reason(Array("BMW owners' club: meeting minutes, 2026".utf8)).hasPrefix("no known image signature"))
        #expect(reason(bmp(header: 40, [5, 0, 0])) == "BMP BITMAPINFOHEADER truncated: 21 of 26 bytes")
    }

    @Test func webpCases() {
        func webp(_ chunk: String, _ payload: [UInt8]) -> [UInt8] {
            Array("RIFF".utf8) + [100, 0, 0, 0] + Array("WEBP".utf8) + Array(chunk.utf8) + [UInt8(payload.count), 0, 0, 0] + payload
        }
        #expect(info(webp("VP8X", [0x10, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])) == ImageInfo(format: .webp, width: 1 << 24, height: 1 << 24))
        #expect(reason(webp("VP8 ", [1, 0, 0, 0x9D, 0x01, 0x2A, 5, 0, 5, 0])) == "WebP VP8 frame is not a key frame")
        #expect(reason(webp("VP8 ", [0, 0, 0, 0x9D, 0x01, 0x2B, 5, 0, 5, 0])).contains("start code"))
        #expect(reason(webp("VP8 ", [0, 0, 0, 0x9D, 0x01, 0x2A, 0, 0xC0, 5, 0])).contains("zero dimension"))
        #expect(reason(webp("VP8L", [0x2E, 0, 0, 0, 0])).contains("signature byte"))
        #expect(reason(webp("ALPH", [0, 0, 0, 0])) == "WebP first chunk is 'ALPH', not 'VP8 ', 'VP8L' or 'VP8X'")
        #expect(reason(Array(webp("VP8X", [0, 0, 0, 0, 1, 0, 0, 1, 0, 0]).prefix(27))) == "WebP VP8X header truncated: 27 of 30 bytes")
    }

    // MARK: JPEG

    private let sof0 = [0xFF, 0xC0, 0x00, 0x11, 0x08, 0x00, 0x0A, 0x00, 0x0B, 0x03] + [UInt8](repeating: 1, count: 9)

    @Test func jpegWalk() {
        let soi: [UInt8] = [0xFF, 0xD8]
        let app0: [UInt8] = [0xFF, 0xE0, 0x00, 0x06, 0x4A, 0x46, 0x49, 0x46]
        let dht: [UInt8] = [0xFF, 0xC4, 0x00, 0x04, 0x00, 0x00] // C4 sits in the SOF range but is not one
        let com: [UInt8] = [0xFF, 0xFE, 0x00, 0x02]
        let expected = ImageInfo(format: .jpeg, width: 11, height: 10)
        #expect(info(soi + app0 + dht + com + sof0) == expected)
        // Fill bytes before markers, and a standalone RST marker, are skipped.
        #expect(info(soi + [0xFF, 0xFF, 0xFF] + app0 + [0xFF, 0xD3] + [0xFF, 0xFF] + sof0) == expected)
        #expect(info(soi + [0xFF, 0xC8, 0x00, 0x02, 0xFF, 0xCC, 0x00, 0x02] + sof0) == expected)
        for marker: UInt8 in [0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF] {
            var frame = sof0
            frame[1] = marker
            #expect(info(soi + frame) == expected, "SOF marker \(marker)")
        }
    }

    @Test func jpegHostileSegments() {
        let soi: [UInt8] = [0xFF, 0xD8]
        #expect(reason(soi + [0xFF, 0xE1, 0x00, 0x00] + sof0).contains("has length 0, below the minimum of 2"))
        #expect(reason(soi + [0xFF, 0xE1, 0x00, 0x01] + sof0).contains("has length 1, below the minimum of 2"))
        // A length running far past the data must end the walk, not read beyond it.
        #expect(reason(soi + [0xFF, 0xE1, 0xFF, 0xFF] + sof0).contains("without a SOF marker"))
        #expect(reason(soi + [0xFF, 0xE1, 0x00, 0x04, 0x00, 0x00, 0x12] + sof0).contains("expected a marker at offset 8"))
        #expect(reason(soi + [0xFF, 0xD9]).contains("EOI"))
        #expect(reason(soi + [0xFF, 0xDA, 0x00, 0x02]).contains("SOS"))
        #expect(reason(soi + [0xFF, 0x00]).contains("stuffed"))
        #expect(reason(soi + [0xFF, 0xD8]).contains("second SOI"))
        #expect(reason(soi + [0xFF, 0xFF, 0xFF]).contains("fill bytes"))
        #expect(reason(soi + [0xFF, 0xC0, 0x00, 0x05, 0x08, 0x00, 0x0A]).contains("frame header length 5"))
        #expect(reason(soi + [0xFF, 0xC0, 0x00, 0x11, 0x08, 0x00, 0x00, 0x00, 0x0B]).contains("DNL"))
        #expect(reason(soi + [0xFF, 0xC0, 0x00, 0x11, 0x08, 0x00, 0x0A, 0x00, 0x00]).contains("zero dimension"))
        #expect(reason(soi + [0xFF, 0xC0, 0x00, 0x11, 0x08, 0x00]) == "JPEG FFC0 frame header truncated: 8 of 11 bytes")
    }

    // MARK: TIFF

    /// A classic TIFF whose IFDs are given as (entries, next offset); entries are (tag, type, value).
    private func tiff(bigEndian: Bool, first: UInt32 = 8, _ ifds: [([(UInt16, UInt16, UInt32)], UInt32)]) -> [UInt8] {
        func u16(_ v: UInt16) -> [UInt8] { bigEndian ? BMFFBuilder.be16(v) : BMFFBuilder.be16(v).reversed() }
        func u32(_ v: UInt32) -> [UInt8] { bigEndian ? BMFFBuilder.be32(v) : BMFFBuilder.be32(v).reversed() }
        var out: [UInt8] = bigEndian ? [0x4D, 0x4D, 0x00, 0x2A] : [0x49, 0x49, 0x2A, 0x00]
        out += u32(first)
        for (entries, next) in ifds {
            out += u16(UInt16(entries.count))
            for (tag, type, value) in entries {
                // SHORT values are left-justified in the 4-byte value field.
                out += u16(tag) + u16(type) + u32(1) + (type == 3 ? u16(UInt16(value)) + [0, 0] : u32(value))
            }
            out += u32(next)
        }
        return out
    }

    @Test func tiffFieldTypes() {
        for bigEndian in [false, true] {
            #expect(info(tiff(bigEndian: bigEndian, [([(254, 4, 0), (256, 4, 100_000), (257, 3, 9)], 0)]))
                    == ImageInfo(format: .tiff, width: 100_000, height: 9))
            #expect(reason(tiff(bigEndian: bigEndian, [([(256, 5, 1), (257, 3, 9)], 0)])).contains("field type 5"))
            #expect(reason(tiff(bigEndian: bigEndian, [([(256, 3, 0), (257, 3, 9)], 0)])).contains("zero dimension"))
        }
    }

    @Test func tiffFollowsTheChainButNotItsCycles() {
        // IFD0 (at 8) has no size; IFD1 (at 26) does.
        let second = tiff(bigEndian: true, [([(254, 4, 1)], 26), ([(256, 3, 4), (257, 3, 6)], 0)])
        #expect(info(second) == ImageInfo(format: .tiff, width: 4, height: 6))
        // IFD0 pointing at itself, and a two-IFD loop.
        #expect(reason(tiff(bigEndian: false, [([(254, 4, 1)], 8)])) == "TIFF IFD chain loops back to offset 8")
        #expect(reason(tiff(bigEndian: true, [([(254, 4, 1)], 26), ([(254, 4, 1)], 8)])) == "TIFF IFD chain loops back to offset 8")
        #expect(reason(tiff(bigEndian: false, [([(254, 4, 1)], 0)])).contains("no IFD with both ImageWidth and ImageLength"))
        #expect(reason(tiff(bigEndian: false, first: 0, [])) == "TIFF has no IFD (IFD0 offset is 0)")
        #expect(reason(tiff(bigEndian: false, first: 0xFFFF_FFF0, [])).contains("lies beyond the 8 bytes supplied"))
        // An entry count far beyond the data.
        #expect(reason([0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0, 0xFF, 0xFF, 0, 0]).contains("declares 65535 entries"))
        // A long acyclic chain is cut off rather than walked to the end.
        var chain: [([(UInt16, UInt16, UInt32)], UInt32)] = []
        for index in 0..<40 { chain.append(([(254, 4, 1)], UInt32(8 + 18 * (index + 1)))) }
        #expect(reason(tiff(bigEndian: true, chain)).contains("more than 32 IFDs"))
    }

    @Test func bigTIFF() {
        func u64(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        func entry(_ tag: UInt16, _ type: UInt16, _ value: UInt64) -> [UInt8] {
            [UInt8(tag & 0xFF), UInt8(tag >> 8), UInt8(type), 0] + u64(1) + u64(value)
        }
        let header: [UInt8] = [0x49, 0x49, 0x2B, 0x00, 8, 0, 0, 0] + u64(16)
        #expect(info(header + u64(2) + entry(256, 16, 70_000) + entry(257, 4, 3) + u64(0)) == ImageInfo(format: .tiff, width: 70_000, height: 3))
        #expect(reason(header + u64(2) + entry(256, 16, 1 << 40) + entry(257, 4, 3) + u64(0)).contains("impossible size"))
        #expect(reason(header + u64(UInt64.max) + entry(256, 16, 7)).contains("entries, beyond"))
        #expect(reason([0x49, 0x49, 0x2B, 0x00, 4, 0, 0, 0] + u64(16)) == "BigTIFF offset size is 4, not 8")
    }

    // MARK: HEIC / AVIF

    @Test func bmffBrands() {
        let meta = BMFFBuilder.meta(BMFFBuilder.iprp(ipco: BMFFBuilder.ispe(64, 48)))
        #expect(info(BMFFBuilder.heic(meta)) == ImageInfo(format: .heic, width: 64, height: 48))
        #expect(info(BMFFBuilder.ftyp("mif1", ["mif1", "heic"]) + meta)?.format == .heic)
        #expect(info(BMFFBuilder.ftyp("heix", []) + meta)?.format == .heic)
        #expect(info(BMFFBuilder.ftyp("mif1", ["miaf", "avif"]) + meta)?.format == .avif)
        #expect(info(BMFFBuilder.ftyp("avis", ["msf1"]) + meta)?.format == .avif)
        #expect(reason(BMFFBuilder.ftyp("mif1", ["mif1", "jpeg"]) + meta).hasPrefix("no known image signature (ISO-BMFF file with brand 'mif1'"))
        #expect(reason(Array(BMFFBuilder.ftyp("heic", ["mif1"]).prefix(12))).contains("ISO-BMFF ftyp box truncated"))
    }

    @Test func bmffPrimaryItemWins() {
        // A 318×212 coded tile (item 1) and a 317×211 grid (item 2, primary): the largest ispe is the wrong answer.
        let properties = [BMFFBuilder.ispe(318, 212), BMFFBuilder.ispe(317, 211)]
        let withPrimary = BMFFBuilder.heic(BMFFBuilder.meta(
            BMFFBuilder.pitm(2), BMFFBuilder.iprp(ipco: properties[0], properties[1], ipma: BMFFBuilder.ipma([(1, [0x81]), (2, [0x02])]))
        ))
        #expect(info(withPrimary) == ImageInfo(format: .heic, width: 317, height: 211))
        // Without pitm the largest is the best guess.
        let withoutPrimary = BMFFBuilder.heic(BMFFBuilder.meta(BMFFBuilder.iprp(ipco: properties[0], properties[1], ipma: BMFFBuilder.ipma([(1, [1]), (2, [2])]))))
        #expect(info(withoutPrimary) == ImageInfo(format: .heic, width: 318, height: 212))
        // 32-bit item IDs (ipma version 1) and 16-bit property indices (flags & 1).
        let wide = BMFFBuilder.heic(BMFFBuilder.meta(
            BMFFBuilder.fullBox("pitm", version: 1, BMFFBuilder.be32(70_000)),
            BMFFBuilder.iprp(ipco: properties[0], properties[1],
                      ipma: BMFFBuilder.fullBox("ipma", version: 1, flags: 1, BMFFBuilder.be32(1) + BMFFBuilder.be32(70_000) + [1] + BMFFBuilder.be16(0x8002)))
        ))
        #expect(info(wide) == ImageInfo(format: .heic, width: 317, height: 211))
    }

    @Test func bmffTransforms() {
        let irot90 = BMFFBuilder.box("irot", [1])
        let clap = BMFFBuilder.box("clap", BMFFBuilder.be32(300) + BMFFBuilder.be32(1) + BMFFBuilder.be32(400) + BMFFBuilder.be32(2) + [UInt8](repeating: 0, count: 16))
        let rotated = BMFFBuilder.heic(BMFFBuilder.meta(BMFFBuilder.pitm(1), BMFFBuilder.iprp(ipco: BMFFBuilder.ispe(640, 480), irot90, clap, ipma: BMFFBuilder.ipma([(1, [1, 3, 2])]))))
        // Clean aperture 300×200 first, then a quarter turn.
        #expect(info(rotated) == ImageInfo(format: .heic, width: 200, height: 300))
    }

    @Test func bmffHostileBoxes() {
        let ftyp = BMFFBuilder.ftyp("heic", ["mif1"])
        let goodMeta = BMFFBuilder.meta(BMFFBuilder.iprp(ipco: BMFFBuilder.ispe(5, 6)))
        // Size 0 on a top-level box means "to end of file": meta is then never reached.
        #expect(reason(ftyp + BMFFBuilder.be32(0) + Array("mdat".utf8) + [1, 2, 3] + goodMeta).contains("has no meta box in the"))
        // ...and a size-0 meta is refused: where it ends depends on how much of the file the caller passed.
        var openMeta = goodMeta
        openMeta.replaceSubrange(0..<4, with: BMFFBuilder.be32(0))
        #expect(reason(ftyp + openMeta) == "HEIC meta box has size 0 (runs to the end of the file), so its extent is unknown")
        // A huge 64-bit size at top level, a 64-bit size that wraps past Int.max, and a valid 64-bit size.
        let huge = BMFFBuilder.be32(1) + Array("mdat".utf8) + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xF0]
        #expect(reason(ftyp + huge + goodMeta) == "HEIC box 'mdat' at offset 20 has size 18446744073709551600, larger than any file")
        let beyond = BMFFBuilder.be32(1) + Array("mdat".utf8) + [0, 0, 1, 0, 0, 0, 0, 0]
        #expect(reason(ftyp + beyond + goodMeta).hasSuffix("(box 'mdat' at offset 20 runs past them)"))
        let large = BMFFBuilder.be32(1) + Array("free".utf8) + [0, 0, 0, 0, 0, 0, 0, 20] + [0, 0, 0, 0]
        #expect(info(ftyp + large + goodMeta) == ImageInfo(format: .heic, width: 5, height: 6))
        // 64-bit sizes smaller than their own header, and 32-bit sizes below 8.
        let tiny = BMFFBuilder.be32(1) + Array("free".utf8) + [0, 0, 0, 0, 0, 0, 0, 9]
        #expect(reason(ftyp + tiny + goodMeta).contains("smaller than its 16-byte header"))
        #expect(reason(ftyp + BMFFBuilder.be32(4) + Array("free".utf8) + goodMeta).contains("smaller than its 8-byte header"))
        // A child box claiming more than its parent holds.
        let overrun = BMFFBuilder.meta(BMFFBuilder.be32(0xFFFF_FF00) + Array("iprp".utf8))
        #expect(reason(ftyp + overrun).contains("overrunning its container"))
        // A meta box cut short by the prefix.
        #expect(reason(ftyp + goodMeta.dropLast(3)).contains("HEIC meta box truncated"))
    }

    @Test func bmffMissingPieces() {
        let ftyp = BMFFBuilder.ftyp("avif", ["mif1"])
        #expect(reason(ftyp + BMFFBuilder.meta(BMFFBuilder.iprp(ipco: BMFFBuilder.box("irot", [1])))) == "AVIF has no ispe (image spatial extents) property")
        #expect(reason(ftyp + BMFFBuilder.meta(BMFFBuilder.pitm(1))).contains("no iprp"))
        #expect(reason(ftyp + BMFFBuilder.meta(BMFFBuilder.box("iprp", []))).contains("no ipco"))
        #expect(reason(ftyp + BMFFBuilder.box("mdat", [1, 2, 3])) == "AVIF has no meta box in the 31 bytes supplied")
        #expect(reason(ftyp + BMFFBuilder.meta(BMFFBuilder.iprp(ipco: BMFFBuilder.fullBox("ispe", [0, 0, 1])))).contains("too short for width and height"))
        #expect(reason(ftyp + BMFFBuilder.meta(BMFFBuilder.iprp(ipco: BMFFBuilder.ispe(0, 7)))).contains("AVIF declares a zero dimension"))
        // ipma whose entry count promises more than the box holds.
        let lying = BMFFBuilder.fullBox("ipma", BMFFBuilder.be32(0xFFFF_FFFF) + BMFFBuilder.be16(1) + [1, 1])
        #expect(reason(ftyp + BMFFBuilder.meta(BMFFBuilder.pitm(9), BMFFBuilder.iprp(ipco: BMFFBuilder.ispe(3, 3), ipma: lying))).contains("ipma box is shorter"))
        // The primary item has no ispe association: fall back to the largest.
        let unrelated = BMFFBuilder.meta(BMFFBuilder.pitm(9), BMFFBuilder.iprp(ipco: BMFFBuilder.ispe(3, 4), ipma: BMFFBuilder.ipma([(1, [1])])))
        #expect(info(ftyp + unrelated) == ImageInfo(format: .avif, width: 3, height: 4))
    }
}
