/// HEIC and AVIF: ISO base media file format (ISO/IEC 14496-12) with HEIF items (ISO/IEC 23008-12).
///
/// The `ftyp` brands say which codec the images use. The size is not in a fixed place: it is an `ispe`
/// property inside `meta` → `iprp` → `ipco`, tied to items by `ipma`. A file often has several (a grid image
/// and its tiles, a thumbnail), so the one associated with the primary item (`pitm`) is used, then the clean
/// aperture (`clap`) and rotation (`irot`) that viewers apply, so the result matches what a decoder shows.
enum BMFFHeader {
    static let ftyp = ImageHeaderBytes.code("ftyp")
    private static let meta = ImageHeaderBytes.code("meta")
    private static let pitm = ImageHeaderBytes.code("pitm")
    private static let iprp = ImageHeaderBytes.code("iprp")
    private static let ipco = ImageHeaderBytes.code("ipco")
    private static let ipma = ImageHeaderBytes.code("ipma")
    private static let ispe = ImageHeaderBytes.code("ispe")
    private static let irot = ImageHeaderBytes.code("irot")
    private static let clap = ImageHeaderBytes.code("clap")
    private static let uuid = ImageHeaderBytes.code("uuid")

    private static let avifBrands: Set<UInt32> = [code("avif"), code("avis")]
    private static let heicBrands: Set<UInt32> = [
        code("heic"), code("heix"), code("hevc"), code("hevx"), code("heim"), code("heis"), code("hevm"), code("hevs"),
    ]

    private static func code(_ text: StaticString) -> UInt32 { ImageHeaderBytes.code(text) }

    /// A box header that has been checked against its parent; `end` never exceeds the parent's end.
    struct Box {
        var type: UInt32
        var start: Int
        /// First byte after the header (size, type, optional 64-bit size and uuid).
        var payload: Int
        var end: Int
        var typeName: String { ImageHeaderBytes.fourCC(type) }
    }

    /// Reads the box at `offset` inside a parent ending at `limit`.
    ///
    /// `limit` may exceed the bytes supplied (at top level the file's length is unknown), so only the box's
    /// header must be present. A size-0 box runs to `zeroSizeEnd`: its parent's end, or at top level the end
    /// of the supplied bytes, the only end of file we can see.
    static func box(
        at offset: Int, limit: Int, zeroSizeEnd: Int? = nil, in bytes: ImageHeaderBytes, format: String
    ) throws(ImageParseFailure) -> Box {
        guard let size32 = bytes.u32(offset, bigEndian: true), let type = bytes.u32(offset + 4, bigEndian: true) else {
            throw .truncated(format, "box header at offset \(offset)", have: bytes.count, need: offset + 8)
        }
        var header = 8
        let size: UInt64
        switch size32 {
        case 0:
            // Size 0 means "to the end of the enclosing container" (the file, at top level).
            size = UInt64(max(0, min(limit, zeroSizeEnd ?? limit) - offset))
        case 1:
            guard let large = bytes.u64(offset + 8, bigEndian: true) else {
                throw .truncated(format, "64-bit box size at offset \(offset)", have: bytes.count, need: offset + 16)
            }
            size = large
            header = 16
        default:
            size = UInt64(size32)
        }
        if type == uuid { header += 16 }
        let typeName = ImageHeaderBytes.fourCC(type)
        guard size >= UInt64(header) else {
            throw ImageParseFailure(
                reason: "\(format) box \(typeName) at offset \(offset) has size \(size), smaller than its \(header)-byte header"
            )
        }
        // Compared in UInt64 so a huge 64-bit size cannot wrap into a small end offset.
        guard size <= UInt64(limit - offset) else {
            throw ImageParseFailure(
                reason: limit == Int.max
                    ? "\(format) box \(typeName) at offset \(offset) has size \(size), larger than any file"
                    : "\(format) box \(typeName) at offset \(offset) has size \(size), overrunning its container (ends at \(limit))"
            )
        }
        return Box(type: type, start: offset, payload: offset + header, end: offset + Int(size))
    }

    /// The boxes directly inside `range`, which must lie within the supplied bytes.
    static func children(from start: Int, to end: Int, in bytes: ImageHeaderBytes, format: String) throws(ImageParseFailure) -> [Box] {
        var boxes: [Box] = []
        var offset = start
        // Every box is at least 8 bytes, so this loop runs at most (end - start) / 8 times.
        while offset < end {
            let child = try box(at: offset, limit: end, in: bytes, format: format)
            boxes.append(child)
            offset = child.end
        }
        return boxes
    }

