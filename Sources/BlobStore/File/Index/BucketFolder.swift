internal import BlobSystem

/// One blob file in a bucket folder.
struct BucketEntry: Sendable {
    var identifier: [UInt8]
    var fileName: String
}

/// What a bucket folder holds, read from the folder itself.
enum BucketFolder {
    /// The blobs in bucket folder `folder`, sorted by identifier bytes; hashed names are resolved
    /// through their headers, and names this store does not write are left out.
    static func entries(of folder: String) throws -> [BucketEntry] {
        var result: [BucketEntry] = []
        let names = try io("list folder", folder) { try DirectoryStream.entries(of: folder) }
        for entry in names {
            switch FileNameCoding.decode(entry.name) {
            case .identifier(let id):
                result.append(BucketEntry(identifier: Array(id.utf8), fileName: entry.name))
            case .hashed:
                if case .present(let header) = try BlobReader.existing(at: folder + "/" + entry.name),
                    FileNameCoding.name(for: header.identifier) == entry.name
                {
                    result.append(BucketEntry(identifier: Array(header.identifier.utf8), fileName: entry.name))
                }
            case .foreign:
                continue
            }
        }
        result.sort { $0.identifier.lexicographicallyPrecedes($1.identifier) }
        return result
    }
}
