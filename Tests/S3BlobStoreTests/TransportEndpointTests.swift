import S3BlobStore
import Testing

@Suite struct TransportEndpointTests {
    @Test func parsesHTTPURLsAndRefusesOthers() {
        #expect(TransportEndpoint(url: "http://127.0.0.1:7480") == TransportEndpoint(host: "127.0.0.1", port: 7480))
        #expect(TransportEndpoint(url: "HTTP://gateway.local/ignored/path?x=1") == TransportEndpoint(host: "gateway.local", port: 80))
        #expect(TransportEndpoint(url: "http://[::1]:8000/") == TransportEndpoint(host: "::1", port: 8000))
        #expect(TransportEndpoint(url: "http://[::1]") == TransportEndpoint(host: "::1", port: 80))
        #expect(TransportEndpoint(url: "https://s3.amazonaws.com") == nil)
        #expect(TransportEndpoint(url: "http://host:notaport") == nil)
        #expect(TransportEndpoint(url: "http://:80") == nil)
        #expect(TransportEndpoint(url: "http://user@host") == nil)
    }

    @Test func hostFieldAndDescription() {
        #expect(TransportEndpoint(host: "127.0.0.1", port: 7480).hostField == "127.0.0.1:7480")
        #expect(TransportEndpoint(host: "example.com", port: 80).hostField == "example.com")
        #expect(TransportEndpoint(host: "[::1]", port: 8000).hostField == "[::1]:8000")
        #expect(TransportEndpoint(host: "::1", port: 8000).description == "[::1]:8000")
        #expect(TransportEndpoint(host: "localhost", port: 80).description == "localhost:80")
    }
}
