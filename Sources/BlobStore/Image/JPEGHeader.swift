/// JPEG: walks the marker segments after SOI to the first start-of-frame, which holds the frame size.
///
/// EXIF, ICC profiles and thumbnails live in APPn segments before the frame header and can be tens of
/// kilobytes, which is why callers should supply ``ImageHeaderParser/recommendedPrefixLength`` bytes.
enum JPEGHeader {
    static let signature: [UInt8] = [0xFF, 0xD8, 0xFF]

    /// SOF0–SOF15 except DHT (C4), JPG (C8) and DAC (CC), which share the range but are not frame headers.
    static func isStartOfFrame(_ marker: UInt8) -> Bool {
        (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
    }

    static func parse(_ bytes: ImageHeaderBytes) throws(ImageParseFailure) -> ImageInfo {
        var offset = 2
        var segments = 0
        // Each pass consumes at least one byte, so the walk ends within `count` iterations.
        while true {
            guard let lead = bytes.u8(offset) else {
                throw ImageParseFailure(
                    reason: "JPEG ends after \(bytes.count) bytes and \(segments) segments without a SOF marker"
                )
            }
            guard lead == 0xFF else {
                throw ImageParseFailure(
                    reason: "JPEG expected a marker at offset \(offset) but found byte \(bytes.hex(offset, 1))"
                )
            }
            // Any number of 0xFF fill bytes may precede a marker code.
            var markerOffset = offset + 1
            while bytes.u8(markerOffset) == 0xFF {
                markerOffset += 1
            }
            guard let marker = bytes.u8(markerOffset) else {
                throw ImageParseFailure(reason: "JPEG ends in fill bytes at offset \(markerOffset) before a SOF marker")
            }
            // Built only when a reason needs it: the walk itself must not allocate per segment.
            var markerName: String { "FF" + bytes.hex(markerOffset, 1).uppercased() }
            switch marker {
            case 0x00:
                throw ImageParseFailure(reason: "JPEG has a stuffed FF 00 at offset \(markerOffset - 1) outside entropy-coded data")
            case 0x01, 0xD0...0xD7:
                // TEM and RSTn stand alone, without a length.
                offset = markerOffset + 1
                segments += 1
                continue
            case 0xD8:
                throw ImageParseFailure(reason: "JPEG has a second SOI marker at offset \(markerOffset - 1) before any SOF")
            case 0xD9:
                throw ImageParseFailure(reason: "JPEG reaches EOI at offset \(markerOffset - 1) without a SOF marker")
            case 0xDA:
                throw ImageParseFailure(reason: "JPEG reaches SOS at offset \(markerOffset - 1) without a SOF marker")
            default:
                break
            }
            guard let length = bytes.u16(markerOffset + 1, bigEndian: true) else {
                throw .truncated("JPEG", "\(markerName) segment length", have: bytes.count, need: markerOffset + 3)
            }
            // The length counts its own two bytes, so anything below 2 would make the walk stall or go backwards.
            guard length >= 2 else {
                throw ImageParseFailure(
                    reason: "JPEG segment \(markerName) at offset \(markerOffset - 1) has length \(length), below the minimum of 2"
                )
            }
            if isStartOfFrame(marker) {
                guard length >= 8 else {
                    throw ImageParseFailure(reason: "JPEG \(markerName) frame header length \(length) is below 8")
                }
                guard let height = bytes.u16(markerOffset + 4, bigEndian: true),
                      let width = bytes.u16(markerOffset + 6, bigEndian: true)
                else {
                    throw .truncated("JPEG", "\(markerName) frame header", have: bytes.count, need: markerOffset + 8)
                }
                if height == 0 && width != 0 {
                    throw ImageParseFailure(reason: "JPEG frame height is 0 (defined later by a DNL marker, which is not supported)")
                }
                return try validatedImage(.jpeg, "JPEG \(markerName)", width: UInt64(width), height: UInt64(height))
            }
            offset = markerOffset + 1 + Int(length)
            segments += 1
        }
    }
}
