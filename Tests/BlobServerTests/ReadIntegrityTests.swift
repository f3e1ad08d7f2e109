import BlobSystem
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// blobd over damaged or unreachable blob files: a body served from memory is refused with
/// `500 corrupt` before anything is sent; a body sent from the file (`sendfile`) ends short of its
/// `Content-Length` and the connection closes; a file that cannot be reached is `500 io_error`
/// naming the errno and the path for GET, HEAD and DELETE, never `404`.
@Suite(.serialized) struct DaemonReadIntegrityTests {
    typealias Damage = BlobFileDamage

    /// `size` bytes of a pattern that repeats every 256 bytes (built a period at a time: the tests
    /// run unoptimized).
    static func content(_ size: Int) -> [UInt8] {
        let period = (0..<256).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        while bytes.count < size { bytes += period.prefix(size - bytes.count) }
        return bytes
    }

    /// The file of blob `id` in store `store` under `root` (its name is the identifier here).
    static func blobFile(root: String, store: String, id: String) throws -> String {
        let buckets = root + "/" + store + "/b"
        for bucket in try FileManager.default.contentsOfDirectory(atPath: buckets) where FileManager.default.fileExists(atPath: buckets + "/" + bucket + "/" + id) {
            return buckets + "/" + bucket + "/" + id
        }
        throw HarnessError("no file for \(id) under \(buckets)")
    }

    @Test(arguments: Damage.allCases) func damagedBlobIsNeverServedComplete(damage: Damage) throws {
        if let reason = BlobdBinary.skipReason {
            print("skipped: \(reason)")
            return
        }
        let daemon = try DaemonProcess()
        // In memory (up to 64 KiB) and from the file, whole and in part; the largest is checked in
        // several windows while the parts that passed are sent.
        for size in [4096, 60_000, 200_000, 3_000_000, 20_000_000] {
            let id = "blob\(size)"
            let setup = try daemon.connect()
            #expect(try setup.request("PUT", "/v1/stores/s/blobs/\(id)", body: DaemonReadIntegrityTests.content(size)).status == 201)
            try damage.apply(to: DaemonReadIntegrityTests.blobFile(root: daemon.root, store: "s", id: id), contentSize: size)
            for range in [nil, "bytes=0-0", "bytes=\(size - 1)-"] as [String?] {
                let what: Comment = "\(damage), \(size) bytes, range \(range ?? "none")"
                let client = try daemon.connect()
                // A part of at most 64 KiB and a whole blob of at most 64 KiB are read into memory
                // first; a blob of at most 1 MiB is checked whole before the answer.
                if range != nil || size <= 1 << 20 {
                    let response = try client.request("GET", "/v1/stores/s/blobs/\(id)", headers: range.map { ["Range": $0] } ?? [:])
                    #expect(response.status == 500, what)
                    #expect(response.errorCode == "corrupt", "\(response.text.prefix(300)); \(what)")
                    #expect(response.text.contains("blob '\(id)' in store 's'"), "\(response.text.prefix(300)); \(what)")
                } else {
                    try client.send("GET /v1/stores/s/blobs/\(id) HTTP/1.1\r\nHost: blobd\r\n\r\n")
                    let responseHead = try client.readUntil("\r\n\r\n")
                    #expect(responseHead.hasPrefix("HTTP/1.1 200"), "\(responseHead); \(what)")
                    let length = DaemonReadIntegrityTests.contentLength(responseHead)
                    #expect(length == size, what)
                    #expect(client.isClosedByPeer(), what)
                    #expect(client.pending.count < length, "received \(client.pending.count) of \(length); \(what)")
                }
            }
        }
        #expect(daemon.log.contains("corrupt"))
        // Healthy blobs are still served in full after that.
        let client = try daemon.connect()
        #expect(try client.request("PUT", "/v1/stores/s/blobs/fine", body: DaemonReadIntegrityTests.content(3_000_000)).status == 201)
        #expect(try client.request("GET", "/v1/stores/s/blobs/fine").body == DaemonReadIntegrityTests.content(3_000_000))
        let large = DaemonReadIntegrityTests.content(20_000_000)
        #expect(try client.request("PUT", "/v1/stores/s/blobs/large", body: large).status == 201)
        #expect(try client.request("GET", "/v1/stores/s/blobs/large").body == large)
        #expect(try client.request("GET", "/v1/stores/s/blobs/large", headers: ["Range": "bytes=9000000-"]).body == Array(large[9_000_000...]))
    }

    static func contentLength(_ head: String) -> Int {
        for line in head.components(separatedBy: "\r\n") where line.lowercased().hasPrefix("content-length:") {
            return Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? -1
        }
        return -1
    }

