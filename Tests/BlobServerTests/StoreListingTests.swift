import BlobStore
import BlobSystem
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `GET /v1/stores` lists every store folder without opening (locking) any, never fails as a whole
/// because another process holds a store, and says which process does.
@Suite(.enabled(if: BlobdBinary.url != nil, "blobd binary not found in .build/debug; run `swift build` first"))
struct StoreListingTests {
    /// Whether some open file description holds an `flock` on `path` (tried from a fresh one, released at once).
    static func isLocked(_ path: String) -> Bool {
        let fd = open(path, O_RDWR)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return true }
        flock(fd, LOCK_UN)
        return false
    }

    @Test func listingNeitherLocksNorFailsOnAStoreAnotherProcessHolds() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        #expect(try client.request("PUT", "/v1/stores/served/blobs/a", body: [1, 2, 3]).status == 201)
        // A store this daemon never served, free for anyone to open.
        let freeFolder = daemon.root + "/free"
        try FileManager.default.createDirectory(atPath: freeFolder, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: freeFolder + "/.lock", contents: nil))
        // A store another process (this test) has open, and so holds locked.
        let held = try PersistentDataStore(name: "held", root: URL(fileURLWithPath: daemon.root))

        let response = try client.request("GET", "/v1/stores")
        #expect(response.status == 200, "\(response.text)")
        let list = try #require(response.json?["stores"] as? [[String: Any]])
        #expect(list.map { $0["name"] as? String } == ["free", "held", "served"])
        let byName = Dictionary(uniqueKeysWithValues: list.map { ($0["name"] as? String ?? "", $0) })
        #expect(byName["served"]?["open"] as? Bool == true)
        #expect(byName["served"]?["count"] as? Int == 1)
        #expect(byName["served"]?["bytes"] as? Int == 3)
        #expect(byName["served"]?["heldBy"] == nil)
        #expect(byName["free"]?["open"] as? Bool == false)
        #expect(byName["free"]?["count"] == nil && byName["free"]?["bytes"] == nil)
        #expect(byName["free"]?["heldBy"] == nil)
        #expect(byName["held"]?["open"] as? Bool == false)
        #expect(byName["held"]?["heldBy"] as? String == "pid \(getpid())")
        #expect(byName["held"]?["count"] == nil)

        // Neither the listing nor the metrics page took the free store's lock.
        #expect(try client.request("GET", "/metrics").status == 200)
        #expect(!Self.isLocked(freeFolder + "/.lock"), "blobd locked a store it never served")
        // Using the held store through the daemon is refused while this process has it.
        #expect(try client.request("GET", "/v1/stores/held/blobs").status == 503)
        _ = held
    }

    /// An open store whose totals cannot be read is listed with `error` instead of failing the listing.
    @Test func anOpenStoreWhoseTotalsCannotBeReadIsListedWithAnError() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        #expect(try client.request("PUT", "/v1/stores/broken/blobs/a", body: [1]).status == 201)
        #expect(try client.request("PUT", "/v1/stores/fine/blobs/a", body: [1]).status == 201)
        // The totals are counted the first time they are asked for: take away what they are counted from.
        try FileManager.default.removeItem(atPath: daemon.root + "/broken/b")
        let response = try client.request("GET", "/v1/stores")
        #expect(response.status == 200, "\(response.text)")
        let list = try #require(response.json?["stores"] as? [[String: Any]])
        #expect(list.map { $0["name"] as? String } == ["broken", "fine"])
        #expect(list.first?["open"] as? Bool == true)
        #expect(list.first?["count"] == nil && list.first?["bytes"] == nil)
        #expect((list.first?["error"] as? String)?.isEmpty == false, "\(response.text)")
        #expect(list.last?["count"] as? Int == 1)
    }
}
