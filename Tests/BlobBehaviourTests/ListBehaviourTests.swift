import BlobStore
import Foundation
import Testing

@Suite("Listing", .backends, .timeLimit(.minutes(5)))
struct ListBehaviourTests {
    /// Identifiers whose UTF-8 byte order differs from Swift `String` order (which compares canonically).
    static let trickyIdentifiers = [
        "Z", "a", "é", "e\u{301}", "e\u{301}z", "\u{E9}a", "a\u{301}", "b", "\u{E1}", "ß", "ss", "😀", "\u{FFFD}", "~",
        "A/b", "A/a", "A-", "A", "a/", "a/b", "a0", "a\u{10000}", "a\u{FFFF}",
    ]

    @Test("prefix filters by identifier bytes", arguments: StoreKind.allCases)
    func prefix(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            for id in ["a", "a/1", "a/2", "a/2/x", "ab", "b/1", "e\u{301}", "\u{E9}"] {
                try await store.put(Data(id.utf8), identifier: id)
            }
            #expect(try await store.list(ListQuery(prefix: "a/")).items.map(\.identifier) == ["a/1", "a/2", "a/2/x"])
            #expect(try await store.list(ListQuery(prefix: "a")).items.map(\.identifier) == ["a", "a/1", "a/2", "a/2/x", "ab"])
            #expect(try await store.list(ListQuery(prefix: "a/2/x")).items.map(\.identifier) == ["a/2/x"])
            #expect(try await store.list(ListQuery(prefix: "c")).items.isEmpty)
            #expect(try await store.list(ListQuery(prefix: "a/2/x/")).items.isEmpty)
            #expect(try await store.list(ListQuery(prefix: "")).items.count == 8)
            // Byte-wise: the decomposed é starts with the byte "e", the precomposed one does not.
            #expect(utf8Bytes(try await store.list(ListQuery(prefix: "e")).items.map(\.identifier)) == utf8Bytes(["e\u{301}"]))
            #expect(utf8Bytes(try await store.list(ListQuery(prefix: "\u{E9}")).items.map(\.identifier)) == utf8Bytes(["\u{E9}"]))
            #expect(utf8Bytes(try await store.list(ListQuery(prefix: "e\u{301}")).items.map(\.identifier)) == utf8Bytes(["e\u{301}"]))
        }
    }

    @Test("content type prefix filters", arguments: StoreKind.allCases)
    func contentTypePrefix(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            try await store.put(minimalPNG(width: 1, height: 1), identifier: "img/1")
            try await store.put(Data("x".utf8), identifier: "img/2", contentType: "image/jpeg")
            try await store.put(Data("x".utf8), identifier: "text", contentType: "text/plain")
            try await store.put(Data("x".utf8), identifier: "bin")
            try await store.storeRecord(["k": "v"], identifier: "rec")
            #expect(try await store.list(ListQuery(contentTypePrefix: "image/")).items.map(\.identifier) == ["img/1", "img/2"])
            #expect(try await store.list(ListQuery(contentTypePrefix: "image/png")).items.map(\.identifier) == ["img/1"])
            #expect(try await store.list(ListQuery(contentTypePrefix: "application/")).items.map(\.identifier) == ["bin", "rec"])
            #expect(try await store.list(ListQuery(contentTypePrefix: "application/json")).items.map(\.identifier) == ["rec"])
            #expect(try await store.list(ListQuery(contentTypePrefix: "")).items.count == 5)
            #expect(try await store.list(ListQuery(contentTypePrefix: "video/")).items.isEmpty)
            #expect(try await store.list(ListQuery(prefix: "img/", contentTypePrefix: "text/")).items.isEmpty)
            #expect(try await store.list(ListQuery(prefix: "img/", contentTypePrefix: "image/j")).items.map(\.identifier) == ["img/2"])
        }
    }

    @Test("items carry the same metadata as head", arguments: StoreKind.allCases)
    func itemsAreMetadata(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            _ = try await store.put(Data("one".utf8), identifier: "one", options: PutOptions(contentType: "text/plain", userMetadata: ["k": "v"]))
            try await store.putImage(minimalPNG(width: 5, height: 6), identifier: "two")
            let items = try await store.list(ListQuery()).items
            #expect(items.count == 2)
            for item in items {
                #expect(try await store.head(item.identifier) == item)
            }
        }
    }

    @Test("identifier order is UTF-8 byte order", arguments: StoreKind.allCases)
    func identifierOrder(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            let ids = Self.trickyIdentifiers.filter(kind.serves)
            for id in ids.reversed() { try await store.put(Data(id.utf8), identifier: id) }
            let expected = byteOrdered(ids)
            #expect(firstDifference(ids.sorted(), expected) != nil, "the fixture must distinguish byte order from String order")
            #expect(firstDifference(try await store.list(ListQuery()).items.map(\.identifier), expected) == nil)
            #expect(firstDifference(try await store.list(ListQuery(sort: .identifier, limit: 10_000)).items.map(\.identifier), expected) == nil)
            // Page by page with the smallest page.
            #expect(firstDifference(try await store.listAll(ListQuery(limit: 1)).map(\.identifier), expected) == nil)
            #expect(firstDifference(try await store.listAll(ListQuery(limit: 4)).map(\.identifier), expected) == nil)
        }
    }

    /// An S3 store lists by identifier only and refuses `.modified` (docs/SCALE-OUT.md, "Listing"; tested below).
    static let modifiedSortKinds = StoreKind.allCases(except: .s3, because: "S3 lists keys in byte order only: docs/SCALE-OUT.md, Listing")

    @Test("a store that cannot sort by modification date refuses it, naming the reason", arguments: StoreKind.allCases.filter { !$0.sortsByModified })
    func modifiedOrderRefused(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            try await store.put(Data(), identifier: "a")
            let error = await #expect(throws: BlobStoreError.self) { try await store.list(ListQuery(sort: .modified)) }
            guard case .invalidQuery(let name, let reason) = error else {
                Issue.record("expected invalidQuery, got \(String(describing: error))")
                return
            }
            #expect(name == store.name)
            #expect(reason.contains("identifier only"))
        }
    }

    @Test("modified order is oldest first, ties by identifier", arguments: modifiedSortKinds)
    func modifiedOrder(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            for id in ["c", "a", "b", "d"] {
                try await store.put(Data(id.utf8), identifier: id)
                try await tick()
            }
            #expect(try await store.list(ListQuery(sort: .modified)).items.map(\.identifier) == ["c", "a", "b", "d"])
            try await store.put(Data("a2".utf8), identifier: "a")
            let items = try await store.list(ListQuery(sort: .modified)).items
            #expect(items.map(\.identifier) == ["c", "b", "d", "a"])
            #expect(zip(items, items.dropFirst()).allSatisfy { $0.modified <= $1.modified })
            #expect(try await store.listAll(ListQuery(sort: .modified, limit: 1)).map(\.identifier) == ["c", "b", "d", "a"])
            #expect(try await store.list(ListQuery(prefix: "b", sort: .modified)).items.map(\.identifier) == ["b"])
            // The identifier order is unaffected.
            #expect(try await store.list(ListQuery(sort: .identifier)).items.map(\.identifier) == ["a", "b", "c", "d"])
        }
    }

    @Test("modified order breaks ties by identifier bytes", arguments: modifiedSortKinds)
    func modifiedTies(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            // Many blobs written quickly: wherever two share a modification time, identifier bytes decide.
            for index in 0..<200 { try await store.put(Data(), identifier: "t\(199 - index)") }
            let items = try await store.listAll(ListQuery(sort: .modified, limit: 7))
            #expect(items.count == 200)
            #expect(Set(items.map(\.identifier)).count == 200)
            for (x, y) in zip(items, items.dropFirst()) {
                // Ties as reported; on a remote store these are milliseconds, finer than what it sorts by (StoreKind.reportsExactDates).
                let tieInOrder = !kind.reportsExactDates || Array(x.identifier.utf8).lexicographicallyPrecedes(Array(y.identifier.utf8))
                #expect(x.modified < y.modified || (x.modified == y.modified && tieInOrder), "\(x) then \(y)")
            }
        }
    }

    @Test("limit bounds a page and nextCursor appears only when more items match", arguments: StoreKind.allCases)
    func limitAndCursor(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            for id in ["a1", "a2", "a3", "a4", "b1", "b2"] { try await store.put(Data(), identifier: id) }
            for sort in ListQuery.Sort.allCases where sort == .identifier || kind.sortsByModified {
                let first = try await store.list(ListQuery(prefix: "a", sort: sort, limit: 2))
                #expect(first.items.count == 2)
                let cursor = try #require(first.nextCursor)
                let second = try await store.list(ListQuery(prefix: "a", sort: sort, limit: 2, cursor: cursor))
                #expect(second.items.count == 2)
                #expect(second.nextCursor == nil, "no more items match after a4 (b1, b2 do not match)")
                #expect(Set((first.items + second.items).map(\.identifier)) == ["a1", "a2", "a3", "a4"])
                #expect(try await store.list(ListQuery(prefix: "a", sort: sort, limit: 4)).nextCursor == nil)
                #expect(try await store.list(ListQuery(prefix: "a", sort: sort, limit: 5)).nextCursor == nil)
                let three = try await store.list(ListQuery(prefix: "a", sort: sort, limit: 3))
                #expect(three.items.count == 3)
                #expect(three.nextCursor != nil)
                #expect(try await store.list(ListQuery(sort: sort, limit: 6)).nextCursor == nil)
                #expect(try await store.list(ListQuery(sort: sort, limit: 5)).nextCursor != nil)
            }
            // On an empty result there is no cursor either.
            let none = try await store.list(ListQuery(prefix: "zzz", limit: 1))
            #expect(none.items.isEmpty)
            #expect(none.nextCursor == nil)
            // The cursor resumes after the last item of the page.
            let page = try await store.list(ListQuery(limit: 3))
            #expect(page.items.map(\.identifier) == ["a1", "a2", "a3"])
            #expect(try await store.list(ListQuery(limit: 3, cursor: page.nextCursor)).items.map(\.identifier) == ["a4", "b1", "b2"])
        }
    }

    @Test("limits outside 1...10000 are refused", arguments: StoreKind.allCases)
    func limitBounds(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            try await store.put(Data(), identifier: "x")
            for limit in [0, -1, 10_001, Int.max] {
                await #expect(throws: BlobStoreError.invalidQuery(store: store.name, reason: "limit must be 1...10000 (got \(limit))")) {
                    try await store.list(ListQuery(limit: limit))
                }
            }
            #expect(try await store.list(ListQuery(limit: 10_000)).items.count == 1)
            #expect(try await store.list(ListQuery(limit: 1)).items.count == 1)
        }
    }

    @Test("malformed cursors are refused", arguments: StoreKind.allCases)
    func malformedCursor(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            for id in ["a", "b", "c"] { try await store.put(Data(), identifier: id) }
            let identifierCursor = try #require(try await store.list(ListQuery(sort: .identifier, limit: 1)).nextCursor)
            var cases: [(String, ListQuery.Sort)] = [
                ("garbage", .identifier), ("i6", .identifier), ("i6g", .identifier), ("iAB", .identifier), ("", .identifier),
            ]
            // (A store that does not sort by date refuses every `.modified` query: modifiedOrderRefused.)
            var modifiedCursor: String?
            if kind.sortsByModified {
                let cursor: String = try #require(try await store.list(ListQuery(sort: .modified, limit: 1)).nextCursor)
                modifiedCursor = cursor
            }
            if let modifiedCursor {
                cases += [
                    ("garbage", .modified), ("m", .modified), ("m12", .modified), ("mx.61", .modified), ("m1.6", .modified),
                    (modifiedCursor, .identifier), (identifierCursor, .modified),
                ]
            }
            for (cursor, sort) in cases {
                let error = await #expect(throws: BlobStoreError.self, "cursor '\(cursor)' for \(sort)") {
                    try await store.list(ListQuery(sort: sort, cursor: cursor))
                }
                guard case .invalidQuery(let name, let reason) = error else {
                    Issue.record("expected invalidQuery for cursor '\(cursor)', got \(String(describing: error))")
                    continue
                }
                #expect(name == store.name)
                #expect(reason.contains("cursor"))
            }
            // Well-formed cursors work.
            #expect(try await store.list(ListQuery(sort: .identifier, cursor: identifierCursor)).items.map(\.identifier) == ["b", "c"])
            if let modifiedCursor {
                #expect(try await store.list(ListQuery(sort: .modified, cursor: modifiedCursor)).items.count == 2)
            }
        }
    }

    @Test("paging through 2,500 blobs reaches each once in byte order", arguments: StoreKind.allCases)
    func paging(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            var ids = Self.trickyIdentifiers.filter(kind.serves)
            var generator = UInt64(12_345)
            while ids.count < 2500 {
                generator = generator &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let n = Int(generator >> 40)
                let stems = ["", "a/", "A/", "é/", "e\u{301}/", "z", "Ω-", "😀"]
                ids.append("\(stems[n % stems.count])\(n % 100_000)-\(ids.count)")
            }
            for id in ids { try await store.put(Data(id.utf8), identifier: id) }
            let expected = byteOrdered(ids)
            var seen: [String] = []
            var cursor: String?
            var pages = 0
            repeat {
                let page = try await store.list(ListQuery(limit: 100, cursor: cursor))
                pages += 1
                #expect(page.items.count == 100 || page.nextCursor == nil)
                #expect(page.items.count <= 100)
                seen += page.items.map(\.identifier)
                cursor = page.nextCursor
            } while cursor != nil && pages < 100
            #expect(pages == 25)
            #expect(seen.count == 2500)
            #expect(firstDifference(seen, expected) == nil)
            #expect(Set(utf8Bytes(seen)).count == 2500)
        }
    }

    @Test("paging stays correct while blobs are added and removed between pages", arguments: StoreKind.allCases)
    func pagingWhileChanging(kind: StoreKind) async throws {
        try await withStore(kind) { (store: any BlobStoring) async throws in
            for id in ["b", "d", "f", "h", "j"] { try await store.put(Data(), identifier: id) }
            let first = try await store.list(ListQuery(limit: 3))
            #expect(first.items.map(\.identifier) == ["b", "d", "f"])
            // Before the cursor: not seen on later pages. After it: seen. Removed: gone.
            try await store.put(Data(), identifier: "a")
            try await store.put(Data(), identifier: "c")
            try await store.put(Data(), identifier: "g")
            try await store.put(Data(), identifier: "f0")
            try await store.remove("h")
            // Removing the item the cursor points after does not disturb the cursor.
            try await store.remove("f")
            let second = try await store.list(ListQuery(limit: 3, cursor: first.nextCursor))
            #expect(second.items.map(\.identifier) == ["f0", "g", "j"])
            #expect(second.nextCursor == nil)

            // The same with modification order: new writes come after the cursor.
            guard kind.sortsByModified else { return }
            try await store.removeAll()
            for id in ["x1", "x2", "x3"] {
                try await store.put(Data(), identifier: id)
                try await tick()
            }
            let page1 = try await store.list(ListQuery(sort: .modified, limit: 2))
            #expect(page1.items.map(\.identifier) == ["x1", "x2"])
            try await store.put(Data(), identifier: "a-new")
            let page2 = try await store.list(ListQuery(sort: .modified, limit: 2, cursor: page1.nextCursor))
            #expect(page2.items.map(\.identifier) == ["x3", "a-new"])
            #expect(page2.nextCursor == nil)
        }
    }
}
