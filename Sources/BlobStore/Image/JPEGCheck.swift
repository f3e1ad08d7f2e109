import Foundation

/// JPEG over the whole file: the marker segments from SOI to EOI, each by its length; the frame header
/// (SOF), the quantisation and Huffman table segments and every scan header (SOS) field by field; and the
/// entropy-coded data after each scan header, scanned for its end (stuffed `FF 00` bytes, restart markers
/// in their cyclic order, fill bytes). Progressive and multi-scan files have several SOS segments, each
/// followed by its data. Bytes after EOI are allowed: cameras and phones append further images there
/// (Multi-Picture Format, motion photos). The coefficients are not decoded.
final class JPEGCheck: ImageStreamCheck {
    private enum State {
        /// The SOI marker, matched by the validator.
        case start
        /// Expecting the 0xFF that opens a marker.
        case marker
        /// After 0xFF: fill bytes or the marker code.
        case code
        /// The two-byte segment length.
        case length
        /// The segment's payload: collected when its fields are checked, else skipped.
        case payload
        /// Entropy-coded data after a scan header.
        case entropy
        /// A 0xFF inside entropy-coded data.
        case entropyMarker
        /// After EOI.
        case end
    }

    private var state = State.start
    private var field = FieldBuffer()
    private var position = 0
    private var markerOffset = 0
    private var marker: UInt8 = 0
    private var collect = false
    private var remaining = 0
    private var segments = 0
    private var frame: ImageInfo?
    private var frameComponents: [UInt8] = []
    private var scans = 0
    private var nextRestart: UInt8 = 0

    init() { field.expect(2) }

    var format: ImageFormat? { .jpeg }

    private var markerName: String { "FF" + hexByte(marker).uppercased() }

    /// SOF0–SOF15 except DHT (C4), JPG (C8) and DAC (CC).
    private static func isFrame(_ code: UInt8) -> Bool { JPEGHeader.isStartOfFrame(code) }

    func consume(_ input: UnsafeRawBufferPointer) throws(ImageParseFailure) {
        var index = 0
        defer { position += input.count }
        while index < input.count {
            switch state {
            case .start:
                if field.fill(input, &index) { state = .marker }
            case .marker:
                let byte = input[index]
                guard byte == 0xFF else {
                    throw ImageParseFailure(
                        reason: "JPEG expected a marker at offset \(position + index) but found byte \(hexByte(byte))"
                    )
                }
                markerOffset = position + index
                index += 1
                state = .code
            case .code:
                let byte = input[index]
                index += 1
                // Any number of 0xFF fill bytes may precede a marker code.
                if byte != 0xFF { try startSegment(byte, at: markerOffset) }
            case .length:
                guard field.fill(input, &index) else { continue }
                let length = Int(field.be16(0))
                // The length counts its own two bytes, so anything below 2 would make the walk stall.
                guard length >= 2 else {
                    throw ImageParseFailure(
                        reason: "JPEG segment \(markerName) at offset \(markerOffset) has length \(length), below the minimum of 2"
                    )
                }
                remaining = length - 2
                collect = Self.isFrame(marker) || [0xDA, 0xDB, 0xC4, 0xDD].contains(marker)
                state = .payload
                field.expect(remaining)
                if remaining == 0 { try endSegment() }
            case .payload:
                if collect {
                    if field.fill(input, &index) { try endSegment() }
                } else {
                    let take = min(remaining, input.count - index)
                    remaining -= take
                    index += take
                    if remaining == 0 { try endSegment() }
                }
            case .entropy:
                let rest = UnsafeRawBufferPointer(rebasing: input[index...])
                if let found = memchr(rest.baseAddress!, 0xFF, rest.count) {
                    index += rest.baseAddress!.distance(to: UnsafeRawPointer(found)) + 1
                    markerOffset = position + index - 1
                    state = .entropyMarker
                } else {
                    index = input.count
                }
            case .entropyMarker:
                let byte = input[index]
                index += 1
                switch byte {
                case 0x00:
                    state = .entropy // a stuffed 0xFF data byte
                case 0xFF:
                    markerOffset = position + index - 1 // fill byte
                case 0xD0...0xD7:
                    let number = byte - 0xD0
                    guard number == nextRestart else {
                        throw ImageParseFailure(
                            reason: "JPEG restart marker RST\(number) at offset \(markerOffset) is out of order (expected RST\(nextRestart))"
                        )
                    }
                    nextRestart = (nextRestart + 1) & 7
                    state = .entropy
                default:
                    try startSegment(byte, at: markerOffset)
                }
            case .end:
                // Bytes after EOI belong to whatever follows the image (see above).
                index = input.count
            }
        }
    }

