// Record blobs: Codable values stored as JSON, listed like a Core Data fetch request.
//
//   swift run records-example
import BlobStore
import Foundation

struct ColorItem: Codable, Equatable {
    var name: String
    var red: Double, green: Double, blue: Double
}

@main
struct RecordsExample {
    static func main() async throws {
        let root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("blobstore-records-example-\(getpid())")
        defer { try? FileManager.default.removeItem(at: root) }
        let store = try PersistentDataStore(name: "colors", root: root)

        let items = [
            ColorItem(name: "teal", red: 0, green: 0.5, blue: 0.5),
            ColorItem(name: "tomato", red: 1, green: 0.39, blue: 0.28),
            ColorItem(name: "tan", red: 0.82, green: 0.71, blue: 0.55),
            ColorItem(name: "navy", red: 0, green: 0, blue: 0.5),
        ]
        for item in items {
            let metadata = try await store.storeRecord(item, identifier: "colors/\(item.name)")
            print("stored \(metadata.identifier) (\(metadata.contentType), \(metadata.size) bytes, ETag \(metadata.etag))")
        }
        try await store.put(Data("plain bytes".utf8), identifier: "notes/readme", contentType: "text/plain")

        // A fetch request: records whose identifier starts with "colors/t", sorted, two per page.
        var query = ListQuery(prefix: "colors/t", contentTypePrefix: "application/json", limit: 2)
        var page = 1
        while true {
            let result = try await store.list(query)
            print("page \(page): \(result.items.map(\.identifier))")
            guard let next = result.nextCursor else { break }
            query.cursor = next
            page += 1
        }

        let tomato = try await store.loadRecord(ColorItem.self, identifier: "colors/tomato")
        print("loaded \(tomato)")

        // A record that does not decode names the blob and the problem.
        struct Wrong: Decodable { var hue: Double }
        do {
            _ = try await store.loadRecord(Wrong.self, identifier: "colors/teal")
        } catch {
            print("expected failure: \(error)")
        }
        do {
            try await store.put(Data("{not json".utf8), identifier: "colors/bad", options: PutOptions(validation: .record))
        } catch {
            print("expected failure: \(error)")
        }
        print("statistics: \(try await store.statistics())")
    }
}
