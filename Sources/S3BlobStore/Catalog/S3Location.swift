/// Where a daemon's (or `blob`'s) stores live on S3: `s3://BUCKET[/PREFIX]`, as `--backend` takes it.
package struct S3Location: Sendable, Hashable, CustomStringConvertible {
    /// The bucket.
    package var bucket: String
    /// The key prefix under which the stores live, without a trailing `/`; empty for the bucket's top.
    package var prefix: String

    /// A location from its parts (a trailing `/` of `prefix` is dropped).
    package init(bucket: String, prefix: String = "") {
        self.bucket = bucket
        var prefix = Substring(prefix)
        while prefix.hasSuffix("/") { prefix = prefix.dropLast() }
        self.prefix = String(prefix)
    }

    /// Parses `s3://BUCKET`, `s3://BUCKET/` or `s3://BUCKET/PREFIX` (a trailing `/` is dropped).
    /// Throws ``S3LocationError`` saying what is wrong: another scheme, a bucket name S3 refuses
    /// (3–63 of `a-z 0-9 . -`, starting and ending with a letter or digit), or a prefix with an
    /// empty segment, a `.` or `..` segment, or a control character.
    package init(parsing text: String) throws(S3LocationError) {
        guard text.hasPrefix("s3://") else { throw S3LocationError(text: text, reason: "expected s3://BUCKET or s3://BUCKET/PREFIX") }
        let rest = text.dropFirst("s3://".count)
        let bucket = String(rest.prefix { $0 != "/" })
        let prefix = String(rest.dropFirst(bucket.count).drop { $0 == "/" })
        let bytes = Array(bucket.utf8)
        let allowed = bytes.allSatisfy { (0x61...0x7a).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2e || $0 == 0x2d }
        guard (3...63).contains(bytes.count), allowed, let first = bytes.first, let last = bytes.last,
              first != 0x2e, first != 0x2d, last != 0x2e, last != 0x2d
        else {
            throw S3LocationError(text: text, reason: "'\(bucket)' is not a bucket name (3 to 63 of a-z, 0-9, '.' and '-', starting and ending with a letter or digit)")
        }
        self.init(bucket: bucket, prefix: prefix)
        if self.prefix.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) {
            throw S3LocationError(text: text, reason: "the prefix holds a control character")
        }
        if !self.prefix.isEmpty, self.prefix.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) {
            throw S3LocationError(text: text, reason: "the prefix '\(self.prefix)' has an empty, '.' or '..' segment")
        }
        if self.prefix.utf8.count > 512 {
            throw S3LocationError(text: text, reason: "the prefix is \(self.prefix.utf8.count) bytes; at most 512 leave room for store names and identifiers in S3's 1,024-byte keys")
        }
    }

    /// The keys of the stores under this location.
    package var layout: S3StoreLayout { S3StoreLayout(prefix: prefix) }

    /// `s3://BUCKET` or `s3://BUCKET/PREFIX`.
    package var description: String { prefix.isEmpty ? "s3://\(bucket)" : "s3://\(bucket)/\(prefix)" }
}

/// An `s3://` location that cannot be used.
package struct S3LocationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was given.
    package var text: String
    /// What is wrong with it.
    package var reason: String

    /// `'TEXT' is not an S3 location: REASON`.
    package var description: String { "'\(text)' is not an S3 location: \(reason)" }
}
