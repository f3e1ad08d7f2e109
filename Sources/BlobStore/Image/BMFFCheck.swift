/// HEIC and AVIF over the whole file: the top-level ISO-BMFF boxes are walked by their sizes as the bytes
/// arrive and must tile the file exactly (`ftyp` first, one `meta` anywhere, before or after `mdat`; a
/// size-0 box runs to the end). At the end the `meta` box is read back (through the content reader) and
/// checked: its children lie inside it, its handler is `pict`, every item's extents in `iloc` lie inside
/// the file (or inside `idat`), and the primary item has a size (`ispe`, through `ipma`; grid items
/// included). The coded images are not decoded.
final class BMFFCheck: ImageStreamCheck {
    private enum State { case header, brands, skip, open }

    private static let ftyp = ImageHeaderBytes.code("ftyp")
    private static let meta = ImageHeaderBytes.code("meta")
    private static let uuid = ImageHeaderBytes.code("uuid")
    private static let hdlr = ImageHeaderBytes.code("hdlr")
    private static let pict = ImageHeaderBytes.code("pict")
    private static let iloc = ImageHeaderBytes.code("iloc")
    private static let idat = ImageHeaderBytes.code("idat")
    /// Real `ftyp` boxes list a handful of brands; a larger one is not an image file's.
    private static let maximumBrandBytes = 4096
    /// Real `meta` boxes are kilobytes (a grid of hundreds of tiles stays well under a megabyte).
    static let maximumMetaBytes = 16 << 20

    private var state = State.header
    private var field = FieldBuffer()
    /// Where the current top-level box starts.
    private var boxStart: UInt64 = 0
    private var boxType: UInt32 = 0
    private var boxSize: UInt64 = 0
    private var remaining: UInt64 = 0
    private var boxes = 0
    private var imageFormat: ImageFormat?
    /// The top-level `meta` box: start, header length, size (nil: to the end of the file).
    private var metaBox: (start: UInt64, header: Int, size: UInt64?)?

    init() { field.expect(8) }

    var format: ImageFormat? { imageFormat }

    private var name: String { imageFormat == .avif ? "AVIF" : imageFormat == .heic ? "HEIC" : "ISO-BMFF" }

    func consume(_ input: UnsafeRawBufferPointer) throws(ImageParseFailure) {
        var index = 0
        while index < input.count {
            switch state {
            case .header:
                guard field.fill(input, &index) else { continue }
                if field.bytes.count == 8 {
                    let extra = (field.be32(0) == 1 ? 8 : 0) + (field.be32(4) == Self.uuid ? 16 : 0)
                    if extra > 0 {
                        field.expectMore(extra)
                        continue
                    }
                }
                try beginBox()
            case .brands:
                guard field.fill(input, &index) else { continue }
                try checkBrands()
                endBox()
            case .skip:
                let take = Int(min(remaining, UInt64(input.count - index)))
                remaining -= UInt64(take)
                index += take
                if remaining == 0 { endBox() }
            case .open:
                return
            }
        }
    }

    private func beginBox() throws(ImageParseFailure) {
        let size32 = field.be32(0)
        boxType = field.be32(4)
        let header = field.bytes.count
        let typeName = ImageHeaderBytes.fourCC(boxType)
        let size: UInt64? = switch size32 {
        case 0: nil // to the end of the file
        case 1: field.be64(8)
        default: UInt64(size32)
        }
        if let size, size < UInt64(header) {
            throw ImageParseFailure(reason: "\(name) box \(typeName) at offset \(boxStart) has size \(size), smaller than its \(header)-byte header")
        }
        boxes += 1
        if boxes == 1 {
            // The validator chose this check because bytes 4–7 are 'ftyp'.
            let payload = size.map { Int(clamping: $0) - header } ?? -1
            guard payload >= 8 else {
                throw ImageParseFailure(reason: "ISO-BMFF ftyp box is \(size.map(String.init) ?? "open-ended (size 0)"), too small for its brands")
            }
            guard payload <= Self.maximumBrandBytes else {
                throw ImageParseFailure(reason: "ISO-BMFF ftyp box is \(payload + header) bytes, more than \(Self.maximumBrandBytes) bytes of brands")
            }
            boxSize = UInt64(payload + header)
            field.expect(payload)
            state = .brands
            return
        }
        if boxType == Self.meta {
            guard metaBox == nil else {
                throw ImageParseFailure(reason: "\(name) has a second top-level meta box at offset \(boxStart)")
            }
            metaBox = (boxStart, header, size)
        }
        guard let size else {
            state = .open
            return
        }
        boxSize = size
        remaining = size - UInt64(header)
        if remaining == 0 { endBox() } else { state = .skip }
    }

    private func checkBrands() throws(ImageParseFailure) {
        let major = field.be32(0)
        var compatible: [UInt32] = []
        var at = 8
        while at + 4 <= field.bytes.count {
            compatible.append(field.be32(at))
            at += 4
        }
        imageFormat = try BMFFHeader.imageFormat(major: major, compatible: compatible)
    }

    private func endBox() {
        boxStart += boxSize
        state = .header
        field.expect(8)
    }

