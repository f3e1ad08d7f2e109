/// Content types for `put`: the syntax `--type` must have, and a guess from a file name's extension.
enum ContentTypes {
    /// Common extensions and their types. Image extensions are absent on purpose: for images the
    /// store recognises the format from the bytes, which beats a name (a `.png` that is really a JPEG).
    static let byExtension: [String: String] = [
        "txt": "text/plain", "text": "text/plain", "log": "text/plain", "md": "text/markdown",
        "csv": "text/csv", "tsv": "text/tab-separated-values", "html": "text/html", "htm": "text/html",
        "css": "text/css", "js": "text/javascript", "mjs": "text/javascript", "xml": "application/xml",
        "json": "application/json", "jsonl": "application/jsonl", "ndjson": "application/x-ndjson",
        "yaml": "application/yaml", "yml": "application/yaml", "toml": "application/toml",
        "pdf": "application/pdf", "zip": "application/zip", "gz": "application/gzip", "tgz": "application/gzip",
        "tar": "application/x-tar", "bz2": "application/x-bzip2", "xz": "application/x-xz", "zst": "application/zstd",
        "7z": "application/x-7z-compressed", "wasm": "application/wasm", "svg": "image/svg+xml", "ico": "image/vnd.microsoft.icon",
        "mp3": "audio/mpeg", "wav": "audio/wav", "ogg": "audio/ogg", "flac": "audio/flac", "m4a": "audio/mp4",
        "mp4": "video/mp4", "m4v": "video/mp4", "webm": "video/webm", "mov": "video/quicktime", "mkv": "video/x-matroska",
        "woff": "font/woff", "woff2": "font/woff2", "ttf": "font/ttf", "otf": "font/otf",
    ]

    /// The type for `name`'s extension (case-insensitive), or `nil` when the table has none.
    static func guess(forName name: String) -> String? {
        let last = name.split(separator: "/").last.map(String.init) ?? name
        guard let dot = last.lastIndex(of: "."), dot != last.startIndex else { return nil }
        return byExtension[last[last.index(after: dot)...].lowercased()]
    }

    /// Why `type` is not a media type `type/subtype[; name=value]…` (RFC 9110 §8.3.1), or `nil`.
    static func violation(_ type: String) -> String? {
        let expected = "expected TYPE/SUBTYPE with optional '; name=value' parameters, e.g. text/plain; charset=utf-8"
        var parts = type.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingSpaces }
        let essence = parts.removeFirst()
        let halves = essence.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2, isToken(halves[0]), isToken(halves[1]) else { return expected }
        for parameter in parts {
            guard let equals = parameter.firstIndex(of: "="), isToken(parameter[..<equals]) else { return expected }
            let value = parameter[parameter.index(after: equals)...]
            let quoted = value.count >= 2 && value.first == "\"" && value.last == "\""
            guard quoted || isToken(value) else { return expected }
        }
        return nil
    }

    /// RFC 9110 `token`: one or more of ALPHA, DIGIT and ``!#$%&'*+-.^_`|~``.
    private static func isToken(_ text: Substring) -> Bool {
        !text.isEmpty && text.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                || "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar))
        }
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }
}
