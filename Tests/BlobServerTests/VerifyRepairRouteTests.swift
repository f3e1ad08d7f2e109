import Foundation
import Testing

/// `POST /v1/stores/{store}/verify` repairs: what `GET` reports as corrupt or orphaned is moved into
/// the store's `quarantine/` folder and listed in `quarantined`; `GET` is clean afterwards.
@Suite(.enabled(if: Hostile.suiteEnabled, "blobd binary not found in .build/debug; run `swift build` first"))
struct VerifyRepairRouteTests {
    @Test func postVerifyQuarantinesWhatGetReports() throws {
        let daemon = try DaemonProcess()
        defer { daemon.terminate() }
        let client = try daemon.connect()
        #expect(try client.request("PUT", "/v1/stores/s/blobs/kept", body: Array("kept".utf8)).status == 201)
        #expect(try client.request("PUT", "/v1/stores/s/blobs/bad", body: [UInt8](repeating: 9, count: 3000)).status == 201)
        let store = daemon.root + "/s"
        let damaged = try #require(FileManager.default.enumerator(atPath: store + "/b")?.compactMap { $0 as? String }
            .map { store + "/b/" + $0 }
            .first { path in
                let attributes = try? FileManager.default.attributesOfItem(atPath: path)
                return attributes?[.type] as? FileAttributeType == .typeRegular && (attributes?[.size] as? Int ?? 0) > 3000
            })
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: damaged))
        try handle.seek(toOffset: try handle.seekToEnd() - 1)
        try handle.write(contentsOf: Data([0]))
        try handle.close()
        #expect(FileManager.default.createFile(atPath: store + "/stray.txt", contents: Data("stray".utf8)))

        let before = try client.request("GET", "/v1/stores/s/verify")
        #expect(before.status == 200)
        #expect((before.json?["corrupt"] as? [Any])?.count == 1 && (before.json?["orphaned"] as? [Any])?.count == 1, "\(before.text)")
        #expect(before.json?["quarantined"] == nil)

        let repair = try client.request("POST", "/v1/stores/s/verify", body: [])
        #expect(repair.status == 200, "\(repair.text)")
        #expect(repair.json?["healthy"] as? Int == 1)
        let moved = try #require(repair.json?["quarantined"] as? [[String: String]], "\(repair.text)")
        #expect(Set(moved.compactMap { $0["from"] }) == [damaged, store + "/stray.txt"])
        for entry in moved {
            let to = try #require(entry["to"])
            #expect(to.hasPrefix(store + "/quarantine/") && FileManager.default.fileExists(atPath: to))
        }
        let stray = try #require(moved.first { $0["from"] == store + "/stray.txt" }?["to"])
        #expect(FileManager.default.contents(atPath: stray) == Data("stray".utf8))

        let after = try client.request("GET", "/v1/stores/s/verify")
        #expect((after.json?["corrupt"] as? [Any])?.isEmpty == true && (after.json?["orphaned"] as? [Any])?.isEmpty == true, "\(after.text)")
        #expect(try client.request("GET", "/v1/stores/s/blobs/kept").text == "kept")
        #expect(try client.request("GET", "/v1/stores/s/blobs/bad").status == 404)

        let wrong = try client.request("DELETE", "/v1/stores/s/verify")
        #expect(wrong.status == 405 && wrong.header("Allow") == "GET, HEAD, POST")
        #expect(try client.request("POST", "/v1/stores/nope/verify", body: []).status == 404)
    }
}
