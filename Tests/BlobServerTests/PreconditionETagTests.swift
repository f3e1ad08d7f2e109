import Foundation
import Testing

@Suite(.enabled(if: BlobdBinary.url != nil, "blobd binary not found in .build/debug; run `swift build` first"))
struct PreconditionETagTests {
    @Test func a412CarriesTheCurrentETagSoTheClientCanRetry() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let first = try client.request("PUT", "/v1/stores/cas/blobs/n", body: Array("1".utf8))
        let current = try #require(first.header("ETag"))
        let stale = try client.request("PUT", "/v1/stores/cas/blobs/n", headers: ["If-Match": "\"0000000000000000\""], body: Array("2".utf8))
        #expect(stale.status == 412)
        #expect(stale.errorCode == "precondition_failed")
        #expect(stale.header("ETag") == current)
        let createOnly = try client.request("PUT", "/v1/stores/cas/blobs/n", headers: ["If-None-Match": "*"], body: Array("3".utf8))
        #expect(createOnly.status == 412 && createOnly.header("ETag") == current)
        let absent = try client.request("DELETE", "/v1/stores/cas/blobs/missing", headers: ["If-Match": current])
        #expect(absent.status == 412 && absent.header("ETag") == nil)
        // Retrying with the ETag from the 412 succeeds.
        #expect(try client.request("PUT", "/v1/stores/cas/blobs/n", headers: ["If-Match": current], body: Array("2".utf8)).status == 200)
    }
}
