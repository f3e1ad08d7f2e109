import BlobSystem
import BlobTestSupport
import Foundation
import HTTP1
import S3BlobStore
import Testing

/// The S3 client over HTTPS (FoundationNetworking) against a real radosgw behind nginx as TLS
/// terminator: `.ci/ceph up` and `.ci/s3-https up` bring them up, and their env files were sourced
/// (`AWS_ENDPOINT_URL`, `BLOB_S3_BUCKET`, `BLOB_S3_HTTPS_ENDPOINT`). The terminator's certificate is
/// signed by a throwaway CA that the script added to the system trust store.
@Suite struct HTTPSGatewayTests {
    static let configuration: (S3Configuration, bucket: String)? = {
        let environment = ProcessInfo.processInfo.environment
        guard let https = environment["BLOB_S3_HTTPS_ENDPOINT"], https.hasPrefix("https://"), let bucket = environment["BLOB_S3_BUCKET"] else {
            return nil
        }
        var variables = environment
        variables["AWS_ENDPOINT_URL"] = https
        variables["AWS_ENDPOINT_URL_S3"] = nil
        guard let configuration = try? S3Configuration.resolve(environment: AWSEnvironment(variables: variables, readFile: { _ in nil })) else {
            return nil
        }
        return (configuration, bucket)
    }()

    static let skipReason =
        "HTTPSGatewayTests: skipped, no https:// BLOB_S3_HTTPS_ENDPOINT and BLOB_S3_BUCKET (run .ci/ceph up DIR, source DIR/env, then .ci/s3-https up DIR2 and source DIR2/env)"

    @Test func aSignedPutGetHeadDeleteOverHTTPS() async throws { try await onOwnThread { try Self().aSignedPutGetHeadDeleteOverHTTPSBlocking() } }

    func aSignedPutGetHeadDeleteOverHTTPSBlocking() throws {
        guard let (configuration, bucket) = Self.configuration else { return print(Self.skipReason) }
        #expect(configuration.endpoint.scheme == .https)
        let client = try S3Client(configuration: configuration, bucket: bucket)
        let key = "https-tests/\(UUID().uuidString)/small"
        let body = Array("hello over TLS".utf8)
        let put = try client.send(
            try client.bucket.putObject(key: key, payload: .sha256(SHA256.hash(body)), headers: S3ObjectHeaders(contentType: "text/plain")),
            body: .bytes(body), context: client.bucket.context("PutObject", key: key))
        let etag = try #require(put.headers.first(name: "ETag").map(S3XMLValues.unquotedETag))

        let got = try client.send(try client.bucket.getObject(key: key), context: client.bucket.context("GetObject", key: key))
        #expect(got.status.code == 200)
        #expect(got.body == body)
        #expect(got.headers.first(name: "Content-Type") == "text/plain")

        let head = try client.send(try client.bucket.headObject(key: key), context: client.bucket.context("HeadObject", key: key))
        #expect(head.headers.first(name: "ETag").map(S3XMLValues.unquotedETag) == etag)
        #expect(head.headers.first(name: "Content-Length") == String(body.count))
        #expect(head.body.isEmpty)

        let deleted = try client.send(try client.bucket.deleteObject(key: key), context: client.bucket.context("DeleteObject", key: key))
        #expect(deleted.status.code == 204)
        let get = try client.bucket.getObject(key: key)
        do {
            _ = try client.send(get, context: client.bucket.context("GetObject", key: key))
            Issue.record("a deleted object was read")
        } catch {
            #expect(error.code == "NoSuchKey")
            #expect(error.description.contains(configuration.endpoint.description), "names the https endpoint: \(error)")
        }
    }

    @Test(arguments: ["a/../b", "./c", "d/.", "e//f", "/g", "sp ace+plus%pct~"])
    func keysWithDotSegmentsAndOddBytesRoundTripOverHTTPS(_ name: String) throws {
        guard let (configuration, bucket) = Self.configuration else { return print(Self.skipReason) }
        let client = try S3Client(configuration: configuration, bucket: bucket)
        let key = "https-tests/\(UUID().uuidString)/\(name)"
        let body = Array(name.utf8)
        _ = try client.send(try client.bucket.putObject(key: key, payload: .unsigned), body: .bytes(body), context: client.bucket.context("PutObject", key: key))
        let got = try client.send(try client.bucket.getObject(key: key), context: client.bucket.context("GetObject", key: key))
        #expect(got.body == body)
        let listed = try client.send(try client.bucket.listObjects(prefix: key), context: client.bucket.context("ListObjectsV2"))
        #expect(try S3ListObjectsPage(xml: listed.body).objects.map(\.key) == [key], "stored under the very key signed")
        _ = try client.send(try client.bucket.deleteObject(key: key), context: client.bucket.context("DeleteObject", key: key))
    }

