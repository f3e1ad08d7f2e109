import BlobProtocol
import BlobStore
import Testing

@Suite struct ReportJSONTests {
    @Test func healthIsTheDocumentedBody() {
        #expect(String(decoding: ReportJSON.healthy, as: UTF8.self) == #"{"status":"ok"}"#)
        #expect(ProtocolDocument.section("### GET /v1/health").contains { $0 == "`{\"status\":\"ok\"}`." })
        #expect(ReportJSON.isHealthy(ReportJSON.healthy))
        #expect(!ReportJSON.isHealthy(Array(#"{"status":"starting"}"#.utf8)) && !ReportJSON.isHealthy([]))
    }

    /// The verify report: sorted keys, `/` unescaped (the paths read as paths), decoded back whole.
    @Test func verifyReportsRoundTrip() throws {
        let sent = #"{"corrupt":[{"identifier":"cats/tom.png","path":"/r/s/b/3/x","reason":"content checksum does not match ETag"}],"healthy":1203,"orphaned":[{"path":"/r/s/.tmp","reason":"not a blob file name"}]}"#
        let report = try ReportJSON.decodeReport(Array(sent.utf8))
        #expect(report.healthy == 1203 && report.corrupt.first?.identifier == "cats/tom.png" && report.orphaned.first?.identifier == nil)
        let text = String(decoding: try ReportJSON.encode(report), as: UTF8.self)
        #expect(text == sent)
        #expect(try ReportJSON.decodeReport(Array(text.utf8)) == report)
    }
}
