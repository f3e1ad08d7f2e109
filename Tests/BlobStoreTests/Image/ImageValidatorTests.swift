import Foundation
import Testing
@testable import BlobStore

private func reason(_ result: Result<ImageInfo, ImageParseFailure>) -> String? {
    if case .failure(let failure) = result { return failure.reason }
    return nil
}

private func validate(_ bytes: [UInt8]) -> Result<ImageInfo, ImageParseFailure> { ImageValidator.validate(bytes) }

@Suite("CRC-32")
struct CRC32Tests {
    @Test func knownVectors() {
        #expect(CRC32.checksum([]) == 0)
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum(Array("The quick brown fox jumps over the lazy dog".utf8)) == 0x414F_A339)
        #expect(CRC32.checksum([0]) == 0xD202_EF8D)
        #expect(CRC32.checksum(Array("IEND".utf8)) == 0xAE42_6082) // every PNG's last four bytes
    }

    @Test("piecewise updates equal one update, whatever the split")
    func piecewise() {
        var rng = SplitMix64(seed: 7)
        let bytes = (0..<1000).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let whole = CRC32.checksum(bytes)
        for _ in 0..<50 {
            var crc = CRC32()
            var at = 0
            while at < bytes.count {
                let end = min(bytes.count, at + Int.random(in: 0...40, using: &rng))
                crc.update(Array(bytes[at..<end]))
                at = end
            }
            #expect(crc.value == whole)
        }
    }
}

@Suite("Image validator: real fixtures, whole and cut")
struct ImageValidatorFixtureTests {
    @Test("every fixture validates to its true format and size", arguments: ImageFixture.whole)
    func fixtureValidates(_ fixture: ImageFixture) throws {
        #expect(try validate(fixture.bytes()) == .success(fixture.info))
    }

    @Test("every cut of a fixture is refused (every cut point up to 4 KB, then spread out)", arguments: ImageFixture.whole)
    func everyCutIsRefused(_ fixture: ImageFixture) throws {
        let bytes = try fixture.bytes()
        var cuts = Array(0..<min(bytes.count, 4096))
        if bytes.count > 4096 { cuts += stride(from: 4096, to: bytes.count, by: 97) + Array(max(4096, bytes.count - 64)..<bytes.count) }
        // TIFF has no end marker: bytes no directory points at may follow the last structure (libtiff pads
        // multi-page files), and cutting them leaves a whole image. Worked out by a separate Python walk.
        let structureEnd = ["tiff-multipage-61x37.tif": 2132][fixture.file] ?? bytes.count
        for cut in cuts {
            let result = validate(Array(bytes[..<cut]))
            if cut >= structureEnd {
                #expect(result == .success(fixture.info), "\(fixture.file) cut at \(cut) after its last structure")
            } else {
                #expect(reason(result) != nil, "\(fixture.file) cut at \(cut) of \(bytes.count) was accepted as \(result)")
            }
        }
    }

