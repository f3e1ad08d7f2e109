import Foundation
@testable import BlobStore

/// Hand-built images for the whole-file validator's tests: structurally complete files (correct CRCs,
/// sizes and offsets) whose layout the tests choose, such as a TIFF directory after the pixels or a HEIF
/// `meta` box after `mdat`. The pixels are not meaningful; the validator does not decode them.
enum ImageBuilder {
    static func be16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
    static func be32(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
    static func be64(_ value: UInt64) -> [UInt8] { [56, 48, 40, 32, 24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
    static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    static func le32(_ value: UInt32) -> [UInt8] { [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: value >> $0) } }

    // MARK: PNG

    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// A chunk with its length and CRC; `crc` overrides the correct one.
    static func pngChunk(_ type: String, _ data: [UInt8], crc: UInt32? = nil) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return be32(UInt32(data.count)) + typed + be32(crc ?? CRC32.checksum(typed))
    }

    static func ihdr(width: UInt32, height: UInt32, depth: UInt8 = 8, colour: UInt8 = 0, interlace: UInt8 = 0) -> [UInt8] {
        pngChunk("IHDR", be32(width) + be32(height) + [depth, colour, 0, 0, interlace])
    }

    /// A complete PNG; the IDAT content is arbitrary bytes split over `idatChunks` chunks.
    static func png(width: UInt32 = 5, height: UInt32 = 3, depth: UInt8 = 8, colour: UInt8 = 0, idat: Int = 40, idatChunks: Int = 2,
                    extra: [UInt8] = []) -> [UInt8] {
        var bytes = pngSignature + ihdr(width: width, height: height, depth: depth, colour: colour)
        if colour == 3 { bytes += pngChunk("PLTE", [0, 0, 0, 255, 255, 255]) }
        bytes += pngChunk("tEXt", Array("Comment\0hand-built".utf8))
        let data = (0..<idat).map { UInt8(truncatingIfNeeded: $0 &* 37) }
        let per = max(1, (idat + idatChunks - 1) / idatChunks)
        for start in stride(from: 0, to: max(idat, 1), by: per) {
            bytes += pngChunk("IDAT", Array(data[start..<min(start + per, idat)]))
        }
        return bytes + extra + pngChunk("IEND", [])
    }

    // MARK: TIFF

    /// An uncompressed 8-bit greyscale TIFF whose directory follows the pixel data (as libtiff writes it),
    /// with `rowsPerStrip` rows per strip so several strips have out-of-line offset and count arrays.
    static func tiff(width: UInt32, height: UInt32, rowsPerStrip: UInt32, bigEndian: Bool = false, big: Bool = false) -> [UInt8] {
        func u16(_ v: UInt16) -> [UInt8] { bigEndian ? be16(v) : le16(v) }
        func u32(_ v: UInt32) -> [UInt8] { bigEndian ? be32(v) : le32(v) }
        func u64(_ v: UInt64) -> [UInt8] { bigEndian ? be64(v) : Array(be64(v).reversed()) }
        let headerLength = big ? 16 : 8
        var bytes: [UInt8] = (bigEndian ? Array("MM".utf8) : Array("II".utf8)) + u16(big ? 43 : 42)
        bytes += big ? u16(8) + u16(0) + u64(0) : u32(0) // IFD0 offset patched below
        let strips = (height + rowsPerStrip - 1) / rowsPerStrip
        var offsets: [UInt32] = [], counts: [UInt32] = []
        for strip in 0..<strips {
            let rows = min(rowsPerStrip, height - strip * rowsPerStrip)
            offsets.append(UInt32(bytes.count))
            counts.append(rows * width)
            bytes += (0..<Int(rows * width)).map { UInt8(truncatingIfNeeded: $0 &+ Int(strip)) }
        }
        if bytes.count % 2 == 1 { bytes.append(0) }
        // Out-of-line arrays, then the IFD.
        let offsetsAt = UInt32(bytes.count)
        for value in offsets { bytes += u32(value) }
        let countsAt = UInt32(bytes.count)
        for value in counts { bytes += u32(value) }
        let ifdAt = bytes.count
        // (tag, type, count, value or offset): the arrays are inline only for a single strip.
        let entries: [(UInt16, UInt16, UInt32, UInt32)] = [
            (256, 4, 1, width), (257, 4, 1, height), (258, 3, 1, 8), (259, 3, 1, 1), (262, 3, 1, 1),
            (273, 4, strips, strips == 1 ? offsets[0] : offsetsAt), (277, 3, 1, 1), (278, 4, 1, rowsPerStrip),
            (279, 4, strips, strips == 1 ? counts[0] : countsAt),
        ]
        bytes += big ? u64(UInt64(entries.count)) : u16(UInt16(entries.count))
        for (tag, type, count, value) in entries {
            bytes += u16(tag) + u16(type) + (big ? u64(UInt64(count)) : u32(count))
            let inline: [UInt8] = type == 3 ? u16(UInt16(value)) + [0, 0] : u32(value)
            if big {
                // An 8-byte field: an offset is a 64-bit number, an inline value is left-justified.
                bytes += count == 1 ? inline + [0, 0, 0, 0] : u64(UInt64(value))
            } else {
                bytes += inline
            }
        }
        bytes += big ? u64(0) : u32(0)
        let pointer = big ? u64(UInt64(ifdAt)) : u32(UInt32(ifdAt))
        bytes.replaceSubrange((headerLength - pointer.count)..<headerLength, with: pointer)
        return bytes
    }

    // MARK: HEIF

    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] { be32(UInt32(8 + payload.count)) + Array(type.utf8) + payload }
    static func fullBox(_ type: String, version: UInt8 = 0, _ payload: [UInt8]) -> [UInt8] { box(type, [version, 0, 0, 0] + payload) }

