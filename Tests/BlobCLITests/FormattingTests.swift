@testable import BlobCLI
import BlobStore
import Foundation
import Testing

@Suite("Formatting and JSON")
struct FormattingTests {
    static let date = Date(timeIntervalSince1970: 1_700_000_000.25)
    static let metadata = BlobMetadata(
        identifier: "cats/tom.png", size: 1_258_291, contentType: "image/png", etag: ETag("0123456789abcdef")!,
        created: date, modified: date.addingTimeInterval(60), userMetadata: ["owner": "ann", "album": "2024"],
        image: ImageInfo(format: .png, width: 640, height: 480))

    @Test("sizes in binary units with one decimal")
    func sizes() {
        #expect(Formatting.size(0) == "0 B")
        #expect(Formatting.size(1023) == "1023 B")
        #expect(Formatting.size(1024) == "1.0 KiB")
        #expect(Formatting.size(1_258_291) == "1.2 MiB")
        #expect(Formatting.size(1024 * 1024 - 1) == "1.0 MiB")
        #expect(Formatting.size(5 * 1024 * 1024 * 1024) == "5.0 GiB")
        #expect(Formatting.size(Int64.max) == "8.0 EiB")
    }

    @Test("counts with thousands separators")
    func counts() {
        #expect(Formatting.count(0) == "0")
        #expect(Formatting.count(999) == "999")
        #expect(Formatting.count(1000) == "1,000")
        #expect(Formatting.count(1_234_567) == "1,234,567")
        #expect(Formatting.count(-1234) == "-1,234")
    }

    @Test("dates: local text, and RFC 3339 UTC with milliseconds (rounded down, as the daemon's) for JSON")
    func dates() {
        #expect(Formatting.date(Self.date, utcOffset: 0) == "2023-11-14 22:13:20")
        #expect(Formatting.date(Self.date, utcOffset: 3600) == "2023-11-14 23:13:20")
        #expect(Formatting.isoDate(Self.date) == "2023-11-14T22:13:20.250Z")
        #expect(Formatting.isoDate(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(Formatting.isoDate(Date(timeIntervalSince1970: 1.9999)) == "1970-01-01T00:00:01.999Z")
        #expect(Formatting.isoDate(Date(timeIntervalSince1970: -0.0005)) == "1969-12-31T23:59:59.999Z")
    }

    @Test("columns align, right-aligned where asked, last column unpadded")
    func columns() {
        let text = Formatting.columns([["NAME", "COUNT"], ["a", "1"], ["longer", "1,000"]], alignments: [.left, .right])
        #expect(text == "NAME    COUNT\na           1\nlonger  1,000")
        #expect(Formatting.columns([["×", "x"], ["ab", "y"]]) == "×   x\nab  y")
    }