    static func parse(_ bytes: ImageHeaderBytes) throws(ImageParseFailure) -> ImageInfo {
        // Top-level boxes may run to the end of a file we only see a prefix of, so their limit is "unbounded".
        let fileLimit = Int.max
        let typeBox = try box(at: 0, limit: fileLimit, zeroSizeEnd: bytes.count, in: bytes, format: "ISO-BMFF")
        guard typeBox.end - typeBox.payload >= 8 else {
            throw ImageParseFailure(reason: "ISO-BMFF ftyp box is \(typeBox.end) bytes, too small for its brands")
        }
        guard typeBox.end <= bytes.count else {
            throw .truncated("ISO-BMFF", "ftyp box", have: bytes.count, need: typeBox.end)
        }
        let major = bytes.u32(typeBox.payload, bigEndian: true) ?? 0
        var compatible: [UInt32] = []
        var brandAt = typeBox.payload + 8
        while brandAt + 4 <= typeBox.end, let brand = bytes.u32(brandAt, bigEndian: true) {
            compatible.append(brand)
            brandAt += 4
        }
        let imageFormat = try self.imageFormat(major: major, compatible: compatible)
        let format = imageFormat == .avif ? "AVIF" : "HEIC"

        // Find the top-level meta box; boxes before it (rarely, mdat) are skipped by their sizes.
        var offset = typeBox.end
        let metaBox: Box
        while true {
            guard offset < bytes.count else {
                throw ImageParseFailure(reason: "\(format) has no meta box in the \(bytes.count) bytes supplied")
            }
            let candidate = try box(at: offset, limit: fileLimit, zeroSizeEnd: bytes.count, in: bytes, format: format)
            if candidate.type == meta {
                metaBox = candidate
                break
            }
            guard candidate.end <= bytes.count else {
                throw ImageParseFailure(
                    reason: "\(format) has no meta box in the \(bytes.count) bytes supplied (box \(candidate.typeName) at offset \(candidate.start) runs past them)"
                )
            }
            offset = candidate.end
        }
        guard metaBox.end <= bytes.count else {
            throw .truncated(format, "meta box", have: bytes.count, need: metaBox.end)
        }
        // A size-0 meta runs to the end of the file, which a caller's prefix does not show: its children
        // would be cut wherever the prefix stops, so a prefix could describe an image the whole file
        // does not (found by the image-header fuzz target; encoders always size their meta box).
        if bytes.u32(metaBox.start, bigEndian: true) == 0 {
            throw ImageParseFailure(reason: "\(format) meta box has size 0 (runs to the end of the file), so its extent is unknown")
        }
        return try parseMeta(metaBox, in: bytes, imageFormat: imageFormat, format: format)
    }

    /// HEIC or AVIF from the `ftyp` brands: the major brand first, then the compatible ones.
    static func imageFormat(major: UInt32, compatible: [UInt32]) throws(ImageParseFailure) -> ImageFormat {
        if avifBrands.contains(major) { return .avif }
        if heicBrands.contains(major) { return .heic }
        if compatible.contains(where: avifBrands.contains) { return .avif }
        if compatible.contains(where: heicBrands.contains) { return .heic }
        let listed = compatible.prefix(8).map(ImageHeaderBytes.fourCC).joined(separator: " ")
        throw ImageParseFailure(
            reason: "no known image signature (ISO-BMFF file with brand \(ImageHeaderBytes.fourCC(major)), compatible [\(listed)]; not HEIC or AVIF)"
        )
    }

    /// The primary image's displayed size from a `meta` box whose children lie inside `bytes`.
    static func parseMeta(
        _ metaBox: Box, in bytes: ImageHeaderBytes, imageFormat: ImageFormat, format: String
    ) throws(ImageParseFailure) -> ImageInfo {
        // meta is a FullBox: four bytes of version and flags precede its children.
        let metaChildren = try children(from: metaBox.payload + 4, to: metaBox.end, in: bytes, format: format)
        var primary: UInt32?
        if let pitmBox = metaChildren.first(where: { $0.type == pitm }) {
            let version = bytes.u8(pitmBox.payload) ?? 0
            let id = version == 0
                ? bytes.u16(pitmBox.payload + 4, bigEndian: true).map(UInt32.init)
                : bytes.u32(pitmBox.payload + 4, bigEndian: true)
            guard let id, pitmBox.payload + 4 + (version == 0 ? 2 : 4) <= pitmBox.end else {
                throw ImageParseFailure(reason: "\(format) pitm box is too short for its item ID")
            }
            primary = id
        }
        guard let iprpBox = metaChildren.first(where: { $0.type == iprp }) else {
            throw ImageParseFailure(reason: "\(format) meta box has no iprp (item properties) box, so no ispe")
        }
        let iprpChildren = try children(from: iprpBox.payload, to: iprpBox.end, in: bytes, format: format)
        guard let ipcoBox = iprpChildren.first(where: { $0.type == ipco }) else {
            throw ImageParseFailure(reason: "\(format) iprp box has no ipco (property container) box, so no ispe")
        }
        let properties = try children(from: ipcoBox.payload, to: ipcoBox.end, in: bytes, format: format)

        if let primary {
            var associations: [Int]?
            for ipmaBox in iprpChildren where ipmaBox.type == ipma && associations == nil {
                associations = try propertyIndices(of: primary, in: ipmaBox, bytes: bytes, format: format)
            }
            if let associations {
                let chosen = associations.compactMap { $0 >= 1 && $0 <= properties.count ? properties[$0 - 1] : nil }
                if let size = try displaySize(of: chosen, in: bytes, format: format) {
                    return try validatedImage(imageFormat, format, width: size.width, height: size.height)
                }
            }
        }
        // No usable primary association: the largest ispe is the best remaining guess at the main image.
        var best: (width: UInt64, height: UInt64)?
        for property in properties where property.type == ispe {
            let size = try spatialExtent(property, in: bytes, format: format)
            if best.map({ $0.width * $0.height < size.width * size.height }) ?? true {
                best = size
            }
        }
        guard let best else {
            throw ImageParseFailure(reason: "\(format) has no ispe (image spatial extents) property")
        }
        return try validatedImage(imageFormat, format, width: best.width, height: best.height)
    }