    @Test("the verdict and its reason do not depend on the chunking", arguments: ImageFixture.whole)
    func chunkingProperty(_ fixture: ImageFixture) throws {
        let bytes = try fixture.bytes()
        var rng = SplitMix64(seed: UInt64(bytes.count))
        // The fixture, some cuts of it, and some copies with one byte changed.
        var inputs = [bytes]
        for _ in 0..<6 { inputs.append(Array(bytes[..<Int.random(in: 0..<bytes.count, using: &rng)])) }
        for _ in 0..<12 {
            var changed = bytes
            changed[Int.random(in: 0..<bytes.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
            inputs.append(changed)
        }
        for input in inputs {
            let whole = validate(input)
            #expect(chunkedVerdict(input, sizes: [1]) == whole, "\(fixture.file): one byte at a time")
            for _ in 0..<4 {
                let sizes = randomChunking(&rng)
                #expect(chunkedVerdict(input, sizes: sizes) == whole, "\(fixture.file): chunks \(sizes.prefix(8))…")
            }
        }
    }

    @Test("the validator agrees with the header parser on every fixture's size", arguments: ImageFixture.whole)
    func agreesWithHeaderParser(_ fixture: ImageFixture) throws {
        let bytes = try fixture.bytes()
        #expect(validate(bytes) == ImageHeaderParser.parse(bytes))
    }
}

@Suite("Image validator: structure of each format")
struct ImageValidatorFormatTests {
    // MARK: PNG

    @Test func pngWholeAndBroken() {
        let good = ImageBuilder.png()
        #expect(validate(good) == .success(ImageInfo(format: .png, width: 5, height: 3)))
        #expect(validate(ImageBuilder.png(colour: 3, idatChunks: 3)) == .success(ImageInfo(format: .png, width: 5, height: 3)))

        // Only a valid header: signature + IHDR.
        let headerOnly = ImageBuilder.pngSignature + ImageBuilder.ihdr(width: 5, height: 3)
        #expect(reason(validate(headerOnly)) == "PNG ends after 33 bytes without an IEND chunk")
        // Cut in the middle of IDAT.
        let idatStart = good.count - 12 - 12 - 20
        #expect(reason(validate(Array(good[..<(idatStart + 10)])))?.hasPrefix("PNG ends inside chunk 'IDAT'") == true)
        // IHDR with a bad CRC.
        var badIHDR = good
        badIHDR[29] ^= 0x01
        #expect(reason(validate(badIHDR))?.hasPrefix("PNG chunk 'IHDR' at offset 8 has CRC") == true)
        // One bit flipped inside IDAT's data.
        var badData = good
        badData[idatStart + 8 + 3] ^= 0x10
        #expect(reason(validate(badData))?.contains("'IDAT'") == true)
        #expect(reason(validate(badData))?.contains("has CRC") == true)
        // Bit depth 7 (with a correct CRC), and other impossible IHDR combinations.
        #expect(reason(validate(ImageBuilder.png(depth: 7))) == "PNG bit depth 7 is not allowed for colour type 0 (allowed: 1, 2, 4, 8, 16)")
        #expect(reason(validate(ImageBuilder.png(depth: 4, colour: 2)))?.hasPrefix("PNG bit depth 4 is not allowed for colour type 2") == true)
        #expect(reason(validate(ImageBuilder.png(depth: 16, colour: 3)))?.hasPrefix("PNG bit depth 16 is not allowed for colour type 3") == true)
        #expect(reason(validate(ImageBuilder.png(colour: 5))) == "PNG colour type 5 is not 0, 2, 3, 4 or 6")
        #expect(reason(validate(ImageBuilder.png(width: 0))) == "PNG declares a zero dimension: 0×3")
        // Data after IEND, and chunk-order rules.
        #expect(reason(validate(good + [0])) == "PNG has data after its IEND chunk, at offset \(good.count)")
        let noData = ImageBuilder.pngSignature + ImageBuilder.ihdr(width: 1, height: 1) + ImageBuilder.pngChunk("IEND", [])
        #expect(reason(validate(noData)) == "PNG reaches IEND at offset 33 without an IDAT chunk")
        #expect(reason(validate(ImageBuilder.png(idatChunks: 2, extra: ImageBuilder.pngChunk("IDAT", [1]))))?.contains("consecutive") != true)
        let split = ImageBuilder.pngSignature + ImageBuilder.ihdr(width: 1, height: 1) + ImageBuilder.pngChunk("IDAT", [1])
            + ImageBuilder.pngChunk("tEXt", Array("a\0b".utf8)) + ImageBuilder.pngChunk("IDAT", [2]) + ImageBuilder.pngChunk("IEND", [])
        #expect(reason(validate(split))?.contains("IDAT chunks must be consecutive") == true)
        #expect(reason(validate(ImageBuilder.png(colour: 3).filter { _ in true }.replacingPalette()))?.contains("PLTE") == true)
        #expect(reason(validate(ImageBuilder.png(extra: ImageBuilder.pngChunk("ABCD", []))))?.contains("unknown critical chunk 'ABCD'") == true)
        #expect(reason(validate(ImageBuilder.png(extra: ImageBuilder.pngChunk("abCD", [1, 2])))) == nil) // ancillary: skipped
    }

    // MARK: JPEG

    @Test func jpegStructure() throws {
        let bytes = try #require(ImageFixture.all.first { $0.file == "jpeg-317x211.jpg" }).bytes()
        let progressive = try #require(ImageFixture.all.first { $0.file == "jpeg-progressive-317x211.jpg" }).bytes()
        // Several scans, each followed by entropy-coded data.
        #expect(validate(progressive) == .success(ImageInfo(format: .jpeg, width: 317, height: 211)))
        // Cut just after the frame header: the size is known, but the image is not there.
        let sof = try #require((0..<bytes.count - 1).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC0 })
        let sofEnd = sof + 2 + Int(bytes[sof + 2]) << 8 + Int(bytes[sof + 3])
        #expect(ImageHeaderParser.parse(Array(bytes[..<sofEnd])) == .success(ImageInfo(format: .jpeg, width: 317, height: 211)))
        #expect(reason(validate(Array(bytes[..<sofEnd]))) == "JPEG ends after \(sofEnd) bytes without an EOI marker")
        // Cut inside the entropy-coded data.
        #expect(reason(validate(Array(bytes[..<(bytes.count - 10)])))?.contains("inside the entropy-coded data of scan 1") == true)
        // Bytes after EOI are allowed (Multi-Picture Format, motion photos).
        #expect(validate(bytes + Array("trailing".utf8)) == .success(ImageInfo(format: .jpeg, width: 317, height: 211)))
        // A marker that cannot appear inside entropy-coded data ends it: here a second SOI.
        #expect(reason(validate(Array(bytes[..<(bytes.count - 2)]) + [0xFF, 0xD8, 0xFF, 0xD9]))?.contains("second SOI") == true)
        // No scan at all.
        #expect(reason(validate(Array(bytes[..<sofEnd]) + [0xFF, 0xD9]))?.contains("without a scan (SOS)") == true)
    }

    @Test func jpegRestartMarkers() throws {
        let bytes = try #require(ImageFixture.all.first { $0.file == "jpeg-1x1.jpg" }).bytes()
        let eoi = bytes.count - 2
        // Entropy data with restart markers in order (RST0…RST7, RST0), stuffed bytes and fill bytes.
        var data: [UInt8] = []
        for number in 0..<9 { data += [0x12, 0xFF, 0x00, 0x34, 0xFF, 0xFF, 0xD0 + UInt8(number % 8)] }
        let withRestarts = Array(bytes[..<eoi]) + data + [0xFF, 0xD9]
        #expect(validate(withRestarts) == .success(ImageInfo(format: .jpeg, width: 1, height: 1)))
        let skipped = Array(bytes[..<eoi]) + [0x12, 0xFF, 0xD0, 0x34, 0xFF, 0xD2, 0xFF, 0xD9]
        #expect(reason(validate(skipped))?.contains("RST2") == true)
        #expect(reason(validate(skipped))?.contains("out of order (expected RST1)") == true)
        // Restart markers outside entropy-coded data are refused.
        #expect(reason(validate([0xFF, 0xD8, 0xFF, 0xD0, 0xFF, 0xD9]))?.contains("outside entropy-coded data") == true)
    }

    // MARK: GIF, WebP, BMP

    @Test func gifStructure() throws {
        let bytes = try #require(ImageFixture.all.first { $0.file == "gif-3x500.gif" }).bytes()
        #expect(reason(validate(Array(bytes[..<13]))) == "GIF ends after 13 bytes inside the block at offset 0, without its trailer (3b)")
        #expect(reason(validate(bytes + [0])) == "GIF has data after its trailer, at offset \(bytes.count)")
        let noImage = Array("GIF89a".utf8) + [1, 0, 1, 0, 0, 0, 0, 0x3B]
        #expect(reason(validate(noImage)) == "GIF reaches its trailer at offset 13 without an image")
        let oneImage = Array("GIF89a".utf8) + [1, 0, 1, 0, 0, 0, 0, 0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x4C, 0x01, 0, 0x3B]
        #expect(validate(oneImage) == .success(ImageInfo(format: .gif, width: 1, height: 1)))
        var badBlock = oneImage
        badBlock[13] = 0x2D
        #expect(reason(validate(badBlock))?.hasPrefix("GIF has byte 2d at offset 13") == true)
    }

    @Test func webpStructure() throws {
        let bytes = try #require(ImageFixture.all.first { $0.file == "webp-lossy-3x500.webp" }).bytes()
        // The RIFF size must match the file.
        #expect(reason(validate(Array(bytes[..<(bytes.count - 1)])))?.hasPrefix("WebP ends after") == true)
        #expect(reason(validate(bytes + [0, 0]))?.hasPrefix("WebP has data after its RIFF container") == true)
        var bigger = bytes
        bigger[4] &+= 2
        #expect(reason(validate(bigger + [0, 0]))?.contains("overruns") != true) // RIFF now ends later: a trailing chunk header is missing
        #expect(reason(validate(bigger + [0, 0])) != nil)
        // A chunk overrunning the container.
        var overrun = bytes
        overrun[16] &+= 8
        #expect(reason(validate(overrun))?.contains("overruns its RIFF container") == true)
        // A chunk after the image in a simple-format file.
        var extended = bytes + Array("XTRA".utf8) + [2, 0, 0, 0, 1, 2]
        let size = UInt32(extended.count - 8)
        extended.replaceSubrange(4..<8, with: ImageBuilder.le32(size))
        #expect(reason(validate(extended))?.contains("simple-format") == true)
        let alpha = try #require(ImageFixture.all.first { $0.file == "webp-extended-alpha-317x211.webp" }).bytes()
        var wrongCanvas = alpha
        wrongCanvas[24] ^= 1 // canvas width − 1, low byte
        #expect(reason(validate(wrongCanvas))?.contains("but the VP8X canvas is") == true)
    }

    @Test func bmpStructure() throws {
        let bytes = try #require(ImageFixture.all.first { $0.file == "bmp-topdown-317x211.bmp" }).bytes()
        #expect(validate(bytes) == .success(ImageInfo(format: .bmp, width: 317, height: 211)))
        #expect(reason(validate(Array(bytes[..<(bytes.count - 1)])))?.hasPrefix("BMP pixel array (") == true)
        var offsetInHeaders = bytes
        offsetInHeaders[10] = 20
        offsetInHeaders[11] = 0
        #expect(reason(validate(offsetInHeaders))?.contains("lies inside the") == true)
        var compressedTopDown = bytes
        compressedTopDown[30] = 1 // RLE8 on a 1-bit, top-down bitmap
        #expect(reason(validate(compressedTopDown))?.contains("not a known combination") == true)
    }

    // MARK: TIFF

    @Test("a TIFF larger than 320 KB with its IFD after the pixels (as libtiff writes) is accepted, in every layout")
    func tiffDirectoryAtTheEnd() {
        for (bigEndian, big) in [(false, false), (true, false), (false, true), (true, true)] {
            let bytes = ImageBuilder.tiff(width: 640, height: 600, rowsPerStrip: 64, bigEndian: bigEndian, big: big)
            #expect(bytes.count > 384_000)
            let expected = ImageInfo(format: .tiff, width: 640, height: 600)
            #expect(validate(bytes) == .success(expected), "bigEndian \(bigEndian) big \(big)")
            #expect(chunkedVerdict(bytes, sizes: [65536, 1, 4099]) == .success(expected))
            // The whole file is needed: every cut is refused.
            for cut in [8, 300_000, bytes.count - 200, bytes.count - 1] {
                #expect(reason(validate(Array(bytes[..<cut]))) != nil, "cut at \(cut)")
            }
        }
    }

    @Test func tiffStripsMustLieInsideTheFile() {
        var bytes = ImageBuilder.tiff(width: 8, height: 8, rowsPerStrip: 8)
        #expect(validate(bytes) == .success(ImageInfo(format: .tiff, width: 8, height: 8)))
        // The single strip's byte count (inline in entry 279, the last) made one byte too large.
        let entry279 = bytes.count - 4 - 12
        bytes[entry279 + 8] = 250
        #expect(reason(validate(bytes)) == "TIFF IFD0 strip 0 (250 bytes at offset 8) runs past the end of the \(bytes.count)-byte file")
        let multi = ImageBuilder.tiff(width: 8, height: 20, rowsPerStrip: 4)
        #expect(validate(multi) == .success(ImageInfo(format: .tiff, width: 8, height: 20)))
    }

    // MARK: HEIF

    @Test("HEIC with meta after mdat is accepted, fed whole or one byte at a time")
    func heifMetaAfterData() {
        let expected = ImageInfo(format: .heic, width: 640, height: 480)
        for metaLast in [false, true] {
            let bytes = ImageBuilder.heic(width: 640, height: 480, metaLast: metaLast)
            #expect(validate(bytes) == .success(expected), "meta last: \(metaLast)")
            #expect(chunkedVerdict(bytes, sizes: [1]) == .success(expected))
            #expect(chunkedVerdict(bytes, sizes: [7, 100, 3]) == .success(expected))
            for cut in 0..<bytes.count {
                #expect(reason(validate(Array(bytes[..<cut]))) != nil, "meta last \(metaLast), cut at \(cut)")
            }
        }
        // An item extent outside the file.
        let outside = ImageBuilder.heic(width: 640, height: 480, metaLast: false, extentShift: 1)
        #expect(reason(validate(outside))?.contains("item 1 has an extent of 300 bytes") == true)
        // Trailing bytes that are not a box.
        #expect(reason(validate(ImageBuilder.heic(width: 1, height: 1, metaLast: false) + [0, 0, 0]))?.contains("box header") == true)
    }
}

@Suite("Image validator: rules docs/PROTOCOL.md states")
struct ImageValidatorDocumentedRuleTests {
    private func fixture(_ name: String) throws -> [UInt8] {
        try #require(ImageFixture.whole.first { $0.file == name }).bytes()
    }

    @Test func tiffLoopsAndHugeDirectories() {
        // IFD0 at 8 whose next-IFD offset points back at itself.
        var loop = ImageBuilder.tiff(width: 2, height: 2, rowsPerStrip: 2)
        loop.replaceSubrange((loop.count - 4)..<loop.count, with: Array(loop[4..<8]))
        #expect(reason(validate(loop))?.contains("IFD chain loops back to offset") == true)
        // A BigTIFF IFD claiming more than 65535 entries.
        let huge = Array("II".utf8) + [43, 0, 8, 0, 0, 0] + [16, 0, 0, 0, 0, 0, 0, 0] + [0x70, 0x11, 0x01, 0, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 64)
        #expect(reason(validate(huge)) == "BigTIFF IFD0 at offset 16 declares 70000 entries, more than 65535")
    }

    @Test func heifLimits() {
        // A size-0 box runs to the end of the file: a final mdat may be open-ended.
        var open = ImageBuilder.heic(width: 9, height: 7, metaLast: false)
        let mdat = open.count - 308
        #expect(Array(open[(mdat + 4)..<(mdat + 8)]) == Array("mdat".utf8))
        open.replaceSubrange(mdat..<(mdat + 4), with: [0, 0, 0, 0])
        #expect(validate(open) == .success(ImageInfo(format: .heic, width: 9, height: 7)))
        // A meta box over 16 MiB is refused before it is read.
        let ftyp = ImageBuilder.box("ftyp", Array("heic".utf8) + [0, 0, 0, 0] + Array("mif1".utf8))
        let meta = ImageBuilder.be32(UInt32(BMFFCheck.maximumMetaBytes + 9)) + Array("meta".utf8) + [UInt8](repeating: 0, count: BMFFCheck.maximumMetaBytes + 1)
        #expect(reason(validate(ftyp + meta)) == "HEIC meta box is \(BMFFCheck.maximumMetaBytes + 9) bytes, more than the \(BMFFCheck.maximumMetaBytes) this store reads")
        // The handler must be 'pict'.
        var video = ImageBuilder.heic(width: 9, height: 7, metaLast: true)
        let pict = (0..<video.count - 4).first { Array(video[$0..<$0 + 4]) == Array("pict".utf8) }!
        video.replaceSubrange(pict..<pict + 4, with: Array("vide".utf8))
        #expect(reason(validate(video)) == "HEIC meta handler is not 'pict', so the file holds no image items")
    }

    @Test func bmpTopDownMustBeUncompressed() {
        // 8-bit RLE, 1×1, height −1: top-down and compressed.
        let header = Array("BM".utf8) + ImageBuilder.le32(60) + [0, 0, 0, 0] + ImageBuilder.le32(54)
        let dib = ImageBuilder.le32(40) + ImageBuilder.le32(1) + ImageBuilder.le32(UInt32(bitPattern: -1)) + ImageBuilder.le16(1)
            + ImageBuilder.le16(8) + ImageBuilder.le32(1) + ImageBuilder.le32(4) + [UInt8](repeating: 0, count: 16)
        let rle = header + dib + [1, 0, 0, 1, 0, 0]
        #expect(reason(validate(rle)) == "BMP is top-down (negative height) but compressed (compression 1), which the format forbids")
        var bottomUp = rle
        bottomUp.replaceSubrange(22..<26, with: ImageBuilder.le32(1))
        #expect(validate(bottomUp) == .success(ImageInfo(format: .bmp, width: 1, height: 1)))
    }

    @Test func webpAnimationRules() throws {
        let animated = try fixture("webp-animated-61x37.webp")
        #expect(validate(animated) == .success(ImageInfo(format: .webp, width: 61, height: 37)))
        let frame = try #require((0..<animated.count - 4).first { Array(animated[$0..<$0 + 4]) == Array("ANMF".utf8) })
        var outside = animated
        outside[frame + 8] = 1 // frame X offset 2: 2 + 61 > 61
        #expect(reason(validate(outside))?.contains("lies outside the 61×37 canvas") == true)
        var notAnimated = animated
        notAnimated[20] &= ~0x02 // VP8X animation flag
        #expect(reason(validate(notAnimated))?.contains("misplaced") == true)
    }

    @Test func jpegFrameAndTables() throws {
        let bytes = try fixture("jpeg-1x1.jpg")
        let sof = try #require((0..<bytes.count - 1).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC0 })
        let length = Int(bytes[sof + 2]) << 8 | Int(bytes[sof + 3])
        let frameHeader = Array(bytes[sof..<(sof + 2 + length)])
        let twice = Array(bytes[..<sof]) + frameHeader + Array(bytes[sof...])
        #expect(reason(validate(twice))?.hasPrefix("JPEG has a second frame header FFC0") == true)
        var precision = bytes
        precision[sof + 4] = 12 // baseline is 8-bit only
        #expect(reason(validate(precision)) == "JPEG FFC0 sample precision 12 is not allowed")
        let dqt = try #require((0..<bytes.count - 1).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xDB })
        var table = bytes
        table[dqt + 4] = 0x24 // precision 2
        #expect(reason(validate(table))?.hasPrefix("JPEG DQT at offset \(dqt) has table 4 of precision 2") == true)
    }

    @Test func moreStatedRules() throws {
        // PNG: an Apple CgBI chunk may come before IHDR.
        let png = ImageBuilder.png()
        let crushed = Array(png[..<8]) + ImageBuilder.pngChunk("CgBI", [0x50, 0, 0x20, 2]) + Array(png[8...])
        #expect(validate(crushed) == .success(ImageInfo(format: .png, width: 5, height: 3)))
        // JPEG: height 0 (DNL) and a Huffman table with more than 256 codes.
        let jpeg = try fixture("jpeg-1x1.jpg")
        let sof = try #require((0..<jpeg.count - 1).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        var dnl = jpeg
        dnl[sof + 5] = 0
        dnl[sof + 6] = 0
        #expect(reason(validate(dnl)) == "JPEG frame height is 0 (defined later by a DNL marker, which is not supported)")
        let dht = try #require((0..<jpeg.count - 1).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC4 })
        var codes = jpeg
        codes[dht + 5] = 255
        codes[dht + 6] = 255
        #expect(reason(validate(codes))?.hasPrefix("JPEG DHT segment at offset \(dht)") == true)
        // WebP: a VP8 start code and the VP8L version.
        var lossy = try fixture("webp-lossy-3x500.webp")
        lossy[23] = 0x9C
        #expect(reason(validate(lossy)) == "WebP VP8 start code is 9c 01 2a, not 9d 01 2a")
        var lossless = try fixture("webp-lossless-3x500.webp")
        lossless[24] |= 0x20
        #expect(reason(validate(lossless)) == "WebP VP8L version is 1, not 0")
        // BMP: one plane.
        var planes = try fixture("bmp-1x1.bmp")
        planes[26] = 2
        #expect(reason(validate(planes)) == "BMP declares 2 colour planes, not 1")
        // TIFF: an out-of-line value beyond the end (the StripOffsets array of a multi-strip file).
        var tiff = ImageBuilder.tiff(width: 8, height: 20, rowsPerStrip: 4)
        let entries = tiff.count - 4 - 9 * 12
        let stripOffsets = entries + 5 * 12
        #expect(tiff[stripOffsets] == 17 && tiff[stripOffsets + 1] == 1) // tag 273
        tiff.replaceSubrange((stripOffsets + 8)..<(stripOffsets + 12), with: ImageBuilder.le32(UInt32(tiff.count - 8)))
        #expect(reason(validate(tiff)) == "TIFF IFD0 tag 273: 5 values of type 4 at offset \(tiff.count - 8) run past the end of the \(tiff.count)-byte file")
        // HEIF: one meta box.
        let heic = ImageBuilder.heic(width: 4, height: 4, metaLast: true)
        let meta = ImageBuilder.fullBox("meta", [])
        #expect(reason(validate(heic + meta)) == "HEIC has a second top-level meta box at offset \(heic.count)")
    }

    @Test func gifCodeSize() {
        let image = Array("GIF89a".utf8) + [1, 0, 1, 0, 0, 0, 0, 0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 12, 2, 0x4C, 0x01, 0, 0x3B]
        #expect(reason(validate(image)) == "GIF image at offset 13 has LZW minimum code size 12, not 1–11")
    }
}

private extension Array where Element == UInt8 {
    /// This PNG with its PLTE chunk renamed to an ancillary 'pLTe', so a palette image has no palette.
    func replacingPalette() -> [UInt8] {
        guard let at = (0..<count - 4).first(where: { Array(self[$0..<$0 + 4]) == Array("PLTE".utf8) }) else { return self }
        var copy = self
        copy.replaceSubrange(at..<at + 4, with: Array("pLTe".utf8))
        let length = Int(copy[at - 1])
        let crc = CRC32.checksum(Array(copy[at..<at + 4 + length]))
        copy.replaceSubrange(at + 4 + length..<at + 8 + length, with: ImageBuilder.be32(crc))
        return copy
    }
}