    /// A marker code outside entropy-coded data (or ending it).
    private func startSegment(_ code: UInt8, at offset: Int) throws(ImageParseFailure) {
        marker = code
        markerOffset = offset
        segments += 1
        switch code {
        case 0x00:
            throw ImageParseFailure(reason: "JPEG has a stuffed FF 00 at offset \(offset) outside entropy-coded data")
        case 0xD8:
            throw ImageParseFailure(reason: "JPEG has a second SOI marker at offset \(offset)")
        case 0xD0...0xD7:
            throw ImageParseFailure(reason: "JPEG has a restart marker \(markerName) at offset \(offset) outside entropy-coded data")
        case 0xD9:
            guard frame != nil else {
                throw ImageParseFailure(reason: "JPEG reaches EOI at offset \(offset) without a SOF marker")
            }
            guard scans > 0 else {
                throw ImageParseFailure(reason: "JPEG reaches EOI at offset \(offset) without a scan (SOS)")
            }
            state = .end
        case 0x01:
            state = .marker // TEM stands alone, without a length
        default:
            state = .length
            field.expect(2)
        }
    }

    private func endSegment() throws(ImageParseFailure) {
        state = .marker
        guard collect else { return }
        switch marker {
        case 0xDA: try checkScan()
        case 0xDB: try checkQuantisationTables()
        case 0xC4: try checkHuffmanTables()
        case 0xDD:
            guard field.bytes.count == 2 else {
                throw ImageParseFailure(reason: "JPEG DRI segment at offset \(markerOffset) has \(field.bytes.count) bytes, not 2")
            }
        default: try checkFrame()
        }
    }

    private func checkFrame() throws(ImageParseFailure) {
        guard frame == nil else {
            throw ImageParseFailure(reason: "JPEG has a second frame header \(markerName) at offset \(markerOffset)")
        }
        let bytes = field.bytes
        guard bytes.count >= 6 else {
            throw ImageParseFailure(reason: "JPEG \(markerName) frame header length \(bytes.count + 2) is below 8")
        }
        let precision = bytes[0], height = field.be16(1), width = field.be16(3), components = Int(bytes[5])
        guard components >= 1, bytes.count == 6 + 3 * components else {
            throw ImageParseFailure(
                reason: "JPEG \(markerName) frame header is \(bytes.count + 2) bytes, not 8 + 3 × \(components) components"
            )
        }
        let lossless = [0xC3, 0xC7, 0xCB, 0xCF].contains(marker)
        let precisions: ClosedRange<UInt8> = lossless ? 2...16 : marker == 0xC0 ? 8...8 : 8...12
        guard precisions.contains(precision), lossless || precision == 8 || precision == 12 else {
            throw ImageParseFailure(reason: "JPEG \(markerName) sample precision \(precision) is not allowed")
        }
        if height == 0 && width != 0 {
            throw ImageParseFailure(reason: "JPEG frame height is 0 (defined later by a DNL marker, which is not supported)")
        }
        frameComponents = []
        for component in 0..<components {
            let at = 6 + component * 3
            let horizontal = bytes[at + 1] >> 4, vertical = bytes[at + 1] & 0x0F, table = bytes[at + 2]
            guard (1...4).contains(horizontal), (1...4).contains(vertical), table <= 3 else {
                throw ImageParseFailure(
                    reason: "JPEG \(markerName) component \(bytes[at]) has sampling \(horizontal)×\(vertical) and table \(table) (allowed: 1–4, 1–4, 0–3)"
                )
            }
            frameComponents.append(bytes[at])
        }
        frame = try validatedImage(.jpeg, "JPEG \(markerName)", width: UInt64(width), height: UInt64(height))
    }

