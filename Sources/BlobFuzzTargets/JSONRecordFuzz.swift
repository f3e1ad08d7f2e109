import BlobStore

/// Properties of the strict JSON validator behind `Blob-Validate: record` on arbitrary bytes.
enum JSONRecordFuzz {
    static func check(_ input: UnsafeRawBufferPointer) -> String? {
        let whole = JSONValidator.violation(in: input)
        if let whole, whole.offset < 0 || whole.offset > Int64(input.count) {
            return "failure offset \(whole.offset) outside the \(input.count)-byte document: \(whole)"
        }
        // Streaming: the same verdict, at the same place, however the bytes are split.
        if !input.isEmpty {
            let cut = Int(input[input.count - 1]) * input.count / 256
            var split = JSONValidator()
            let early = split.consume(UnsafeRawBufferPointer(rebasing: input[..<cut]))
            let pieces = early ?? split.consume(UnsafeRawBufferPointer(rebasing: input[cut...])) ?? split.finish()
            if pieces != whole { return "split at \(cut): \(pieces.map(String.init(describing:)) ?? "valid"), whole: \(whole.map(String.init(describing:)) ?? "valid")" }
        }
        guard whole == nil else { return nil }
        // A valid document is one value: nested in an array or under a key it stays valid, and a
        // byte that is not whitespace after it makes it invalid.
        let bytes = Array(input)
        if JSONValidator.violation(of: Array("[".utf8) + bytes + Array("]".utf8)) != nil && !nestsTooDeep(bytes) {
            return "valid, but not inside [ ]"
        }
        if JSONValidator.violation(of: Array("{\"k\":".utf8) + bytes + Array("}".utf8)) != nil && !nestsTooDeep(bytes) {
            return "valid, but not as an object's value"
        }
        if JSONValidator.violation(of: bytes + Array(",".utf8)) == nil { return "valid with a trailing ','" }
        return nil
    }

    /// Whether one more level of nesting would pass the validator's depth limit (a rough upper
    /// bound: counts every bracket, also those in strings).
    private static func nestsTooDeep(_ bytes: [UInt8]) -> Bool {
        bytes.count(where: { $0 == 0x5B || $0 == 0x7B }) >= JSONValidator.maximumDepth
    }
}

extension JSONValidator {
    fileprivate static func violation(of bytes: [UInt8]) -> Failure? {
        bytes.withUnsafeBytes { violation(in: $0) }
    }
}
