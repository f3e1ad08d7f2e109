import Foundation
import HTTP1
import S3BlobStore
import Testing

/// The transport against a real radosgw, when `.ci/ceph up` has brought one up and its env file
/// was sourced (`AWS_ENDPOINT_URL`, `BLOB_S3_BUCKET`). Requests are unsigned: the gateway's
/// `403 AccessDenied` answers are enough to run the transport end to end.
@Suite struct TransportGatewayTests {
    static let gateway: (endpoint: TransportEndpoint, bucket: String)? = {
        let environment = ProcessInfo.processInfo.environment
        guard let url = environment["AWS_ENDPOINT_URL"], let endpoint = TransportEndpoint(url: url) else { return nil }
        return (endpoint, environment["BLOB_S3_BUCKET"] ?? "blobstore-ci")
    }()

    static func skipReason() -> String? {
        gateway == nil ? "TransportGatewayTests: skipped, no http:// AWS_ENDPOINT_URL (run .ci/ceph up DIR and source DIR/env)" : nil
    }

    @Test func unsignedRequestsGetAccessDeniedOverOneKeptAliveConnection() throws {
        guard let (endpoint, bucket) = Self.gateway else {
            print(Self.skipReason()!)
            return
        }
        let transport = HTTPTransport()
        for target in ["/\(bucket)?list-type=2&encoding-type=url", "/\(bucket)/some/key"] {
            let response = try transport.send(TransportRequest(method: .get, target: target), to: endpoint)
            #expect(response.status.code == 403)
            #expect(String(decoding: response.body, as: UTF8.self).contains("<Code>AccessDenied</Code>"))
            #expect(transport.idleConnectionCount(for: endpoint) == 1, "keep-alive survives a 403")
        }
    }

    @Test func anUnsignedUploadIsRefusedBeforeItsBodyWithExpectContinue() throws {
        guard let (endpoint, bucket) = Self.gateway else {
            print(Self.skipReason()!)
            return
        }
        let transport = HTTPTransport(configuration: TransportConfiguration(continueTimeout: .seconds(10)))
        let length: Int64 = 8 << 20
        let source = PatternSource(length: length)
        var fields = HTTPHeaders()
        fields.append(name: "x-amz-content-sha256", value: "UNSIGNED-PAYLOAD")
        let request = TransportRequest(method: .put, target: "/\(bucket)/transport/expect", headers: fields, body: .stream(length: length, source), expectsContinue: true)
        let response = try transport.send(request, to: endpoint)
        #expect(response.status.code == 403)
        #expect(String(decoding: response.body, as: UTF8.self).contains("<Code>AccessDenied</Code>"))
        #expect(source.produced == 0, "the gateway refused before the body")
    }

    @Test func anUnsignedUploadWithoutExpectIsStreamedAndRefused() throws {
        guard let (endpoint, bucket) = Self.gateway else {
            print(Self.skipReason()!)
            return
        }
        let transport = HTTPTransport()
        let length: Int64 = 4 << 20
        let source = PatternSource(length: length)
        let request = TransportRequest(method: .put, target: "/\(bucket)/transport/plain", body: .stream(length: length, source))
        let response = try transport.send(request, to: endpoint)
        #expect(response.status.code == 403)
        #expect(String(decoding: response.body, as: UTF8.self).contains("AccessDenied"))
        let head = try transport.start(TransportRequest(method: .head, target: "/\(bucket)/transport/plain"), to: endpoint)
        #expect(head.status.code == 403 || head.status.code == 404)
    }
}