    /// A blob of at most 1 MiB is checked whole before the answer: on the loop as far as its pages
    /// are in the page cache, the rest on a work thread from where the loop stopped. With the second
    /// half of the file dropped from the page cache, a healthy blob is still served whole and a
    /// damaged one (the damage in the dropped half) still refused.
    @Test(arguments: [false, true]) func checkedFirstBlobPartlyOutOfThePageCache(damaged: Bool) throws {
        if let reason = BlobdBinary.skipReason {
            print("skipped: \(reason)")
            return
        }
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let content = DaemonReadIntegrityTests.content(1 << 20)
        #expect(try client.request("PUT", "/v1/stores/s/blobs/half", body: content).status == 201)
        let path = try DaemonReadIntegrityTests.blobFile(root: daemon.root, store: "s", id: "half")
        let fd = open(path, O_RDWR)
        try #require(fd >= 0)
        defer { Glibc.close(fd) }
        let fileSize = lseek(fd, 0, SEEK_END)
        if damaged {
            var byte: UInt8 = 0
            #expect(pread(fd, &byte, 1, fileSize - 1000) == 1)
            byte ^= 0x40
            #expect(pwrite(fd, &byte, 1, fileSize - 1000) == 1)
        }
        #expect(fsync(fd) == 0)  // written back, so that the pages can be dropped
        // Twice: the first GET may have put them back (a cached read), the second must not differ.
        for round in 0..<2 {
            #expect(posix_fadvise(fd, fileSize / 2, 0, POSIX_FADV_DONTNEED) == 0)
            let response = try client.request("GET", "/v1/stores/s/blobs/half")
            if damaged {
                #expect(response.status == 500 && response.errorCode == "corrupt", "round \(round): \(response.status) \(response.text.prefix(200))")
            } else {
                #expect(response.status == 200, "round \(round)")
                #expect(response.body == content, "round \(round): the body differs")
            }
        }
    }

    @Test func unreachableBlobIsAnIOErrorNotNotFound() throws {
        if let reason = BlobdBinary.skipReason {
            print("skipped: \(reason)")
            return
        }
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        #expect(try client.request("PUT", "/v1/stores/s/blobs/kept", body: Array("kept".utf8)).status == 201)
        let file = try DaemonReadIntegrityTests.blobFile(root: daemon.root, store: "s", id: "kept")
        let folder = URL(fileURLWithPath: file).deletingLastPathComponent().path
        #expect(rename(folder, folder + ".moved") == 0)
        #expect(symlink(URL(fileURLWithPath: folder).lastPathComponent, folder) == 0)
        for method in ["GET", "HEAD", "DELETE"] {
            let response = try client.request(method, "/v1/stores/s/blobs/kept")
            #expect(response.status == 500, "\(method)")
            if method != "HEAD" {
                #expect(response.errorCode == "io_error", "\(method): \(response.text)")
                #expect(response.text.contains("ELOOP") && response.text.contains(folder + "/kept"), "\(method): \(response.text)")
            }
        }
        // A store folder that cannot be reached is not a missing store either.
        #expect(symlink("loop", daemon.root + "/loop") == 0)
        for method in ["GET", "DELETE"] {
            let response = try client.request(method, "/v1/stores/loop/blobs/kept")
            #expect(response.status == 500 && response.errorCode == "io_error", "\(method): \(response.text)")
            #expect(response.text.contains("ELOOP") && response.text.contains(daemon.root + "/loop"), "\(method): \(response.text)")
        }
        #expect(unlink(folder) == 0)
        #expect(rename(folder + ".moved", folder) == 0)
        #expect(try client.request("GET", "/v1/stores/s/blobs/kept").text == "kept")
    }

    @Test func misplacedFileIsRefusedThenRemovedOrReplaced() throws {
        if let reason = BlobdBinary.skipReason {
            print("skipped: \(reason)")
            return
        }
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        #expect(try client.request("PUT", "/v1/stores/s/blobs/other", body: Array("other".utf8)).status == 201)
        let source = try DaemonReadIntegrityTests.blobFile(root: daemon.root, store: "s", id: "other")
        let target = URL(fileURLWithPath: source).deletingLastPathComponent().path + "/target"
        for ending in ["DELETE", "PUT"] {
            try FileManager.default.copyItem(atPath: source, toPath: target)
            let get = try client.request("GET", "/v1/stores/s/blobs/target")
            #expect(get.status == 500 && get.errorCode == "corrupt", "\(get.text)")
            #expect(get.text.contains(target) && get.text.contains("'other'"), "\(get.text)")
            #expect(try client.request("HEAD", "/v1/stores/s/blobs/target").status == 500)
            if ending == "DELETE" {
                #expect(try client.request("DELETE", "/v1/stores/s/blobs/target").status == 204)
                #expect(try client.request("GET", "/v1/stores/s/blobs/target").status == 404)
            } else {
                let put = try client.request("PUT", "/v1/stores/s/blobs/target", headers: ["If-None-Match": "*"], body: Array("mine".utf8))
                #expect(put.status == 201, "\(put.text)")
                #expect(try client.request("GET", "/v1/stores/s/blobs/target").text == "mine")
            }
            #expect(try client.request("GET", "/v1/stores/s/blobs/other").text == "other")
        }
    }
}