    private func checkScan() throws(ImageParseFailure) {
        guard frame != nil else {
            throw ImageParseFailure(reason: "JPEG reaches SOS at offset \(markerOffset) without a SOF marker")
        }
        let bytes = field.bytes
        let count = bytes.first.map(Int.init) ?? 0
        guard (1...4).contains(count), bytes.count == 1 + 2 * count + 3 else {
            throw ImageParseFailure(
                reason: "JPEG scan header at offset \(markerOffset) is \(bytes.count + 2) bytes for \(count) components (1–4 components, 6 + 2 × components bytes)"
            )
        }
        for component in 0..<count where !frameComponents.contains(bytes[1 + component * 2]) {
            throw ImageParseFailure(
                reason: "JPEG scan at offset \(markerOffset) names component \(bytes[1 + component * 2]), which the frame does not have"
            )
        }
        scans += 1
        nextRestart = 0
        state = .entropy
    }

    private func checkQuantisationTables() throws(ImageParseFailure) {
        let bytes = field.bytes
        var at = 0
        while at < bytes.count {
            let precision = bytes[at] >> 4, table = bytes[at] & 0x0F
            guard precision <= 1, table <= 3 else {
                throw ImageParseFailure(reason: "JPEG DQT at offset \(markerOffset) has table \(table) of precision \(precision) (allowed: 0–3, 0–1)")
            }
            at += 1 + 64 * (Int(precision) + 1)
        }
        guard at == bytes.count else {
            throw ImageParseFailure(reason: "JPEG DQT segment at offset \(markerOffset) does not end with its last table")
        }
    }

    private func checkHuffmanTables() throws(ImageParseFailure) {
        let bytes = field.bytes
        var at = 0
        while at < bytes.count {
            let tableClass = bytes[at] >> 4, table = bytes[at] & 0x0F
            guard tableClass <= 1, table <= 3, at + 17 <= bytes.count else {
                throw ImageParseFailure(reason: "JPEG DHT segment at offset \(markerOffset) has a malformed table header")
            }
            let codes = bytes[(at + 1)..<(at + 17)].reduce(0) { $0 + Int($1) }
            guard codes <= 256 else {
                throw ImageParseFailure(reason: "JPEG DHT segment at offset \(markerOffset) declares \(codes) codes, more than 256")
            }
            at += 17 + codes
        }
        guard at == bytes.count else {
            throw ImageParseFailure(reason: "JPEG DHT segment at offset \(markerOffset) does not end with its last table")
        }
    }

    func finish(size: Int, read: ImageContentReader) throws -> ImageInfo {
        switch state {
        case .end:
            return frame! // EOI is only accepted after a frame header
        case .entropy, .entropyMarker:
            throw ImageParseFailure(reason: "JPEG ends after \(size) bytes inside the entropy-coded data of scan \(scans), without an EOI marker")
        case .length, .payload:
            throw ImageParseFailure(reason: "JPEG ends after \(size) bytes inside segment \(markerName) at offset \(markerOffset)")
        case .start, .marker, .code:
            guard frame != nil else {
                throw ImageParseFailure(reason: "JPEG ends after \(size) bytes and \(segments) segments without a SOF marker")
            }
            throw ImageParseFailure(reason: "JPEG ends after \(size) bytes without an EOI marker")
        }
    }
}
