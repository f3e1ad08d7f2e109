import BlobStore

/// Properties of the image header parser on arbitrary bytes.
enum ImageHeaderFuzz {
    static func check(_ input: UnsafeRawBufferPointer) -> String? {
        let whole = ImageHeaderParser.parse(input)
        if case .success(let info) = whole {
            if info.width <= 0 || info.height <= 0 { return "\(info.format) with size \(info.width)×\(info.height)" }
            if info.width > Int(UInt32.max) || info.height > Int(UInt32.max) {
                return "\(info.format) size \(info.width)×\(info.height) beyond 32 bits"
            }
        }
        // A prefix never knows more than the whole: what it recognises, the whole recognises the same way.
        if input.count > 1 {
            let cut = Int(input[input.count - 1]) * input.count / 256
            if case .success(let partial) = ImageHeaderParser.parse(UnsafeRawBufferPointer(rebasing: input[..<cut])),
                whole != .success(partial)
            {
                return "the first \(cut) bytes parse as \(partial), all \(input.count) as \(whole)"
            }
        }
        return nil
    }
}