    @Test func anObjectStoredGzipEncodedIsReadAsStoredNotDecoded() async throws { try await onOwnThread { try Self().anObjectStoredGzipEncodedIsReadAsStoredNotDecodedBlocking() } }

    func anObjectStoredGzipEncodedIsReadAsStoredNotDecodedBlocking() throws {
        guard let (configuration, bucket) = Self.configuration else { return print(Self.skipReason) }
        let client = try S3Client(configuration: configuration, bucket: bucket)
        let key = "https-tests/\(UUID().uuidString)/gzipped"
        // "hello\n", gzipped.
        let body: [UInt8] = [
            0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xcb, 0x48, 0xcd,
            0xc9, 0xc9, 0xe7, 0x02, 0x00, 0x20, 0x30, 0x3a, 0x36, 0x06, 0x00, 0x00, 0x00,
        ]
        let headers = S3ObjectHeaders(contentType: "text/plain", standard: [S3HeaderField("Content-Encoding", "gzip")])
        _ = try client.send(try client.bucket.putObject(key: key, payload: .unsigned, headers: headers), body: .bytes(body), context: client.bucket.context("PutObject", key: key))
        let got = try client.send(try client.bucket.getObject(key: key), context: client.bucket.context("GetObject", key: key))
        #expect(got.body == body, "the stored bytes, not libcurl's decoding of them")
        let head = try client.send(try client.bucket.headObject(key: key), context: client.bucket.context("HeadObject", key: key))
        #expect(head.headers.first(name: "Content-Encoding") == "gzip", "HEAD still shows the stored encoding")
        _ = try client.send(try client.bucket.deleteObject(key: key), context: client.bucket.context("DeleteObject", key: key))
    }

    @Test func aServerThatDoesNotSpeakTLSFailsClearlyNamingTheEndpoint() async throws { try await onOwnThread { try Self().aServerThatDoesNotSpeakTLSFailsClearlyNamingTheEndpointBlocking() } }

    func aServerThatDoesNotSpeakTLSFailsClearlyNamingTheEndpointBlocking() throws {
        guard let (configuration, bucket) = Self.configuration,
            let plain = ProcessInfo.processInfo.environment["BLOB_S3_HTTP_PROXY_ENDPOINT"].flatMap({ URL(string: $0) }), let port = plain.port
        else { return print(Self.skipReason) }
        var wrong = configuration
        wrong.endpoint = S3Endpoint(scheme: .https, host: "127.0.0.1", port: port)
        let client = try S3Client(configuration: wrong, bucket: bucket)
        let list = try client.bucket.listObjects(maxKeys: 1)
        do {
            _ = try client.send(list, context: client.bucket.context("ListObjectsV2"))
            Issue.record("an https request to a plain-HTTP port got an answer")
        } catch {
            guard case .unreachable(_, let transportError) = error else {
                Issue.record("expected no answer, got \(error)")
                return
            }
            #expect(error.description.contains("ListObjectsV2 s3://\(bucket)/ at https://127.0.0.1:\(port)"), "\(error)")
            #expect(transportError.endpoint.port == UInt16(port))
            print("HTTPSGatewayTests: a TLS handshake with a plain-HTTP port fails with: \(error)")
        }
    }

    @Test func aWrongSignatureIsTheGatewaysAnswerNotATransportError() async throws { try await onOwnThread { try Self().aWrongSignatureIsTheGatewaysAnswerNotATransportErrorBlocking() } }

    func aWrongSignatureIsTheGatewaysAnswerNotATransportErrorBlocking() throws {
        guard let (configuration, bucket) = Self.configuration else { return print(Self.skipReason) }
        var wrong = configuration
        wrong.credentials = AWSCredentials(accessKeyID: configuration.credentials.accessKeyID, secretAccessKey: "not-the-secret")
        let client = try S3Client(configuration: wrong, bucket: bucket)
        let list = try client.bucket.listObjects(maxKeys: 1)
        do {
            _ = try client.send(list, context: client.bucket.context("ListObjectsV2"))
            Issue.record("a request signed with a wrong secret was accepted")
        } catch {
            #expect(error.status == 403)
            #expect(error.code == "SignatureDoesNotMatch")
        }
    }

    @Test func aMultipartUploadStreamsFileRegionsOverHTTPS() async throws { try await onOwnThread { try Self().aMultipartUploadStreamsFileRegionsOverHTTPSBlocking() } }

