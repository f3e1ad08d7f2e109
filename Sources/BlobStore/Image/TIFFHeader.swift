/// TIFF and BigTIFF: a byte-order mark, then a chain of image file directories (IFDs) holding tagged fields.
///
/// ImageWidth (256) and ImageLength (257) normally sit in IFD0. When IFD0 lacks them the next IFDs are
/// tried, with a visited set and a hard cap, because hostile files can point the chain back on itself.
enum TIFFHeader {
    static let littleEndian: [UInt8] = [0x49, 0x49, 0x2A, 0x00] // "II*\0"
    static let bigEndian: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A]    // "MM\0*"
    static let bigTIFFLittleEndian: [UInt8] = [0x49, 0x49, 0x2B, 0x00]
    static let bigTIFFBigEndian: [UInt8] = [0x4D, 0x4D, 0x00, 0x2B]

    /// Far more directories than any real file has before its first image; stops pathological chains early.
    static let maximumDirectories = 32

    private static let imageWidthTag: UInt16 = 256
    private static let imageLengthTag: UInt16 = 257

    /// The parts of the layout that differ between classic TIFF and BigTIFF.
    private struct Layout {
        var bigEndian: Bool
        var big: Bool
        var name: String { big ? "BigTIFF" : "TIFF" }
        var countSize: Int { big ? 8 : 2 }
        var entrySize: Int { big ? 20 : 12 }
        var offsetSize: Int { big ? 8 : 4 }
    }

    static func parse(_ bytes: ImageHeaderBytes) throws(ImageParseFailure) -> ImageInfo {
        let bigEndian = bytes.u8(0) == 0x4D
        let big = bytes.u16(2, bigEndian: bigEndian) == 43
        let layout = Layout(bigEndian: bigEndian, big: big)
        let name = layout.name

        var next: UInt64
        if big {
            guard let offsetSize = bytes.u16(4, bigEndian: bigEndian), let first = bytes.u64(8, bigEndian: bigEndian) else {
                throw .truncated(name, "header", have: bytes.count, need: 16)
            }
            guard offsetSize == 8 else {
                throw ImageParseFailure(reason: "BigTIFF offset size is \(offsetSize), not 8")
            }
            next = first
        } else {
            guard let first = bytes.u32(4, bigEndian: bigEndian) else {
                throw .truncated(name, "header", have: bytes.count, need: 8)
            }
            next = UInt64(first)
        }

        var visited: Set<UInt64> = []
        var index = 0
        while true {
            guard next != 0 else {
                throw ImageParseFailure(
                    reason: index == 0
                        ? "\(name) has no IFD (IFD0 offset is 0)"
                        : "\(name) has no IFD with both ImageWidth and ImageLength (searched \(index))"
                )
            }
            guard visited.insert(next).inserted else {
                throw ImageParseFailure(reason: "\(name) IFD chain loops back to offset \(next)")
            }
            guard index < maximumDirectories else {
                throw ImageParseFailure(reason: "\(name) has more than \(maximumDirectories) IFDs without ImageWidth and ImageLength")
            }
            let result = try directory(at: next, index: index, in: bytes, layout: layout)
            if let width = result.width, let height = result.height {
                return try validatedImage(.tiff, name, width: width, height: height)
            }
            next = result.next
            index += 1
        }
    }

    /// Reads one IFD: the two size tags if present, and the offset of the next IFD.
    private static func directory(
        at position: UInt64, index: Int, in bytes: ImageHeaderBytes, layout: Layout
    ) throws(ImageParseFailure) -> (width: UInt64?, height: UInt64?, next: UInt64) {
        let name = layout.name
        guard position <= UInt64(Int.max), bytes.contains(Int(position), layout.countSize) else {
            throw ImageParseFailure(
                reason: "\(name) IFD\(index) at offset \(position) lies beyond the \(bytes.count) bytes supplied"
            )
        }
        let start = Int(position)
        let rawCount = layout.big
            ? bytes.u64(start, bigEndian: layout.bigEndian) ?? 0
            : UInt64(bytes.u16(start, bigEndian: layout.bigEndian) ?? 0)
        let entriesStart = start + layout.countSize
        // Only the entries actually present are scanned, so a hostile 64-bit count cannot drive the loop, and a
        // prefix that ends inside a long IFD still succeeds when the size tags (sorted first) are in it.
        let present = UInt64((bytes.count - entriesStart) / layout.entrySize)
        var width: UInt64?
        var height: UInt64?
        for entry in 0..<Int(min(rawCount, present)) {
            let at = entriesStart + entry * layout.entrySize
            guard let tag = bytes.u16(at, bigEndian: layout.bigEndian), tag == imageWidthTag || tag == imageLengthTag else {
                continue
            }
            let value = try fieldValue(at: at, tag: tag, in: bytes, layout: layout)
            if tag == imageWidthTag { width = value } else { height = value }
            if width != nil && height != nil { return (width, height, 0) }
        }
        guard rawCount <= present else {
            throw ImageParseFailure(
                reason: "\(name) IFD\(index) at offset \(position) declares \(rawCount) entries, beyond the \(bytes.count) bytes supplied"
            )
        }
        let entriesLength = Int(rawCount) * layout.entrySize
        let nextAt = entriesStart + entriesLength
        let next: UInt64
        if layout.big, let value = bytes.u64(nextAt, bigEndian: layout.bigEndian) {
            next = value
        } else if !layout.big, let value = bytes.u32(nextAt, bigEndian: layout.bigEndian) {
            next = UInt64(value)
        } else {
            throw .truncated(name, "IFD\(index) next-IFD offset", have: bytes.count, need: nextAt + layout.offsetSize)
        }
        return (width, height, next)
    }

    /// A SHORT, LONG (or BigTIFF LONG8) value stored inline in the entry, as the size tags always are.
    private static func fieldValue(
        at entry: Int, tag: UInt16, in bytes: ImageHeaderBytes, layout: Layout
    ) throws(ImageParseFailure) -> UInt64 {
        let name = layout.name
        let tagName = tag == imageWidthTag ? "ImageWidth" : "ImageLength"
        let type = bytes.u16(entry + 2, bigEndian: layout.bigEndian) ?? 0
        let count = layout.big
            ? bytes.u64(entry + 4, bigEndian: layout.bigEndian) ?? 0
            : UInt64(bytes.u32(entry + 4, bigEndian: layout.bigEndian) ?? 0)
        guard count >= 1 else {
            throw ImageParseFailure(reason: "\(name) \(tagName) has a value count of 0")
        }
        let valueAt = entry + (layout.big ? 12 : 8)
        let value: UInt64?
        switch type {
        case 3: value = bytes.u16(valueAt, bigEndian: layout.bigEndian).map(UInt64.init)
        case 4: value = bytes.u32(valueAt, bigEndian: layout.bigEndian).map(UInt64.init)
        case 16 where layout.big: value = bytes.u64(valueAt, bigEndian: layout.bigEndian)
        default:
            throw ImageParseFailure(reason: "\(name) \(tagName) has field type \(type), not SHORT (3) or LONG (4)")
        }
        guard let value else {
            throw .truncated(name, "\(tagName) entry", have: bytes.count, need: valueAt + layout.offsetSize)
        }
        return value
    }
}
