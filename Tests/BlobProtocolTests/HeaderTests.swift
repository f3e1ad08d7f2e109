import BlobProtocol
import BlobStore
import Foundation
import HTTP1
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct HeaderTests {
    @Test func blobFieldNamesAreRecognisedInAnyCase() {
        for name in ["Blob-Meta-x", "BLOB-VALIDATE", "blob-", "bLoB-meta-"] { #expect(HeaderName.hasBlobPrefix(name), "\(name)") }
        for name in ["blob", "Blo", "", "Content-Type", "blobx-meta", "xblob-", "Blob_Meta"] { #expect(!HeaderName.hasBlobPrefix(name), "\(name)") }
        for name in HeaderName.allCases {
            #expect(HeaderName.hasBlobPrefix(name.rawValue) && name.staticName.description == name.rawValue)
            #expect(HeaderName(fieldName: name.rawValue.uppercased()) == name && HeaderName(fieldName: name.rawValue.lowercased()) == name)
        }
        #expect(HeaderName(fieldName: "Blob-Meta-x") == nil && HeaderName(fieldName: "Blob-Images-Width") == nil)
        #expect(HeaderName.userMetadataKey(fieldName: "Blob-Meta-Author") == "author")
        #expect(HeaderName.userMetadataKey(fieldName: "bLoB-mEtA-a_b-1") == "a_b-1")
        #expect(HeaderName.userMetadataKey(fieldName: "Blob-Meta-") == "")
        #expect(HeaderName.userMetadataKey(fieldName: "Blob-Validate") == nil && HeaderName.userMetadataKey(fieldName: "X-Blob-Meta-a") == nil)
    }

    /// Every `Blob-*` field PROTOCOL.md names is one of ``HeaderName``'s, and each of those is documented.
    @Test func aFieldNameMatchesItsHeaderInAnyCaseOnly() {
        for name in HeaderName.allCases {
            for spelling in [name.rawValue, name.rawValue.uppercased(), name.rawValue.lowercased()] {
                #expect(name.matches(fieldName: ArraySlice(spelling.utf8)), "\(spelling)")
            }
            for other in [String(name.rawValue.dropLast()), name.rawValue + "s", name.rawValue.replacingOccurrences(of: "-", with: "_"), ""] {
                #expect(!name.matches(fieldName: ArraySlice(other.utf8)), "\(other)")
            }
        }
        #expect(!HeaderName.expires.matches(fieldName: ArraySlice("Blob-Created".utf8)))
    }

    @Test func theDocumentedFieldsAreTheNames() {
        let named = Set(ProtocolDocument.codeSpans(ProtocolDocument.text).flatMap { span in
            span.split(whereSeparator: { !($0.isLetter || $0 == "-" || $0 == "<" || $0 == ">") }).map(String.init)
        }.filter { $0.hasPrefix("Blob-") })
        // `Blob-Meta-<key>` and its examples (`Blob-Meta-Lang`), and `Blob-Image-*` for the three image fields.
        let unknown = named.filter { name in
            !HeaderName.allCases.contains { $0.rawValue == name } && !name.hasPrefix(HeaderName.metaPrefix) && name != "Blob-Image-"
        }
        #expect(unknown.isEmpty, "documented but unknown: \(unknown)")
        for name in HeaderName.allCases { #expect(named.contains(name.rawValue), "\(name.rawValue) is not documented") }
    }

    /// The fields blobd writes for a blob's metadata are read back by its client as the same metadata
    /// (`modified` to the second, as `Last-Modified` carries it).
    @Test func metadataHeadersRoundTrip() throws {
        let metadata = BlobMetadata(
            identifier: "a", size: 5, contentType: "image/png", etag: ETag(checksum: 0xabc), created: Date(timeIntervalSince1970: 1_795_386_508.076),
            modified: Date(timeIntervalSince1970: 1_795_386_601.512), userMetadata: ["author": "ada", "b": "x y"],
            image: ImageInfo(format: .png, width: 3, height: 4))
        var headers = HTTPHeaders()
        headers.append(.contentType, value: metadata.contentType)
        headers.append(.etag, value: MetadataHeaders.etagValue(metadata.etag))
        headers.append(.lastModified, value: HTTPDates.imfFixdate(metadata.modified))
        headers.append(name: HeaderName.created.rawValue, value: HTTPDates.rfc3339(metadata.created))
        var fields: [String] = []
        MetadataHeaders.forEachBlobField(of: metadata) { name, value in
            fields.append(name)
            headers.append(name: name, value: value)
        }
        #expect(fields == ["Blob-Meta-author", "Blob-Meta-b", "Blob-Image-Format", "Blob-Image-Width", "Blob-Image-Height"])
        let decoded = try MetadataHeaders.metadata(identifier: "a", headers: headers, size: 5)
        #expect(decoded.etag == metadata.etag && decoded.userMetadata == metadata.userMetadata && decoded.image == metadata.image)
        #expect(decoded.contentType == "image/png" && decoded.size == 5)
        #expect(decoded.modified == Date(timeIntervalSince1970: 1_795_386_601))
        #expect(abs(decoded.created.timeIntervalSince1970 - metadata.created.timeIntervalSince1970) < 0.0005)
        #expect(throws: WireFormatError.self) { try MetadataHeaders.metadata(identifier: "a", headers: HTTPHeaders(), size: 0) }
    }

    @Test func validateValues() {
        for validation in [ContentValidation.none, .image, .record] {
            let value = MetadataHeaders.validateValue(validation)
            #expect(MetadataHeaders.validation(fromValue: value ?? "none") == validation)
            #expect(MetadataHeaders.validation(fromValue: (value ?? "none").uppercased()) == validation)
        }
        #expect(MetadataHeaders.validation(fromValue: "json") == nil)
    }
}

@Suite struct DaemonSocketTests {
    @Test func defaultSocketFollowsXDGRuntimeDirElseTmpPerUser() {
        #expect(DaemonSocket.defaultPath(environment: ["XDG_RUNTIME_DIR": "/run/user/7"]) == "/run/user/7/blobstore/blobd.sock")
        #expect(DaemonSocket.defaultPath(environment: [:]) == "/tmp/blobstore-\(getuid())/blobd.sock")
        #expect(DaemonSocket.defaultPath(environment: ["XDG_RUNTIME_DIR": "relative"]) == "/tmp/blobstore-\(getuid())/blobd.sock")
    }

    /// The help texts' spelling of the default is PROTOCOL.md's, and the path built is that spelling filled in.
    @Test func theTemplatesAreTheDocumentedDefault() {
        #expect(ProtocolDocument.text.contains(
            "`\(DaemonSocket.runtimeTemplate)` when `XDG_RUNTIME_DIR` is an absolute path, else `\(DaemonSocket.fallbackTemplate)`"))
        #expect(DaemonSocket.defaultPath(environment: ["XDG_RUNTIME_DIR": "/run/user/7"])
            == DaemonSocket.runtimeTemplate.replacingOccurrences(of: "$XDG_RUNTIME_DIR", with: "/run/user/7"))
        #expect(DaemonSocket.defaultPath(environment: [:]) == DaemonSocket.fallbackTemplate.replacingOccurrences(of: "$UID", with: "\(getuid())"))
    }

    @Test func clientsPreferBlobSocket() {
        #expect(DaemonSocket.clientPath(environment: ["BLOB_SOCKET": "/s", "XDG_RUNTIME_DIR": "/run/user/7"]) == "/s")
        #expect(DaemonSocket.clientPath(environment: ["BLOB_SOCKET": "", "XDG_RUNTIME_DIR": "/run/user/7"]) == "/run/user/7/blobstore/blobd.sock")
    }
}