    func aMultipartUploadStreamsFileRegionsOverHTTPSBlocking() throws {
        guard let (configuration, bucket) = Self.configuration else { return print(Self.skipReason) }
        let client = try S3Client(configuration: configuration, bucket: bucket)
        let key = "https-tests/\(UUID().uuidString)/multipart"
        let file = try PatternFile(length: 11 << 20)
        defer { file.remove() }
        let etag = try S3MultipartUpload(client: client, key: key, headers: S3ObjectHeaders(), partSize: 5 << 20, concurrency: 2)
            .upload(file: file.descriptor, length: file.length)
        #expect(etag.hasSuffix("-3"))
        let got = try client.send(try client.bucket.getObject(key: key), context: client.bucket.context("GetObject", key: key), responseLimit: 12 << 20)
        #expect(got.body == file.contents, "byte-exact")
        _ = try client.send(try client.bucket.deleteObject(key: key), context: client.bucket.context("DeleteObject", key: key))
    }

    @Test func aBodyTheReaderIsSlowToTakeSpillsToAFileAndReadsBackInOrder() async throws { try await onOwnThread { try Self().aBodyTheReaderIsSlowToTakeSpillsToAFileAndReadsBackInOrderBlocking() } }

    func aBodyTheReaderIsSlowToTakeSpillsToAFileAndReadsBackInOrderBlocking() throws {
        guard let (configuration, bucket) = Self.configuration else { return print(Self.skipReason) }
        let client = try S3Client(configuration: configuration, bucket: bucket)
        let key = "https-tests/\(UUID().uuidString)/spilled"
        let file = try PatternFile(length: 3 << 20)
        defer { file.remove() }
        _ = try client.send(
            try client.bucket.putObject(key: key, payload: .unsigned), body: .fileRegion(file.descriptor, offset: 0, length: file.length),
            context: client.bucket.context("PutObject", key: key))

        // A transport that keeps 64 KiB in memory; the reader waits until the rest has spilled.
        let transport = HTTPSTransport(responseMemoryLimit: 64 << 10)
        let request = try client.bucket.getObject(key: key)
        let signed = client.signer.sign(request, at: Date())
        var headers = HTTPHeaders()
        for field in request.headers + signed.headersToAdd { headers.append(name: field.name, value: field.value) }
        let url = try #require(URL(string: configuration.endpoint.description))
        let endpoint = TransportEndpoint(host: try #require(url.host), port: UInt16(try #require(url.port)))
        let response = try transport.start(TransportRequest(method: .get, target: request.target, headers: headers), to: endpoint)
        #expect(response.status.code == 200)
        let expectedSpill = Int64(file.length) - (64 << 10)
        let deadline = Date().addingTimeInterval(60)
        while transport.spilledByteCount < expectedSpill, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(transport.spilledByteCount >= expectedSpill, "all but the first 64 KiB went through the spill file")

        var received: [UInt8] = []
        let piece = UnsafeMutableRawBufferPointer.allocate(byteCount: 100_000, alignment: 16)
        defer { piece.deallocate() }
        while let count = try response.read(into: piece) { received += piece[0..<count] }
        #expect(response.isComplete)
        #expect(received == file.contents, "byte-exact and in order across memory and the spill file")
        _ = try client.send(try client.bucket.deleteObject(key: key), context: client.bucket.context("DeleteObject", key: key))
    }

    @Test func aFileShorterThanItsDeclaredLengthFailsTheUploadClearly() async throws { try await onOwnThread { try Self().aFileShorterThanItsDeclaredLengthFailsTheUploadClearlyBlocking() } }

    func aFileShorterThanItsDeclaredLengthFailsTheUploadClearlyBlocking() throws {
        guard let (configuration, bucket) = Self.configuration else { return print(Self.skipReason) }
        let client = try S3Client(configuration: configuration, bucket: bucket)
        let key = "https-tests/\(UUID().uuidString)/short"
        let file = try PatternFile(length: 100_000)
        defer { file.remove() }
        let put = try client.bucket.putObject(key: key, payload: .unsigned)
        do {
            _ = try client.send(
                put, body: .fileRegion(file.descriptor, offset: 0, length: 200_000),
                context: client.bucket.context("PutObject", key: key))
            Issue.record("a body shorter than its Content-Length was accepted")
        } catch {
            #expect(error.description.contains("the file ended 100000 bytes into a region of 200000"), "\(error)")
        }
        #expect(throws: S3ClientError.self) { try client.send(try client.bucket.headObject(key: key), context: client.bucket.context("HeadObject", key: key)) }
    }
}
