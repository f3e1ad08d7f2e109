import Foundation

/// Validates an image over the whole blob: the container's structure from its signature to its last
/// byte, without decoding pixels, then reports its format and pixel size.
///
/// Fed the content in order, in chunks of any size (``append(_:)``), then finished with ``finish(reading:)``.
/// Memory stays bounded whatever the blob's size: each format's check keeps a few fields, never the
/// content. Formats whose structure is not in file order (a TIFF directory after the pixels, a HEIF `meta`
/// box after `mdat`) read what they need at the end through the reader the caller passes, normally the
/// stored temp file. The verdict and its reason depend only on the bytes, never on how they were split.
///
/// Owned by one caller at a time (a put's writer); not for concurrent use.
package final class ImageValidator {
    /// The first bytes, held until they identify a format (at most ``sniffLength``).
    private var sniffed: [UInt8] = []
    private var check: (any ImageStreamCheck)?
    private var failed: ImageParseFailure?
    private var size = 0

    /// Enough bytes to tell every signature apart: BMP's needs its DIB header size at offsets 14–17.
    private static let sniffLength = 18
    /// A non-image is reported once this many bytes (or all, if fewer) are in, so the reason can show them.
    private static let shownBytes = 8

    /// A validator that has seen no bytes.
    package init() {}

    /// The format the signature names, once the first bytes have told it; `nil` before, or for non-images.
    package var format: ImageFormat? { failed == nil ? check?.format : nil }

    /// The reason the bytes so far already rule out an image; once set it is the final verdict.
    package var failure: ImageParseFailure? { failed }

    /// Takes the next bytes of the blob.
    package func append(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        defer { size += bytes.count }
        guard failed == nil else { return }
        var rest = bytes
        if check == nil {
            var used = 0
            while check == nil, failed == nil, used < rest.count {
                sniffed.append(rest[used])
                used += 1
                identify(atEnd: false)
            }
            rest = UnsafeRawBufferPointer(rebasing: rest[used...])
            guard let check, failed == nil else { return }
            do {
                try sniffed.withUnsafeBytes { try check.consume($0) }
            } catch {
                failed = error as? ImageParseFailure ?? ImageParseFailure(reason: "\(error)")
                return
            }
        }
        guard let check else { return }
        do {
            try check.consume(rest)
        } catch {
            failed = error
        }
    }

    /// The verdict on everything appended: the image's format and size, or why it is not an image.
    ///
    /// `read` gives the checks of TIFF and HEIF/AVIF random access to the content; errors it throws (I/O)
    /// are rethrown, never turned into a verdict.
    package func finish(reading read: ImageContentReader) throws -> Result<ImageInfo, ImageParseFailure> {
        if check == nil, failed == nil { identify(atEnd: true) }
        if let failed { return .failure(failed) }
        guard let check else { return .failure(ImageParseFailure(reason: "no known image signature")) }
        do {
            return .success(try check.finish(size: size, read: read))
        } catch let failure as ImageParseFailure {
            failed = failure
            return .failure(failure)
        }
    }

    /// Validates a complete image held in memory.
    package static func validate(_ bytes: UnsafeRawBufferPointer) -> Result<ImageInfo, ImageParseFailure> {
        let validator = ImageValidator()
        validator.append(bytes)
        do {
            return try validator.finish { offset, buffer in
                // The checks only ask for ranges inside the content they were told the size of.
                precondition(offset >= 0 && buffer.count <= bytes.count - offset, "image check read outside the content")
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + buffer.count]))
            }
        } catch {
            return .failure(ImageParseFailure(reason: "\(error)"))
        }
    }

    /// Validates a complete image held in a byte array.
    package static func validate(_ bytes: [UInt8]) -> Result<ImageInfo, ImageParseFailure> {
        bytes.withUnsafeBytes { validate($0) }
    }

    /// Validates a complete image held in `Data`.
    package static func validate(_ data: Data) -> Result<ImageInfo, ImageParseFailure> {
        data.withUnsafeBytes { validate($0) }
    }

    // MARK: - Signatures

    /// Picks the format from the bytes sniffed so far, in the header parser's order, as soon as one
    /// signature is complete; fails once none can match any more (or the content ended).
    private func identify(atEnd: Bool) {
        // Called for every sniffed byte of every put: compares in place, allocating nothing.
        let bytes = sniffed
        func starts(_ signature: [UInt8], at offset: Int = 0) -> Bool {
            guard bytes.count >= offset + signature.count else { return false }
            for (position, byte) in signature.enumerated() where bytes[offset + position] != byte { return false }
            return true
        }
        if starts(PNGHeader.signature) {
            check = PNGCheck()
        } else if starts(JPEGHeader.signature) {
            check = JPEGCheck()
        } else if GIFHeader.signatures.contains(where: { starts($0) }) {
            check = GIFCheck()
        } else if starts(WebPHeader.riff) && starts(WebPHeader.webp, at: 8) {
            check = WebPCheck()
        } else if Self.tiffSignatures.contains(where: { starts($0) }) {
            check = TIFFCheck()
        } else if starts(Self.ftyp, at: 4) {
            check = BMFFCheck()
        } else if starts(BMPHeader.signature) && bytes.count >= Self.sniffLength {
            check = BMPCheck()
        } else if atEnd || (!Self.couldStillMatch(bytes) && bytes.count >= Self.shownBytes) {
            // The header parser words every short or unknown start (too few bytes, other RIFF forms, "BM" text).
            switch ImageHeaderParser.parse(bytes) {
            case .failure(let failure): failed = failure
            case .success: failed = ImageParseFailure(reason: "no known image signature")
            }
        }
    }

    private static let tiffSignatures = [TIFFHeader.littleEndian, TIFFHeader.bigEndian, TIFFHeader.bigTIFFLittleEndian, TIFFHeader.bigTIFFBigEndian]
    private static let ftyp = Array("ftyp".utf8)

    /// Every signature, nil entries matching any byte.
    private static let patterns: [[UInt8?]] = {
        let fixed: [[UInt8]] = [
            PNGHeader.signature, JPEGHeader.signature, GIFHeader.signatures[0], GIFHeader.signatures[1],
            TIFFHeader.littleEndian, TIFFHeader.bigEndian, TIFFHeader.bigTIFFLittleEndian, TIFFHeader.bigTIFFBigEndian,
        ]
        let four = [UInt8?](repeating: nil, count: 4)
        let riff: [UInt8?] = WebPHeader.riff.map { Optional($0) } + four + WebPHeader.webp.map { Optional($0) }
        let ftyp: [UInt8?] = four + Array("ftyp".utf8).map { Optional($0) }
        let bmp: [UInt8?] = BMPHeader.signature.map { Optional($0) } + [UInt8?](repeating: nil, count: sniffLength - 2)
        return fixed.map { signature in signature.map { Optional($0) } } + [riff, ftyp, bmp]
    }()

    /// Whether some signature could still complete from `bytes`.
    private static func couldStillMatch(_ bytes: [UInt8]) -> Bool {
        patterns.contains { pattern in
            bytes.count < pattern.count && zip(bytes, pattern).allSatisfy { byte, expected in expected.map { $0 == byte } ?? true }
        }
    }
}