    @Test("the metadata block shows size, type, ETag, dates, image 640×480 and user metadata")
    func metadataBlock() {
        let text = Formatting.metadataBlock(Self.metadata, store: "photos", utcOffset: 0)
        #expect(text == """
            Blob:          photos/cats/tom.png
            Size:          1.2 MiB (1,258,291 bytes)
            Content type:  image/png
            ETag:          0123456789abcdef
            Created:       2023-11-14 22:13:20
            Modified:      2023-11-14 22:14:20
            Image:         PNG 640×480
            Metadata:      album=2024
                           owner=ann
            """)
    }

    @Test("metadata JSON is the HTTP metadata object (plus store): same keys, ms dates, image only for images")
    func metadataJSON() throws {
        let text = JSONOutput.metadata(Self.metadata, store: "photos").serialized()
        #expect(text.hasPrefix(#"{"store":"photos","identifier":"cats/tom.png","size":1258291,"contentType":"image/png","etag":"0123456789abcdef","created":"#))
        let object = try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["modified"] as? String == "2023-11-14T22:14:20.250Z")
        #expect((object["metadata"] as? [String: String]) == ["owner": "ann", "album": "2024"])
        #expect(object["userMetadata"] == nil)
        let image = try #require(object["image"] as? [String: Any])
        #expect(image["format"] as? String == "png" && image["width"] as? Int == 640 && image["height"] as? Int == 480)
        #expect(Set(object.keys) == ["store", "identifier", "size", "contentType", "etag", "created", "modified", "metadata", "image"])
        var plain = Self.metadata
        plain.image = nil
        let noImage = try #require(JSONSerialization.jsonObject(with: Data(JSONOutput.metadata(plain, store: "p").serialized().utf8)) as? [String: Any])
        #expect(noImage.keys.contains("image") == false)
    }

    @Test("JSON strings are escaped; pretty and compact forms parse to the same value")
    func jsonEscaping() throws {
        let value = JSONValue.object([
            ("text", .string("quote \" backslash \\ newline \n tab \t nul \u{0} del \u{7F} ✓")),
            ("list", .array([.int(-1), .bool(true), .null, .array([]), .object([])])),
        ])
        for pretty in [false, true] {
            let object = try #require(JSONSerialization.jsonObject(with: Data(value.serialized(pretty: pretty).utf8)) as? [String: Any])
            #expect(object["text"] as? String == "quote \" backslash \\ newline \n tab \t nul \u{0} del \u{7F} ✓")
            #expect((object["list"] as? [Any])?.count == 5)
        }
        #expect(!value.serialized().contains("\n"))
    }

    @Test("progress bar text: percent, rate and ETA with a known total; bytes, rate and time without; fitted to the width")
    func progressText() {
        let known = ProgressBar.render(label: "put s/x", done: 5 * 1024 * 1024, total: 10 * 1024 * 1024, elapsed: 2, width: 100)
        #expect(known == "put s/x  [####################--------------------]  50%  5.0 MiB / 10.0 MiB  2.5 MiB/s  ETA 0:02")
        let unknown = ProgressBar.render(label: "put s/x", done: 3 * 1024, total: nil, elapsed: 3, width: 80)
        #expect(unknown == "put s/x  3.0 KiB  1.0 KiB/s  0:03")
        let narrow = ProgressBar.render(label: String(repeating: "x", count: 200), done: 1, total: 2, elapsed: 1, width: 60)
        #expect(narrow.count <= 59 && narrow.hasSuffix("ETA 0:01"))
        #expect(ProgressBar.render(label: "x", done: 0, total: 2, elapsed: 0, width: 80).hasSuffix("ETA --:--"))
        #expect(ProgressBar.duration(3725) == "1:02:05" && ProgressBar.duration(59.2) == "1:00")
    }

    @Test("a disabled progress bar never draws; an enabled one draws after the delay and erases itself")
    func progressDrawing() async throws {
        let drawn = Box<[String]>([])
        let quiet = ProgressBar(label: "x", total: 10, enabled: false, width: 80) { text in drawn.with { $0.append(text) } }
        quiet.add(5)
        quiet.finish()
        #expect(drawn.current.isEmpty)

        let quick = ProgressBar(label: "x", total: 10, enabled: true, width: 80) { text in drawn.with { $0.append(text) } }
        quick.add(10)
        quick.finish()
        #expect(drawn.current.isEmpty)

        let slow = ProgressBar(label: "x", total: 10, enabled: true, width: 80) { text in drawn.with { $0.append(text) } }
        slow.add(4)
        try await Task.sleep(for: .milliseconds(1300))
        slow.finish()
        let lines = drawn.current
        #expect(lines.count >= 1)
        #expect(lines.first?.contains("40%") == true)
        #expect(lines.last == "\r\u{1B}[K")
    }

    @Test("ls table and watch lines")
    func listingAndEvents() {
        let table = LsCommand.table([Self.metadata], header: true, utcOffset: 0)
        #expect(table == """
                  SIZE  MODIFIED             TYPE                      IDENTIFIER
               1.2 MiB  2023-11-14 22:14:20  image/png                 cats/tom.png
            """)
        let put = BlobChange(sequence: 3, store: "photos", kind: .put(Self.metadata), date: Self.date)
        let removed = BlobChange(sequence: 14, store: "photos", kind: .removed(identifier: "a"), date: Self.date)
        let all = BlobChange(sequence: 1_795_392_508_076_000, store: "photos", kind: .removedAll, date: Self.date)
        let lines = [put, removed, all].map { WatchCommand.line($0, utcOffset: 0) }
        #expect(lines == [
            "2023-11-14 22:13:20  #3        put             1.2 MiB  image/png                 0123456789abcdef  photos/cats/tom.png  640×480",
            "2023-11-14 22:13:20  #14       removed                                                              photos/a",
            "2023-11-14 22:13:20  #1795392508076000  removed-all                                                          photos",
        ])
        // The address column starts at the same place on every line of a run whose sequence numbers have up to 7 digits.
        #expect(lines[0].range(of: "photos/")?.lowerBound.utf16Offset(in: lines[0]) == lines[1].range(of: "photos/")?.lowerBound.utf16Offset(in: lines[1]))
        let json = JSONOutput.change(put).serialized()
        #expect(json.hasPrefix(#"{"sequence":3,"store":"photos","date":"2023-11-14T22:13:20.250Z","kind":"put","identifier":"cats/tom.png","blob":{"store":"photos","identifier":"cats/tom.png""#))
    }

    @Test("exit codes for the store's errors")
    func exitCodes() {
        let e = ETag("0123456789abcdef")!
        #expect(ExitCode.for(BlobStoreError.notFound(store: "s", identifier: "x")) == .notFound)
        #expect(ExitCode.for(BlobStoreError.preconditionFailed(store: "s", identifier: "x", expected: e, actual: nil)) == .preconditionFailed)
        #expect(ExitCode.for(BlobStoreError.notAnImage(store: "s", identifier: "x", reason: "r")) == .invalidContent)
        #expect(ExitCode.for(BlobStoreError.invalidRecord(store: "s", identifier: "x", reason: "r")) == .invalidContent)
        #expect(ExitCode.for(BlobStoreError.invalidMetadata(store: "s", identifier: "x", reason: "r")) == .invalidContent)
        #expect(ExitCode.for(BlobStoreError.io(operation: "read", path: "/p", errno: .noSpace)) == .ioError)
        #expect(ExitCode.for(CLIError.storeNotFound(store: "s", location: "root /r")) == .notFound)
        #expect(ExitCode.for(CLIError.daemonUnreachable(socket: "/s", reason: "r")) == .unavailable)
        #expect(ExitCode.for(UsageError("x", command: nil)) == .usage)
        #expect(ExitCode.for(CLIError.problemsFound(count: 1)) == .failure)
        struct Other: Error {}
        #expect(ExitCode.for(Other()) == .failure)
    }
}
