import BlobStore
import Foundation
import Testing

@Suite("Validation", .backends, .timeLimit(.minutes(5)))
struct ValidationBehaviourTests {
    // MARK: Content types and images

    @Test("content type defaults to octet-stream, or the image type for image bytes", arguments: StoreKind.allCases)
    func contentTypeDefaults(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            #expect(try await store.put(Data("plain".utf8), identifier: "plain").contentType == "application/octet-stream")
            #expect(try await store.put(Data(), identifier: "empty").contentType == "application/octet-stream")
            let given = try await store.put(Data("plain".utf8), identifier: "given", contentType: "text/plain")
            #expect(given.contentType == "text/plain")
            #expect(try await store.head("given").contentType == "text/plain")

            let png = minimalPNG(width: 3, height: 2)
            let image = try await store.put(png, identifier: "pic.png")
            #expect(image.contentType == "image/png")
            #expect(image.image?.format == .png)
            #expect(image.image?.width == 3)
            #expect(image.image?.height == 2)
            #expect(try await store.head("pic.png") == image)
            // An explicit type wins over recognition.
            let labelled = try await store.put(png, identifier: "labelled", contentType: "application/x-custom")
            #expect(labelled.contentType == "application/x-custom")
        }
    }

    @Test("putImage stores images and records their size", arguments: StoreKind.allCases)
    func putImage(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let png = minimalPNG(width: 640, height: 480)
            let metadata = try await store.putImage(png, identifier: "photo", userMetadata: ["album": "summer"])
            #expect(metadata.contentType == "image/png")
            #expect(metadata.image?.width == 640)
            #expect(metadata.image?.height == 480)
            #expect(metadata.userMetadata == ["album": "summer"])
            #expect(try await store.get("photo") == png)
        }
    }

    @Test("image validation refuses non-images and stores nothing", arguments: StoreKind.allCases)
    func imageValidationRefuses(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            for (id, data) in [("text", Data("not an image".utf8)), ("empty", Data()), ("truncated", minimalPNG(width: 1, height: 1).prefix(12))] {
                let error = await #expect(throws: BlobStoreError.self) { try await store.putImage(data, identifier: id) }
                guard case .notAnImage(let name, let identifier, let reason) = error else {
                    Issue.record("expected notAnImage for \(id), got \(String(describing: error))")
                    continue
                }
                #expect(name == store.name)
                #expect(identifier == id)
                #expect(!reason.isEmpty)
                #expect(try await store.exists(id) == false)
            }
            // A refused overwrite leaves the previous version.
            let png = minimalPNG(width: 1, height: 1)
            let original = try await store.putImage(png, identifier: "keep")
            await #expect(throws: BlobStoreError.self) { try await store.putImage(Data("nope".utf8), identifier: "keep") }
            #expect(try await store.head("keep") == original)
            #expect(try await store.get("keep") == png)
            #expect(try await store.statistics().count == 1)
        }
    }

    @Test("image recognition works across chunk boundaries of a streamed put", arguments: StoreKind.allCases)
    func streamedImage(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let png = minimalPNG(width: 17, height: 9)
            let chunks = stride(from: 0, to: png.count, by: 5).map { png[$0..<min($0 + 5, png.count)] }.map { Data($0) }
            let metadata = try await store.put(
                chunks: chunkStream(chunks), identifier: "streamed.png", options: PutOptions(validation: .image))
            #expect(metadata.contentType == "image/png")
            #expect(metadata.image?.width == 17)
            #expect(metadata.image?.height == 9)
            #expect(try await store.get("streamed.png") == png)
        }
    }

    // MARK: Records

    struct Note: Codable, Equatable {
        var title: String
        var tags: [String]
        var pinned: Bool
    }

    struct Person: Codable, Equatable {
        var name: String
        var age: Int
    }

    struct NameOnly: Codable {
        var name: String
    }

    @Test("records round trip as JSON", arguments: StoreKind.allCases)
    func recordRoundTrip(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let note = Note(title: "Groceries ü", tags: ["home", "todo"], pinned: true)
            let metadata = try await store.storeRecord(note, identifier: "notes/1")
            #expect(metadata.contentType == "application/json")
            #expect(try await store.loadRecord(Note.self, identifier: "notes/1") == note)
            let json = try JSONSerialization.jsonObject(with: try await store.get("notes/1")) as? [String: Any]
            #expect(json?["title"] as? String == "Groceries ü")
        }
    }

    @Test("record validation refuses invalid JSON and stores nothing", arguments: StoreKind.allCases)
    func invalidJSON(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            for (id, text) in [("broken", "{\"a\": "), ("words", "hello world"), ("empty", "")] {
                let error = await #expect(throws: BlobStoreError.self) {
                    try await store.put(Data(text.utf8), identifier: id, options: PutOptions(validation: .record))
                }
                guard case .invalidRecord(let name, let identifier, _) = error else {
                    Issue.record("expected invalidRecord for \(id), got \(String(describing: error))")
                    continue
                }
                #expect(name == store.name)
                #expect(identifier == id)
                #expect(try await store.exists(id) == false)
            }
            // Valid JSON, including fragments, is accepted and typed application/json.
            let object = try await store.put(Data("{\"a\": [1, 2]}".utf8), identifier: "object", options: PutOptions(validation: .record))
            #expect(object.contentType == "application/json")
            #expect(try await store.put(Data("42".utf8), identifier: "fragment", options: PutOptions(validation: .record)).size == 2)
            #expect(try await store.statistics().count == 2)
        }
    }

    @Test("a decoding failure names the blob and the missing key", arguments: StoreKind.allCases)
    func decodingFailure(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            try await store.storeRecord(NameOnly(name: "Ada"), identifier: "people/ada")
            let error = await #expect(throws: BlobStoreError.self) {
                try await store.loadRecord(Person.self, identifier: "people/ada")
            }
            guard case .invalidRecord(let name, let identifier, let reason) = error else {
                Issue.record("expected invalidRecord, got \(String(describing: error))")
                return
            }
            #expect(name == store.name)
            #expect(identifier == "people/ada")
            #expect(reason.contains("age"))
            let message = String(describing: error!)
            #expect(message.contains("people/ada"))
            #expect(message.contains("'age'"))
            // A missing record is notFound, not a decoding failure.
            await #expect(throws: BlobStoreError.notFound(store: store.name, identifier: "people/bob")) {
                try await store.loadRecord(Person.self, identifier: "people/bob")
            }
        }
    }

    // MARK: Identifiers

    @Test("every identifier rule is enforced with the right rule", arguments: StoreKind.allCases)
    func identifierRules(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let cases: [(String, BlobIdentifier.Rule)] = [
                ("", .empty),
                (String(repeating: "a", count: 1025), .tooLong(byteCount: 1025)),
                (String(repeating: "é", count: 512) + "a", .tooLong(byteCount: 1025)),
                ("a\u{0}b", .controlCharacter(scalar: 0, byteOffset: 1)),
                ("line\nbreak", .controlCharacter(scalar: 0x0A, byteOffset: 4)),
                ("tab\there", .controlCharacter(scalar: 0x09, byteOffset: 3)),
                ("del\u{7F}", .controlCharacter(scalar: 0x7F, byteOffset: 3)),
                ("é\u{85}", .controlCharacter(scalar: 0x85, byteOffset: 2)),
            ]
            for (id, rule) in cases {
                let expected = BlobStoreError.invalidIdentifier(identifier: id, rule: rule)
                await #expect(throws: expected) { try await store.put(Data("x".utf8), identifier: id) }
                await #expect(throws: expected) { try await store.put(chunks: chunkStream([Data("x".utf8)]), identifier: id, options: PutOptions()) }
                await #expect(throws: expected) { try await store.storeRecord(["k": 1], identifier: id) }
            }
            #expect(try await store.statistics() == StoreStatistics(count: 0, bytes: 0))
            #expect(try await store.listAll().isEmpty)
        }
    }

    @Test("reads and removes refuse invalid identifiers", arguments: StoreKind.allCases)
    func invalidIdentifierOnRead(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let empty = BlobStoreError.invalidIdentifier(identifier: "", rule: .empty)
            await #expect(throws: empty) { try await store.get("") }
            await #expect(throws: empty) { try await store.head("") }
            await #expect(throws: empty) { try await store.exists("") }
            await #expect(throws: empty) { try await store.remove("") }
            let newline = BlobStoreError.invalidIdentifier(identifier: "a\n", rule: .controlCharacter(scalar: 0x0A, byteOffset: 1))
            await #expect(throws: newline) { try await store.get("a\n", range: 0..<1) }
            await #expect(throws: newline) { try await store.stream("a\n") }
        }
    }

    @Test("odd but valid identifiers round trip and are nothing but names", arguments: StoreKind.allCases)
    func oddIdentifiers(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let all = [
                "../x", "/etc/passwd", "%2e%2e", "a/../../b", "a//b/", ".", "..", "./", "/", "~", ".hidden",
                String(repeating: "x", count: 1024), String(repeating: "é", count: 512), "🦊/🐇 and 🐢",
                "with spaces ", " leading", "quote\"s'and\\back", "日本語/ファイル", "a:b*c?d<e>f|g", "CON", "nul",
            ]
            // Over HTTP, identifiers with an empty, '.' or '..' segment are refused, by name; on S3, those
            // longer than a key holds after the store's prefix, naming the limit (see StoreKind.serves).
            for id in all where !kind.serves(id) {
                let error = await #expect(throws: BlobStoreError.self, "\(id)") { try await store.put(Data("x".utf8), identifier: id) }
                switch error {
                case .invalidIdentifier(let identifier, _)?:
                    #expect(identifier == id)
                case .tooLarge(let what, let limit, let actual)? where kind == .s3:
                    #expect(what.contains("S3 key") && what.contains(String(id.prefix(20))), "\(what)")
                    #expect(limit == Int64(S3Gateway.maximumIdentifierByteCount) && actual == Int64(id.utf8.count))
                default:
                    Issue.record("expected invalidIdentifier for '\(id)', got \(String(describing: error))")
                }
            }
            let ids = all.filter(kind.serves)
            for (index, id) in ids.enumerated() {
                let data = Data("content \(index)".utf8)
                let metadata = try await store.put(data, identifier: id)
                #expect(Array(metadata.identifier.utf8) == Array(id.utf8))
            }
            for (index, id) in ids.enumerated() {
                #expect(try await store.get(id) == Data("content \(index)".utf8), "identifier \(id)")
                #expect(Array(try await store.head(id).identifier.utf8) == Array(id.utf8))
            }
            #expect(try await store.statistics().count == ids.count)
            let listed = try await store.listAll().map(\.identifier)
            #expect(firstDifference(listed, byteOrdered(ids)) == nil)
            // "a/../../b" is not "b", and "/etc/passwd" is not the system file.
            #expect(try await store.exists("b") == false)
            #expect(try await store.exists("etc/passwd") == false)
            for id in ids { #expect(try await store.remove(id), "remove \(id)") }
            #expect(try await store.statistics().count == 0)
        }
    }

    // MARK: Metadata

    @Test("user metadata and content type rules are enforced; nothing is stored", arguments: StoreKind.allCases)
    func metadataRules(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let tooMany = Dictionary(uniqueKeysWithValues: (0...UserMetadataRules.maximumCount).map { ("k\($0)", "v") })
            let bad: [(String, PutOptions)] = [
                ("uppercase key", PutOptions(userMetadata: ["Key": "v"])),
                ("space in key", PutOptions(userMetadata: ["a key": "v"])),
                ("empty key", PutOptions(userMetadata: ["": "v"])),
                ("long key", PutOptions(userMetadata: [String(repeating: "k", count: 65): "v"])),
                ("too many pairs", PutOptions(userMetadata: tooMany)),
                ("long value", PutOptions(userMetadata: ["k": String(repeating: "v", count: 1025)])),
                ("control in value", PutOptions(userMetadata: ["k": "a\nb"])),
                ("total too large", PutOptions(userMetadata: Dictionary(uniqueKeysWithValues: (0..<9).map { ("k\($0)", String(repeating: "v", count: 1000)) }))),
                ("empty content type", PutOptions(contentType: "")),
                ("control in content type", PutOptions(contentType: "text/plain\r\nX-Evil: 1")),
                ("non-ASCII content type", PutOptions(contentType: "text/plâin")),
                ("long content type", PutOptions(contentType: "x/" + String(repeating: "y", count: 254))),
            ]
            for (label, options) in bad {
                let error = await #expect(throws: BlobStoreError.self, "\(label)") {
                    try await store.put(Data("x".utf8), identifier: "doc", options: options)
                }
                guard case .invalidMetadata(let name, let identifier, let reason) = error else {
                    Issue.record("expected invalidMetadata for \(label), got \(String(describing: error))")
                    continue
                }
                #expect(name == store.name)
                #expect(identifier == "doc")
                #expect(!reason.isEmpty)
            }
            #expect(try await store.exists("doc") == false)
            // The limits themselves are fine.
            let atLimit = Dictionary(uniqueKeysWithValues: (0..<UserMetadataRules.maximumCount).map { ("k\($0)", "v") })
            let ok = try await store.put(Data("x".utf8), identifier: "doc", options: PutOptions(
                contentType: "x/" + String(repeating: "y", count: 253), userMetadata: atLimit))
            #expect(ok.userMetadata == atLimit)
            #expect(try await store.head("doc").userMetadata.count == UserMetadataRules.maximumCount)
            let longValue = try await store.put(Data("x".utf8), identifier: "doc2", options: PutOptions(
                userMetadata: ["long-value_1": String(repeating: "é", count: 512)]))
            #expect(try await store.head("doc2") == longValue)
        }
    }
}
