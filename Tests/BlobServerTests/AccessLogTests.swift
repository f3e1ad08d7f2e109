@testable import BlobServer
import BlobSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// The access log (`--access-log`, `--log-format`): one parseable line per request, written by the daemon.
@Suite(.enabled(if: BlobdBinary.url != nil, "blobd binary not found in .build/debug; run `swift build` first"))
struct AccessLogTests {
    /// `2026-11-24T10:00:00.123Z`: RFC 3339, UTC, milliseconds.
    static func isTime(_ text: String) -> Bool {
        text.wholeMatch(of: #/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/#) != nil
    }

    /// The lines of `path` once the daemon has stopped (each is written whole, with one `write`).
    private func lines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    private func json(_ line: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }

    @Test func jsonLinesToAFileHaveEveryFieldAndTheOtherLogLinesAreJSONToo() throws {
        let folder = TempFolder()
        let accessPath = folder.path + "/access.log"
        let daemon = try DaemonProcess(folder: folder, extraArguments: ["--log-format", "json", "--access-log", accessPath, "--event-loops", "1"])
        let client = try daemon.connect()
        #expect(try client.request("PUT", "/v1/stores/s/blobs/a%22b?x=1", body: Array("hello".utf8)).status == 201)
        let get = try client.request("GET", "/v1/stores/s/blobs/a%22b")
        #expect(get.status == 200)
        let etag = try #require(get.header("ETag"))
        #expect(try client.request("GET", "/v1/stores/s/blobs/a%22b", headers: ["If-None-Match": etag]).status == 304)
        #expect(try client.request("GET", "/v1/stores/s/blobs/missing").status == 404)
        #expect(try client.request("HEAD", "/v1/stores/s/blobs/a%22b").status == 200)
        try client.send("NOT HTTP AT ALL\r\n\r\n")
        #expect(try client.readResponse().status == 400)
        let stream = try daemon.connect()
        try stream.send("GET /v1/events HTTP/1.1\r\n\r\n")
        #expect(try stream.readUntil("\r\n\r\n").contains("text/event-stream"))
        daemon.terminate()

        var status = stat()
        #expect(stat(accessPath, &status) == 0 && status.st_mode & 0o777 == 0o640, "created with mode 0640")
        let records = lines(accessPath).map(json)
        #expect(records.count == 7, "\(lines(accessPath))")
        guard records.count == 7 else { return }
        let decoded = records.compactMap { $0 }
        #expect(decoded.count == 7, "every access line is one JSON object")
        for record in decoded {
            let time = record["time"] as? String ?? ""
            #expect(Self.isTime(time), "\(time)")
            #expect(record["level"] as? String == "info")
            #expect(record["msg"] as? String == "request")
            #expect(record["duration_ms"] is NSNumber)
            #expect((record["uid"] as? NSNumber)?.uint32Value == getuid())
            #expect((record["pid"] as? NSNumber)?.int32Value == getpid(), "the peer is this test process")
        }
        #expect(decoded.map { $0["method"] as? String } == ["PUT", "GET", "GET", "GET", "HEAD", nil, "GET"])
        #expect(decoded[5]["method"] is NSNull && decoded[5]["path"] is NSNull, "a head that did not parse has no method or path")
        #expect(decoded[6]["path"] as? String == "/v1/events" && (decoded[6]["bytes"] as? NSNumber)?.intValue == 0, "a stream is logged when its head is sent")
        #expect(decoded.dropLast().map { $0["path"] as? String } == ["/v1/stores/s/blobs/a%22b?x=1", "/v1/stores/s/blobs/a%22b", "/v1/stores/s/blobs/a%22b", "/v1/stores/s/blobs/missing", "/v1/stores/s/blobs/a%22b", nil])
        #expect(decoded.map { ($0["status"] as? NSNumber)?.intValue } == [201, 200, 304, 404, 200, 400, 200])
        #expect((decoded[1]["bytes"] as? NSNumber)?.intValue == 5, "the GET's body")
        #expect((decoded[2]["bytes"] as? NSNumber)?.intValue == 0, "a 304 sends no body")
        #expect((decoded[4]["bytes"] as? NSNumber)?.intValue == 0, "a HEAD sends no body")

        // The daemon's other lines (stderr) are JSON objects too.
        let stderrLines = daemon.log.split(separator: "\n").map(String.init)
        #expect(stderrLines.contains { ($0 as String).contains("listening on") })
        for line in stderrLines {
            let object = json(line)
            #expect(object != nil, "not JSON: \(line)")
            #expect(Self.isTime(object?["time"] as? String ?? ""), "\(line)")
            #expect(["error", "info", "debug"].contains(object?["level"] as? String ?? ""), "\(line)")
            #expect(object?["msg"] is String, "\(line)")
        }
    }

    @Test func debugLevelPutsTextLinesOnStderrUnlessTheAccessLogIsOff() throws {
        let daemon = try DaemonProcess()  // the harness runs blobd with --log-level debug
        let client = try daemon.connect()
        #expect(try client.request("PUT", "/v1/stores/s/blobs/x", body: Array("abc".utf8)).status == 201)
        #expect(try client.request("GET", "/v1/stores/s/blobs/x").status == 200)
        daemon.terminate()
        let requestLines = daemon.log.split(separator: "\n").filter { !$0.hasPrefix("blobd: ") }
        #expect(requestLines.count == 2, "\(daemon.log)")
        guard requestLines.count == 2 else { return }
        // TIME METHOD TARGET STATUS BYTES MILLISECONDS uid=U pid=P
        let fields = requestLines[1].split(separator: " ").map(String.init)
        #expect(fields.count == 8, "\(fields)")
        guard fields.count == 8 else { return }
        #expect(Self.isTime(fields[0]))
        #expect(Array(fields[1...4]) == ["GET", "/v1/stores/s/blobs/x", "200", "3"])
        #expect(fields[5].wholeMatch(of: #/\d+\.\d{3}/#) != nil, "\(fields[5])")
        #expect(fields[6] == "uid=\(getuid())" && fields[7] == "pid=\(getpid())")
        #expect(requestLines[0].split(separator: " ")[1...3] == ["PUT", "/v1/stores/s/blobs/x", "201"])

        let quiet = try DaemonProcess(extraArguments: ["--access-log", "off"])
        #expect(try quiet.connect().request("GET", "/v1/health").status == 200)
        quiet.terminate()
        #expect(quiet.log.split(separator: "\n").allSatisfy { $0.hasPrefix("blobd: ") }, "\(quiet.log)")
    }

    @Test func sighupReopensTheAccessLogFileAfterItWasRenamed() throws {
        let folder = TempFolder()
        let path = folder.path + "/access.log"
        let daemon = try DaemonProcess(folder: folder, extraArguments: ["--access-log", path])
        let client = try daemon.connect()
        #expect(try client.request("GET", "/v1/health?before").status == 200)
        // The loop writes its lines after answering (batched per wake-up): wait for this one.
        let written = Date().addingTimeInterval(10)
        while lines(path).isEmpty && Date() < written { usleep(10_000) }
        #expect(rename(path, path + ".1") == 0)
        kill(daemon.process.processIdentifier, SIGHUP)
        let deadline = Date().addingTimeInterval(10)
        while !daemon.log.contains("reopened") && Date() < deadline { usleep(20_000) }
        #expect(daemon.log.contains("signal 1: access log \(path) reopened"), "\(daemon.log)")
        #expect(try client.request("GET", "/v1/health?after").status == 200, "the daemon survives SIGHUP")
        daemon.terminate()
        #expect(daemon.waitForExit() == 0)
        let old = lines(path + ".1"), new = lines(path)
        #expect(old.count == 1 && old.first?.contains("/v1/health?before") == true, "\(old)")
        #expect(new.count == 1 && new.first?.contains("/v1/health?after") == true, "\(new)")
    }

    @Test func anAccessLogThatCannotBeOpenedStopsTheStartNamingThePath() throws {
        let folder = TempFolder()
        let path = folder.path + "/no/such/folder/access.log"
        let daemon = try DaemonProcess(folder: folder, extraArguments: ["--access-log", path], waitForSocket: false)
        #expect(daemon.waitForExit() == 1)
        #expect(daemon.log.contains("cannot open access log \(path)"), "\(daemon.log)")
    }
}
