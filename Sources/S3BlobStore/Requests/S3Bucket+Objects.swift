/// Single-object requests and listings.
extension S3Bucket {
    /// PutObject: `PUT` the body (its length is the transport's `Content-Length`, not signed here)
    /// with object headers and an optional atomic precondition.
    package func putObject(
        key: String, payload: PayloadHash, headers: S3ObjectHeaders = S3ObjectHeaders(), condition: S3WriteCondition? = nil
    ) throws(S3RequestError) -> S3Request {
        try validate(key: key, "PutObject")
        var fields = try headers.fields("PutObject")
        if let condition { fields.append(condition.field) }
        return request("PUT", path: path(forKey: key), headers: fields, payload: payload)
    }

    /// GetObject, whole or a range; `ifNoneMatch` makes it conditional (`304` when unchanged —
    /// the gateway sends no ETag with that 304).
    package func getObject(key: String, range: S3ByteRange? = nil, ifNoneMatch etag: String? = nil) throws(S3RequestError) -> S3Request {
        try validate(key: key, "GetObject")
        var fields: [S3HeaderField] = []
        if let range {
            guard range.isValid else {
                throw .invalidArgument(name: "range", reason: "\(range.headerValue) is not a satisfiable byte range", operation: "GetObject")
            }
            fields.append(S3HeaderField("Range", range.headerValue))
        }
        if let etag { fields.append(S3HeaderField("If-None-Match", S3XMLValues.quotedETag(etag))) }
        return request("GET", path: path(forKey: key), headers: fields)
    }

    /// HeadObject: the object's headers only (a missing key is a `404` without a body).
    package func headObject(key: String) throws(S3RequestError) -> S3Request {
        try validate(key: key, "HeadObject")
        return request("HEAD", path: path(forKey: key))
    }

    /// DeleteObject (`204` whether or not the key existed; the gateway ignores `If-Match` here).
    package func deleteObject(key: String) throws(S3RequestError) -> S3Request {
        try validate(key: key, "DeleteObject")
        return request("DELETE", path: path(forKey: key))
    }

    /// The most keys one ListObjectsV2 page returns.
    package static let maximumKeysPerPage = 1000

    /// ListObjectsV2, one page, always with `encoding-type=url` (a key holding a control character
    /// would otherwise make the answer invalid XML); parse it with ``S3ListObjectsPage/init(xml:)``.
    package func listObjects(
        prefix: String? = nil, continuationToken: String? = nil, startAfter: String? = nil, delimiter: String? = nil,
        maxKeys: Int? = nil
    ) throws(S3RequestError) -> S3Request {
        var query = [S3QueryItem("list-type", "2"), S3QueryItem("encoding-type", "url")]
        if let prefix, !prefix.isEmpty { query.append(S3QueryItem("prefix", prefix)) }
        if let continuationToken { query.append(S3QueryItem("continuation-token", continuationToken)) }
        if let startAfter { query.append(S3QueryItem("start-after", startAfter)) }
        if let delimiter { query.append(S3QueryItem("delimiter", delimiter)) }
        if let maxKeys {
            guard (1...Self.maximumKeysPerPage).contains(maxKeys) else {
                throw .invalidArgument(name: "max-keys", reason: "must be 1–\(Self.maximumKeysPerPage), not \(maxKeys)", operation: "ListObjectsV2")
            }
            query.append(S3QueryItem("max-keys", String(maxKeys)))
        }
        return request("GET", path: bucketPath, query: query)
    }
}
