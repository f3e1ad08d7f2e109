import BlobStore

/// Properties of the whole-file image validator on arbitrary bytes.
enum ImageWholeFuzz {
    static func check(_ input: UnsafeRawBufferPointer) -> String? {
        let whole = ImageValidator.validate(input)
        if case .success(let info) = whole {
            if info.width <= 0 || info.height <= 0 { return "\(info.format) with size \(info.width)×\(info.height)" }
            if info.width > Int(UInt32.max) || info.height > Int(UInt32.max) {
                return "\(info.format) size \(info.width)×\(info.height) beyond 32 bits"
            }
            // Both read the size from the same header fields, so where both accept they agree.
            if case .success(let header) = ImageHeaderParser.parse(input), header != info {
                return "the validator says \(info), the header parser \(header)"
            }
        }
        // The verdict depends only on the bytes: fed one byte at a time (small inputs; larger ones in
        // chunks of 1 to 16 bytes, which keeps the run fast enough to explore), or in chunks whose sizes
        // come from the input itself, it is the same, reason included.
        let small = input.count <= 1024 ? [1] : (0..<16).map { 1 + ($0 * 7) % 16 }
        for sizes in [small, chunkSizes(input)] {
            let chunked = verdict(input, sizes: sizes)
            if chunked != whole {
                return "whole: \(whole); in chunks of \(sizes.prefix(8)): \(chunked)"
            }
        }
        return nil
    }

    /// Sizes from 1 to 256, drawn from the input's bytes (so libFuzzer explores chunkings too).
    private static func chunkSizes(_ input: UnsafeRawBufferPointer) -> [Int] {
        guard !input.isEmpty else { return [1] }
        var state = UInt64(input.count)
        for byte in input.suffix(16) { state = state &* 0x100_0000_01B3 ^ UInt64(byte) }
        return (0..<32).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 56) + 1
        }
    }

    private static func verdict(_ input: UnsafeRawBufferPointer, sizes: [Int]) -> Result<ImageInfo, ImageParseFailure> {
        let validator = ImageValidator()
        var at = 0, turn = 0
        while at < input.count {
            let end = min(input.count, at + sizes[turn % sizes.count])
            validator.append(UnsafeRawBufferPointer(rebasing: input[at..<end]))
            at = end
            turn += 1
        }
        do {
            return try validator.finish { offset, buffer in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: input[offset..<offset + buffer.count]))
            }
        } catch {
            return .failure(ImageParseFailure(reason: "reader: \(error)"))
        }
    }
}
