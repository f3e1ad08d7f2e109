/// TIFF and BigTIFF over the whole file, in either byte order, read once the file is complete: the
/// directories (IFDs) may sit anywhere (libtiff writes them after the pixels), so the check follows the
/// IFD chain with random reads. Every IFD must lie inside the file with every out-of-line value of every
/// entry, and must describe an image: ImageWidth, ImageLength, and strip (or tile) offsets with byte
/// counts, each strip or tile inside the file. The chain must not loop. The pixels are not decompressed.
///
/// Reads are bounded: an IFD has at most 65535 entries (as libtiff requires), offset arrays are read in
/// blocks, and the total read is capped at twice the file's size, which overlapping hostile structures
/// would otherwise multiply.
final class TIFFCheck: ImageStreamCheck {
    private var head = FieldBuffer()

    init() { head.expect(16) }

    var format: ImageFormat? { .tiff }

    func consume(_ input: UnsafeRawBufferPointer) throws(ImageParseFailure) {
        var index = 0
        _ = head.fill(input, &index)
    }

    private static let maximumEntries = 65535
    private static let maximumDirectories = 65536
    private static let arrayBlock = 4096

    private enum Tag {
        static let width: UInt16 = 256, length: UInt16 = 257
        static let stripOffsets: UInt16 = 273, stripByteCounts: UInt16 = 279
        static let tileOffsets: UInt16 = 324, tileByteCounts: UInt16 = 325
        static let checked: Set<UInt16> = [width, length, stripOffsets, stripByteCounts, tileOffsets, tileByteCounts]
    }

    /// One directory entry as read: where its values are (inline or at an offset), how many, of which type.
    private struct Entry {
        var tag: UInt16
        var type: UInt16
        var count: UInt64
        /// The value field's bytes (4 or 8), holding the values when they fit.
        var inline: [UInt8]
        /// The values' offset in the file when they do not fit inline.
        var offset: UInt64?
    }

    /// Byte size of each field type; unknown types are skipped, as the TIFF specification asks readers to.
    private static func typeSize(_ type: UInt16) -> UInt64? {
        switch type {
        case 1, 2, 6, 7: 1
        case 3, 8: 2
        case 4, 9, 11, 13: 4
        case 5, 10, 12, 16, 17, 18: 8
        default: nil
        }
    }

    private struct Reader {
        let size: Int
        let read: ImageContentReader
        let bigEndian: Bool
        var budget: Int
        let name: String

        mutating func bytes(_ offset: UInt64, _ count: Int) throws -> [UInt8] {
            budget -= count
            guard budget >= 0 else {
                throw ImageParseFailure(reason: "\(name) directories and offset arrays overlap so much that checking them would read more than twice the file")
            }
            var out = [UInt8](repeating: 0, count: count)
            try out.withUnsafeMutableBytes { try read(Int(offset), $0) }
            return out
        }

        func value(_ bytes: [UInt8], _ at: Int, _ width: Int) -> UInt64 {
            var value: UInt64 = 0
            for i in 0..<width { value = value << 8 | UInt64(bytes[at + (bigEndian ? i : width - 1 - i)]) }
            return value
        }

        /// Whether `count` bytes at `offset` lie inside the file; written so no sum can overflow.
        func inside(_ offset: UInt64, _ count: UInt64) -> Bool {
            offset <= UInt64(size) && count <= UInt64(size) - offset
        }
    }

    func finish(size: Int, read: ImageContentReader) throws -> ImageInfo {
        try withoutActuallyEscaping(read) { read in try walk(size: size, read: read) }
    }

    private func walk(size: Int, read: @escaping ImageContentReader) throws -> ImageInfo {
        let header = head.bytes
        let bigEndian = header[0] == 0x4D
        let big = header[2] == 0x2B || header[3] == 0x2B
        let name = big ? "BigTIFF" : "TIFF"
        var reader = Reader(size: size, read: read, bigEndian: bigEndian, budget: 2 * size + (1 << 20), name: name)
        var next: UInt64
        if big {
            guard header.count >= 16 else { throw ImageParseFailure.truncated(name, "header", have: size, need: 16) }
            let offsetSize = reader.value(header, 4, 2)
            guard offsetSize == 8, reader.value(header, 6, 2) == 0 else {
                throw ImageParseFailure(reason: "BigTIFF offset size is \(offsetSize), not 8")
            }
            next = reader.value(header, 8, 8)
        } else {
            guard header.count >= 8 else { throw ImageParseFailure.truncated(name, "header", have: size, need: 8) }
            next = reader.value(header, 4, 4)
        }
        guard next != 0 else { throw ImageParseFailure(reason: "\(name) has no IFD (IFD0 offset is 0)") }
        var visited: Set<UInt64> = []
        var first: ImageInfo?
        var index = 0
        while next != 0 {
            guard visited.insert(next).inserted else {
                throw ImageParseFailure(reason: "\(name) IFD chain loops back to offset \(next)")
            }
            guard index < Self.maximumDirectories else {
                throw ImageParseFailure(reason: "\(name) has more than \(Self.maximumDirectories) IFDs")
            }
            let (image, following) = try directory(at: next, index: index, big: big, reader: &reader)
            first = first ?? image
            next = following
            index += 1
        }
        return first!
    }

