import Foundation

/// One object of a listing.
package struct S3ObjectSummary: Sendable, Hashable {
    /// The key, URL-decoded.
    package var key: String
    /// `LastModified`.
    package var lastModified: Date?
    /// The ETag, unquoted.
    package var etag: String
    /// The size in bytes.
    package var size: Int64
}

/// One page of ListObjectsV2 (`<ListBucketResult>`).
package struct S3ListObjectsPage: Sendable, Hashable {
    /// The objects, in the order S3 lists them (UTF-8 byte order of keys).
    package var objects: [S3ObjectSummary]
    /// With a delimiter: the rolled-up prefixes, URL-decoded.
    package var commonPrefixes: [String]
    /// Whether another page follows.
    package var isTruncated: Bool
    /// The token for the next page (opaque; sent back as `continuation-token`).
    package var nextContinuationToken: String?

    /// Parses the answer's body. Keys and prefixes are URL-decoded when the answer says
    /// `<EncodingType>url</EncodingType>`.
    package init(xml: some Collection<UInt8>) throws(S3ResponseParseError) {
        let root = try S3ResponseParseError.root(of: xml, expecting: "ListBucketResult")
        let decode = root.text(of: "EncodingType")?.lowercased() == "url"
        func key(_ text: String) -> String { decode ? S3XMLValues.urlDecoded(text) : text }
        var objects: [S3ObjectSummary] = []
        for contents in root.children("Contents") {
            guard let name = contents.text(of: "Key") else { throw S3ResponseParseError(reason: "a <Contents> without a <Key>") }
            let sizeText = contents.text(of: "Size") ?? "0"
            guard let size = Int64(sizeText), size >= 0 else { throw S3ResponseParseError(reason: "a <Size> of '\(sizeText)'") }
            objects.append(S3ObjectSummary(
                key: key(name), lastModified: contents.text(of: "LastModified").flatMap(S3XMLValues.date),
                etag: S3XMLValues.unquotedETag(contents.text(of: "ETag") ?? ""), size: size
            ))
        }
        self.objects = objects
        commonPrefixes = root.children("CommonPrefixes").compactMap { $0.text(of: "Prefix").map(key) }
        isTruncated = root.text(of: "IsTruncated")?.lowercased() == "true"
        nextContinuationToken = root.text(of: "NextContinuationToken").flatMap { $0.isEmpty ? nil : $0 }
        if isTruncated, nextContinuationToken == nil {
            throw S3ResponseParseError(reason: "a truncated listing without a <NextContinuationToken>")
        }
    }
}