    /// A HEIC with one coded item of `width`×`height` whose data sits in `mdat`; `metaLast` puts `meta` after `mdat`.
    static func heic(width: UInt32, height: UInt32, metaLast: Bool, mdatBytes: Int = 300, extentShift: Int = 0) -> [UInt8] {
        let ftyp = box("ftyp", Array("heic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8))
        let data = (0..<mdatBytes).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        let mdat = box("mdat", data)
        func meta(dataAt: Int) -> [UInt8] {
            let hdlr = fullBox("hdlr", [0, 0, 0, 0] + Array("pict".utf8) + [UInt8](repeating: 0, count: 12) + [0])
            let pitm = fullBox("pitm", be16(1))
            let iloc = fullBox("iloc", [0x44, 0x00] + be16(1) + be16(1) + be16(0) + be16(1) + be32(UInt32(dataAt + extentShift)) + be32(UInt32(data.count)))
            let infe = fullBox("infe", version: 2, be16(1) + be16(0) + Array("hvc1".utf8) + [0])
            let iinf = fullBox("iinf", be16(1) + infe)
            let ispe = fullBox("ispe", be32(width) + be32(height))
            let ipma = fullBox("ipma", be32(1) + be16(1) + [1, 0x81])
            let iprp = box("iprp", box("ipco", ispe) + ipma)
            return fullBox("meta", hdlr + pitm + iloc + iinf + iprp)
        }
        if metaLast {
            return ftyp + mdat + meta(dataAt: ftyp.count + 8)
        }
        let metaLength = meta(dataAt: 0).count
        return ftyp + meta(dataAt: ftyp.count + metaLength + 8) + mdat
    }
}

/// The verdict on `bytes` fed to a validator in chunks of the given sizes (cycled), reading back from memory.
func chunkedVerdict(_ bytes: [UInt8], sizes: [Int]) -> Result<ImageInfo, ImageParseFailure> {
    let validator = ImageValidator()
    bytes.withUnsafeBytes { raw in
        var at = 0, turn = 0
        while at < raw.count {
            let size = max(1, sizes[turn % sizes.count])
            validator.append(UnsafeRawBufferPointer(rebasing: raw[at..<min(at + size, raw.count)]))
            at += size
            turn += 1
        }
    }
    return bytes.withUnsafeBytes { raw in
        do {
            return try validator.finish { offset, buffer in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[offset..<offset + buffer.count]))
            }
        } catch {
            return .failure(ImageParseFailure(reason: "reader: \(error)"))
        }
    }
}

/// Random chunk sizes from 1 to `maximum`.
func randomChunking(_ rng: inout SplitMix64, count: Int = 64, maximum: Int = 700) -> [Int] {
    (0..<count).map { _ in Int.random(in: 1...maximum, using: &rng) }
}

extension ImageFixture {
    /// Real images made by Pillow 13 (libpng, libjpeg-turbo, giflib-free GIF writer, libwebp, libtiff,
    /// libavif), for layouts the older fixtures lack: animation, restart markers, several IFDs, 16-bit
    /// and palette PNGs. Only the whole-file tests use them (they have no "header end").
    static let pillow: [ImageFixture] = [
        .init(file: "avif-pillow-61x37.avif", format: .avif, width: 61, height: 37, headerEnd: 0),
        .init(file: "bmp-rgb24-61x37.bmp", format: .bmp, width: 61, height: 37, headerEnd: 0),
        .init(file: "gif-animated-61x37.gif", format: .gif, width: 61, height: 37, headerEnd: 0),
        .init(file: "jpeg-progressive-restart-61x37.jpg", format: .jpeg, width: 61, height: 37, headerEnd: 0),
        .init(file: "jpeg-restart-61x37.jpg", format: .jpeg, width: 61, height: 37, headerEnd: 0),
        .init(file: "png-16bit-61x37.png", format: .png, width: 61, height: 37, headerEnd: 0),
        .init(file: "png-greyalpha-61x37.png", format: .png, width: 61, height: 37, headerEnd: 0),
        .init(file: "png-palette-61x37.png", format: .png, width: 61, height: 37, headerEnd: 0),
        .init(file: "tiff-lzw-61x37.tif", format: .tiff, width: 61, height: 37, headerEnd: 0),
        .init(file: "tiff-multipage-61x37.tif", format: .tiff, width: 61, height: 37, headerEnd: 0),
        .init(file: "webp-alpha-lossless-61x37.webp", format: .webp, width: 61, height: 37, headerEnd: 0),
        .init(file: "webp-animated-61x37.webp", format: .webp, width: 61, height: 37, headerEnd: 0),
    ]

    /// Every fixture the whole-file tests use.
    static let whole: [ImageFixture] = all + pillow
}