    /// Checks IFD number `index` at `position`; returns its image size and the next IFD's offset.
    private func directory(at position: UInt64, index: Int, big: Bool, reader: inout Reader) throws -> (ImageInfo, UInt64) {
        let name = reader.name
        let countSize = big ? 8 : 2, entrySize = big ? 20 : 12, offsetSize = big ? 8 : 4
        guard reader.inside(position, UInt64(countSize)) else {
            throw ImageParseFailure(reason: "\(name) IFD\(index) at offset \(position) lies beyond the end of the \(reader.size)-byte file")
        }
        let rawCount = reader.value(try reader.bytes(position, countSize), 0, countSize)
        guard rawCount <= UInt64(Self.maximumEntries) else {
            throw ImageParseFailure(reason: "\(name) IFD\(index) at offset \(position) declares \(rawCount) entries, more than \(Self.maximumEntries)")
        }
        let count = Int(rawCount)
        let length = count * entrySize + offsetSize
        guard reader.inside(position + UInt64(countSize), UInt64(length)) else {
            throw ImageParseFailure(
                reason: "\(name) IFD\(index) at offset \(position) with \(count) entries runs past the end of the \(reader.size)-byte file"
            )
        }
        let table = try reader.bytes(position + UInt64(countSize), length)
        var entries: [UInt16: Entry] = [:]
        for number in 0..<count {
            let at = number * entrySize
            let tag = UInt16(reader.value(table, at, 2)), type = UInt16(reader.value(table, at + 2, 2))
            let valueCount = reader.value(table, at + 4, big ? 8 : 4)
            let inlineAt = at + (big ? 12 : 8)
            guard let unit = Self.typeSize(type) else { continue }
            let (bytes, overflow) = valueCount.multipliedReportingOverflow(by: unit)
            var entry = Entry(tag: tag, type: type, count: valueCount, inline: Array(table[inlineAt..<inlineAt + offsetSize]))
            if overflow || bytes > UInt64(offsetSize) {
                let offset = reader.value(table, inlineAt, offsetSize)
                guard !overflow, reader.inside(offset, bytes) else {
                    throw ImageParseFailure(
                        reason: "\(name) IFD\(index) tag \(tag): \(valueCount) values of type \(type) at offset \(offset) run past the end of the \(reader.size)-byte file"
                    )
                }
                entry.offset = offset
            }
            if Tag.checked.contains(tag), entries[tag] == nil { entries[tag] = entry }
        }
        let width = try scalar(entries[Tag.width], "ImageWidth", index: index, reader: reader)
        let height = try scalar(entries[Tag.length], "ImageLength", index: index, reader: reader)
        let image = try validatedImage(.tiff, name, width: width, height: height)
        if let offsets = entries[Tag.stripOffsets] {
            try checkData(offsets, entries[Tag.stripByteCounts], "strip", index: index, reader: &reader)
        } else if let offsets = entries[Tag.tileOffsets] {
            try checkData(offsets, entries[Tag.tileByteCounts], "tile", index: index, reader: &reader)
        } else {
            throw ImageParseFailure(reason: "\(name) IFD\(index) has neither StripOffsets nor TileOffsets, so no pixel data")
        }
        return (image, reader.value(table, count * entrySize, offsetSize))
    }

    /// A size tag's single SHORT, LONG (or BigTIFF LONG8) value.
    private func scalar(_ entry: Entry?, _ tagName: String, index: Int, reader: Reader) throws(ImageParseFailure) -> UInt64 {
        guard let entry else {
            throw ImageParseFailure(reason: "\(reader.name) IFD\(index) has no \(tagName)")
        }
        guard entry.count >= 1 else {
            throw ImageParseFailure(reason: "\(reader.name) \(tagName) has a value count of 0")
        }
        switch entry.type {
        case 3: return reader.value(entry.inline, 0, 2)
        case 4: return reader.value(entry.inline, 0, 4)
        case 16 where entry.inline.count == 8: return reader.value(entry.inline, 0, 8)
        default:
            throw ImageParseFailure(reason: "\(reader.name) \(tagName) has field type \(entry.type), not SHORT (3) or LONG (4)")
        }
    }

    /// Every strip (or tile) lies inside the file: offsets and byte counts read side by side, in blocks.
    private func checkData(_ offsets: Entry, _ counts: Entry?, _ kind: String, index: Int, reader: inout Reader) throws {
        let name = reader.name
        let plural = kind == "strip" ? "Strip" : "Tile"
        guard let counts else {
            throw ImageParseFailure(reason: "\(name) IFD\(index) has \(plural)Offsets but no \(plural)ByteCounts")
        }
        guard offsets.count >= 1, offsets.count == counts.count else {
            throw ImageParseFailure(
                reason: "\(name) IFD\(index) has \(offsets.count) \(plural)Offsets but \(counts.count) \(plural)ByteCounts"
            )
        }
        for entry in [offsets, counts] where ![3, 4, 16].contains(entry.type) {
            throw ImageParseFailure(reason: "\(name) IFD\(index) \(plural) offsets or byte counts have field type \(entry.type), not SHORT, LONG or LONG8")
        }
        let total = Int(offsets.count) // inside the file, so far below Int.max
        var done = 0
        while done < total {
            let block = min(Self.arrayBlock, total - done)
            let starts = try values(offsets, from: done, count: block, reader: &reader)
            let lengths = try values(counts, from: done, count: block, reader: &reader)
            for i in 0..<block where !reader.inside(starts[i], lengths[i]) {
                throw ImageParseFailure(
                    reason: "\(name) IFD\(index) \(kind) \(done + i) (\(lengths[i]) bytes at offset \(starts[i])) runs past the end of the \(reader.size)-byte file"
                )
            }
            done += block
        }
    }

    private func values(_ entry: Entry, from first: Int, count: Int, reader: inout Reader) throws -> [UInt64] {
        let unit = entry.type == 3 ? 2 : entry.type == 4 ? 4 : 8
        let bytes: [UInt8]
        if let offset = entry.offset {
            bytes = try reader.bytes(offset + UInt64(first * unit), count * unit)
        } else {
            bytes = Array(entry.inline[(first * unit)..<((first + count) * unit)])
        }
        return (0..<count).map { reader.value(bytes, $0 * unit, unit) }
    }
}
