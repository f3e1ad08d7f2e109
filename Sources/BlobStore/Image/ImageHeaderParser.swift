import Foundation

/// Recognises an image from its leading bytes and reads its format and pixel size, without decoding pixels.
///
/// A header is not an image: the store checks whole blobs with ``ImageValidator``, which uses this parser's
/// rules for the size. This parser stays for callers that only have (or only want to read) the first bytes.
///
/// Pure and allocation-light so it can run on every upload and under a fuzzer: every read is bounds-checked,
/// every length and offset from the input is validated with non-overflowing arithmetic, and every loop is
/// bounded by the input size or a fixed cap. Malformed input of any kind yields `.failure` with a reason.
package enum ImageHeaderParser {
    /// How many leading bytes a caller should supply (the store also keeps a put this small in memory).
    ///
    /// PNG, GIF, BMP and WebP need under 32 bytes, but JPEG's frame header follows EXIF/ICC/thumbnail
    /// segments, HEIC/AVIF sizes sit inside the `meta` box, and TIFF's IFD0 may be anywhere; 256 KiB covers
    /// typical camera and phone output while bounding the read on every put.
    package static let recommendedPrefixLength = 256 * 1024

    /// Parses `bytes`, which may be a prefix of the blob; the parser never reads outside the buffer.
    package static func parse(_ bytes: UnsafeRawBufferPointer) -> Result<ImageInfo, ImageParseFailure> {
        let view = ImageHeaderBytes(bytes)
        do {
            return .success(try dispatch(view))
        } catch {
            return .failure(error)
        }
    }

    /// Parses a byte array, for callers (and fuzzers) that already hold one.
    package static func parse(_ bytes: [UInt8]) -> Result<ImageInfo, ImageParseFailure> {
        bytes.withUnsafeBytes { parse($0) }
    }

    /// Parses `Data`, which is what file and network reads in the store produce.
    package static func parse(_ data: Data) -> Result<ImageInfo, ImageParseFailure> {
        data.withUnsafeBytes { parse($0) }
    }

    /// The image `bytes` describe, or `nil` when they are not a readable image — for callers that do not
    /// need the reason: bytes without a known signature (most puts that are not images) are turned away
    /// without building the explanatory sentence.
    package static func info(_ bytes: UnsafeRawBufferPointer) -> ImageInfo? {
        let view = ImageHeaderBytes(bytes)
        guard let parser = formatParser(for: view) else { return nil }
        return try? parser(view)
    }

    /// Picks the format from its signature; each format's parser then reports its own problems.
    private static func dispatch(_ bytes: ImageHeaderBytes) throws(ImageParseFailure) -> ImageInfo {
        guard let parser = formatParser(for: bytes) else { throw unrecognised(bytes) }
        return try parser(bytes)
    }

    /// The parser of the format whose signature `bytes` start with.
    private static func formatParser(for bytes: ImageHeaderBytes) -> ((ImageHeaderBytes) throws(ImageParseFailure) -> ImageInfo)? {
        if bytes.matches(PNGHeader.signature) { return PNGHeader.parse }
        if bytes.matches(JPEGHeader.signature) { return JPEGHeader.parse }
        if GIFHeader.signatures.contains(where: { bytes.matches($0) }) { return GIFHeader.parse }
        if bytes.matches(WebPHeader.riff) && bytes.matches(WebPHeader.webp, at: 8) { return WebPHeader.parse }
        if bytes.matches(TIFFHeader.littleEndian) || bytes.matches(TIFFHeader.bigEndian)
            || bytes.matches(TIFFHeader.bigTIFFLittleEndian) || bytes.matches(TIFFHeader.bigTIFFBigEndian) {
            return TIFFHeader.parse
        }
        if bytes.u32(4, bigEndian: true) == BMFFHeader.ftyp { return BMFFHeader.parse }
        if bytes.matches(BMPHeader.signature) { return BMPHeader.parse }
        return nil
    }

    /// Signatures a too-short input is named after when it begins like one of them.
    private static let unrecognisedPrefixes: [(String, [UInt8])] = [
        ("PNG", PNGHeader.signature), ("JPEG", JPEGHeader.signature),
        ("GIF", GIFHeader.signatures[0]), ("GIF", GIFHeader.signatures[1]),
        ("WebP", WebPHeader.riff), ("TIFF", TIFFHeader.littleEndian), ("TIFF", TIFFHeader.bigEndian),
    ]

    /// Says what the bytes were, so a client that uploaded the wrong file can tell from the message.
    private static func unrecognised(_ bytes: ImageHeaderBytes) -> ImageParseFailure {
        if bytes.count == 0 {
            return ImageParseFailure(reason: "no known image signature (the input is empty)")
        }
        if let (name, _) = unrecognisedPrefixes.first(where: { bytes.isStrictPrefix(of: $0.1) }) {
            return ImageParseFailure(
                reason: "no known image signature (only \(bytes.count) bytes, too few to tell; they begin like \(name))"
            )
        }
        if bytes.matches(WebPHeader.riff), let form = bytes.u32(8, bigEndian: true) {
            return ImageParseFailure(
                reason: "no known image signature (RIFF container of type \(ImageHeaderBytes.fourCC(form)), not WEBP)"
            )
        }
        if bytes.matches(WebPHeader.riff) {
            return ImageParseFailure(
                reason: "no known image signature (only \(bytes.count) bytes of a RIFF container, too few to tell if it is WebP)"
            )
        }
        return ImageParseFailure(reason: "no known image signature (first bytes \(bytes.hex(0, 8)))")
    }
}