    /// The 1-based ipco indices associated with `item`, or nil when this ipma does not mention it.
    private static func propertyIndices(
        of item: UInt32, in ipmaBox: Box, bytes: ImageHeaderBytes, format: String
    ) throws(ImageParseFailure) -> [Int]? {
        let truncated = ImageParseFailure(reason: "\(format) ipma box is shorter than its entries claim")
        guard let version = bytes.u8(ipmaBox.payload), let flags = bytes.u24(ipmaBox.payload + 1, bigEndian: true),
              let entryCount = bytes.u32(ipmaBox.payload + 4, bigEndian: true), ipmaBox.payload + 8 <= ipmaBox.end
        else { throw truncated }
        let wideIndex = flags & 1 != 0
        var at = ipmaBox.payload + 8
        // Every entry takes at least three bytes, so a hostile count cannot keep this loop past the box's end.
        for _ in 0..<entryCount {
            let id: UInt32?
            if version < 1 {
                id = bytes.u16(at, bigEndian: true).map(UInt32.init)
                at += 2
            } else {
                id = bytes.u32(at, bigEndian: true)
                at += 4
            }
            guard let id, let count = bytes.u8(at), at < ipmaBox.end else { throw truncated }
            at += 1
            let width = wideIndex ? 2 : 1
            guard at + Int(count) * width <= ipmaBox.end else { throw truncated }
            if id == item {
                return (0..<Int(count)).map { index in
                    let position = at + index * width
                    // The top bit marks "essential"; the rest is the index.
                    return wideIndex
                        ? Int((bytes.u16(position, bigEndian: true) ?? 0) & 0x7FFF)
                        : Int((bytes.u8(position) ?? 0) & 0x7F)
                }
            }
            at += Int(count) * width
        }
        return nil
    }

    /// The primary item's size after its transformative properties, or nil when it has no ispe.
    private static func displaySize(
        of properties: [Box], in bytes: ImageHeaderBytes, format: String
    ) throws(ImageParseFailure) -> (width: UInt64, height: UInt64)? {
        guard let extentBox = properties.first(where: { $0.type == ispe }) else { return nil }
        var size = try spatialExtent(extentBox, in: bytes, format: format)
        // HEIF lists transformative properties in the order they apply (clap, then irot, then imir).
        for property in properties {
            if property.type == clap, let cropped = cleanAperture(property, in: bytes),
               cropped.width <= size.width, cropped.height <= size.height {
                size = cropped
            } else if property.type == irot, property.payload < property.end,
                      let angle = bytes.u8(property.payload), angle & 1 == 1 {
                size = (size.height, size.width) // 90° or 270°
            }
        }
        return size
    }

    private static func spatialExtent(_ box: Box, in bytes: ImageHeaderBytes, format: String) throws(ImageParseFailure) -> (width: UInt64, height: UInt64) {
        guard box.payload + 12 <= box.end, let width = bytes.u32(box.payload + 4, bigEndian: true),
              let height = bytes.u32(box.payload + 8, bigEndian: true)
        else {
            throw ImageParseFailure(reason: "\(format) ispe box at offset \(box.start) is \(box.end - box.start) bytes, too short for width and height")
        }
        return (UInt64(width), UInt64(height))
    }

    /// The clean-aperture size, rounded as libheif does; nil when malformed, leaving the coded size in force.
    private static func cleanAperture(_ box: Box, in bytes: ImageHeaderBytes) -> (width: UInt64, height: UInt64)? {
        guard box.payload + 16 <= box.end,
              let widthN = bytes.u32(box.payload, bigEndian: true), let widthD = bytes.u32(box.payload + 4, bigEndian: true),
              let heightN = bytes.u32(box.payload + 8, bigEndian: true), let heightD = bytes.u32(box.payload + 12, bigEndian: true),
              widthD != 0, heightD != 0
        else { return nil }
        let width = (UInt64(widthN) + UInt64(widthD) / 2) / UInt64(widthD)
        let height = (UInt64(heightN) + UInt64(heightD) / 2) / UInt64(heightD)
        guard width > 0, height > 0 else { return nil }
        return (width, height)
    }
}
