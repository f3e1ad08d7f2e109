import BlobStore

/// Properties of the identifier → file name mapping on arbitrary byte strings.
enum IdentifierMappingFuzz {
    static func check(_ input: UnsafeRawBufferPointer) -> String? {
        let bytes = Array(input)
        // Only valid UTF-8 can be an identifier; other bytes must be refused by the decoder.
        guard case .success(let identifier) = BlobIdentifier.decode(bytes) else {
            if let text = String(validating: bytes, as: UTF8.self), BlobIdentifier.violation(in: text) == nil {
                return "valid identifier \(debug(text)) refused by decode"
            }
            return nil
        }
        if BlobIdentifier.violation(in: identifier) != nil { return "decode accepted \(debug(identifier)) that violates a rule" }
        let name: String
        do { name = try BlobFileName.name(for: identifier) } catch { return "valid identifier \(debug(identifier)) refused: \(error)" }

        // One path component, inside the folder, never hidden, never a temp name, never too long.
        let nameBytes = Array(name.utf8)
        if nameBytes.isEmpty { return "empty file name for \(debug(identifier))" }
        if nameBytes.contains(0x2F) { return "file name \(debug(name)) holds '/'" }
        if nameBytes.contains(0) { return "file name \(debug(name)) holds NUL" }
        if nameBytes.first == 0x2E { return "file name \(debug(name)) starts with '.'" }
        if nameBytes.count > BlobFileName.maximumLength { return "file name of \(nameBytes.count) bytes for \(debug(identifier))" }

        // Reading the name back gives the identifier, unless it is a long identifier's hashed name.
        if BlobFileName.isHashed(name) {
            // Escaping at most triples a name, so an identifier this short always fits unhashed.
            if identifier.utf8.count * 3 <= BlobFileName.maximumLength {
                return "short identifier \(debug(identifier)) got a hashed name"
            }
        } else if BlobFileName.identifier(fromName: name) != identifier {
            return "\(debug(identifier)) → \(debug(name)) → \(String(describing: BlobFileName.identifier(fromName: name)))"
        }

        // A name the store never writes is never read back as an identifier: decoding the raw bytes
        // as a name must either fail or give a name that maps back to the same bytes.
        if let raw = String(validating: bytes, as: UTF8.self), let read = BlobFileName.identifier(fromName: raw),
            let canonical = try? BlobFileName.name(for: read), canonical != raw
        {
            return "file name \(debug(raw)) reads as \(debug(read)), whose own name is \(debug(canonical))"
        }
        return nil
    }

    private static func debug(_ text: String) -> String { String(reflecting: String(text.prefix(80))) }
}