    func finish(size: Int, read: ImageContentReader) throws -> ImageInfo {
        switch state {
        case .open:
            break
        case .header where field.isEmpty:
            break
        case .header:
            throw ImageParseFailure.truncated(name, "box header at offset \(boxStart)", have: field.bytes.count, need: field.wanted)
        case .brands, .skip:
            throw ImageParseFailure(
                reason: "\(name) box \(ImageHeaderBytes.fourCC(boxType)) at offset \(boxStart) declares \(boxSize) bytes, but the file ends after \(size)"
            )
        }
        guard let imageFormat else {
            throw ImageParseFailure(reason: "ISO-BMFF file ends before its ftyp brands")
        }
        guard let metaBox else {
            throw ImageParseFailure(reason: "\(name) has no meta box")
        }
        let metaSize = metaBox.size ?? UInt64(size) - metaBox.start
        guard metaSize <= UInt64(Self.maximumMetaBytes) else {
            throw ImageParseFailure(reason: "\(name) meta box is \(metaSize) bytes, more than the \(Self.maximumMetaBytes) this store reads")
        }
        var bytes = [UInt8](repeating: 0, count: Int(metaSize))
        try bytes.withUnsafeMutableBytes { try read(Int(metaBox.start), $0) }
        return try bytes.withUnsafeBytes { raw throws(ImageParseFailure) in
            try checkMeta(ImageHeaderBytes(raw), header: metaBox.header, fileSize: UInt64(size), imageFormat: imageFormat)
        }
    }

    /// The `meta` box, read into `bytes` (so offsets in reasons count from its start).
    private func checkMeta(
        _ bytes: ImageHeaderBytes, header: Int, fileSize: UInt64, imageFormat: ImageFormat
    ) throws(ImageParseFailure) -> ImageInfo {
        let name = self.name
        // meta is a FullBox: four bytes of version and flags precede its children.
        guard header + 4 <= bytes.count else {
            throw ImageParseFailure(reason: "\(name) meta box is \(bytes.count) bytes, too small for its version and flags")
        }
        let metaBox = BMFFHeader.Box(type: Self.meta, start: 0, payload: header, end: bytes.count)
        let children = try BMFFHeader.children(from: header + 4, to: bytes.count, in: bytes, format: name)
        guard let handler = children.first(where: { $0.type == Self.hdlr }) else {
            throw ImageParseFailure(reason: "\(name) meta box has no hdlr (handler) box")
        }
        guard handler.payload + 12 <= handler.end, let kind = bytes.u32(handler.payload + 8, bigEndian: true), kind == Self.pict else {
            throw ImageParseFailure(reason: "\(name) meta handler is not 'pict', so the file holds no image items")
        }
        guard let locations = children.first(where: { $0.type == Self.iloc }) else {
            throw ImageParseFailure(reason: "\(name) meta box has no iloc (item locations) box")
        }
        let itemData = children.first(where: { $0.type == Self.idat }).map { UInt64($0.end - $0.payload) }
        try checkLocations(locations, in: bytes, fileSize: fileSize, itemData: itemData)
        return try BMFFHeader.parseMeta(metaBox, in: bytes, imageFormat: imageFormat, format: name)
    }

    /// Every item extent in `iloc` (versions 0–2) lies inside the file (construction method 0) or inside
    /// `idat` (method 1); method 2 (another item's data) is checked through that item's own extents.
    private func checkLocations(
        _ box: BMFFHeader.Box, in bytes: ImageHeaderBytes, fileSize: UInt64, itemData: UInt64?
    ) throws(ImageParseFailure) {
        let name = self.name
        let truncated = ImageParseFailure(reason: "\(name) iloc box is shorter than its items claim")
        var at = box.payload
        func read(_ width: Int) throws(ImageParseFailure) -> UInt64 {
            guard at + width <= box.end else { throw truncated }
            var value: UInt64 = 0
            for i in 0..<width { value = value << 8 | UInt64(bytes.u8(at + i) ?? 0) }
            at += width
            return value
        }
        let version = try read(1)
        _ = try read(3)
        guard version <= 2 else {
            throw ImageParseFailure(reason: "\(name) iloc box has version \(version), not 0, 1 or 2")
        }
        let sizes = try read(1), more = try read(1)
        let offsetSize = Int(sizes >> 4), lengthSize = Int(sizes & 0x0F)
        let baseSize = Int(more >> 4), indexSize = version >= 1 ? Int(more & 0x0F) : 0
        for width in [offsetSize, lengthSize, baseSize, indexSize] where ![0, 4, 8].contains(width) {
            throw ImageParseFailure(reason: "\(name) iloc box uses a \(width)-byte field (allowed: 0, 4, 8)")
        }
        let items = try read(version < 2 ? 2 : 4)
        // Each item takes at least four bytes, so a hostile count cannot keep this loop past the box's end.
        for _ in 0..<items {
            let item = try read(version < 2 ? 2 : 4)
            let method = version >= 1 ? try read(2) & 0x0F : 0
            let reference = try read(2)
            let base = try read(baseSize)
            let extents = try read(2)
            // Extents whose fields are all zero bytes wide are all empty at the base offset: checked once,
            // so a hostile box cannot make each of its bytes cost 65535 steps.
            let extentBytes = indexSize + offsetSize + lengthSize
            for _ in 0..<(extentBytes == 0 ? min(extents, 1) : extents) {
                _ = try read(indexSize)
                let offset = try read(offsetSize), length = try read(lengthSize)
                guard method <= 1, reference == 0 else { continue } // another item's data, or another file's
                let limit = method == 0 ? fileSize : itemData ?? 0
                let (start, overflow) = base.addingReportingOverflow(offset)
                guard !overflow, start <= limit, length <= limit - start else {
                    throw ImageParseFailure(
                        reason: "\(name) item \(item) has an extent of \(length) bytes at offset \(start) outside the \(method == 0 ? "\(fileSize)-byte file" : "\(limit)-byte idat box")"
                    )
                }
            }
        }
    }
}
