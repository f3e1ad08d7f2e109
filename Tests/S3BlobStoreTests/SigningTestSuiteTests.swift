import Foundation
import Testing

@testable import S3BlobStore

/// AWS's published Signature Version 4 test suite (`SigningFixtures/aws4_testsuite`, Apache-2.0,
/// as shipped in botocore's source distribution): each case's raw request is signed here and the
/// canonical request, string to sign and `Authorization` value must equal the suite's files.
///
/// The suite is written for services that normalise paths; S3 does not (a key may hold `//` or
/// `..`), so for the cases whose expected path is normalised the test checks the S3 rule instead.
@Suite struct SigningTestSuiteTests {
    static let credentials = AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    static let date = Date(timeIntervalSince1970: 1_440_938_160)  // 2015-08-30T12:36:00Z

    /// The suite's cases whose expected canonical path is normalised, which S3 must not do.
    static let normalisingCases: Set<String> = [
        "get-relative", "get-relative-relative", "get-slash", "get-slash-dot-slash", "get-slash-pointless-dot", "get-slashes",
    ]

    static let cases: [SuiteCase] = SuiteCase.loadAll()

    @Test func suiteIsPresent() {
        // 24 top-level cases plus the 8 normalize-path and 2 post-sts-token ones.
        #expect(Self.cases.count == 34)
        #expect(Set(Self.cases.map(\.name)).isSuperset(of: [
            "get-vanilla", "get-vanilla-query-order-key-case", "get-header-value-trim", "post-x-www-form-urlencoded",
            "get-utf8", "get-space", "get-vanilla-with-session-token", "post-sts-header-before",
        ]))
    }

    @Test(arguments: cases.map(\.name))
    func signsLikeTheSuite(name: String) throws {
        let testCase = try #require(Self.cases.first { $0.name == name })
        var credentials = Self.credentials
        credentials.sessionToken = testCase.sessionToken
        let signer = SignatureV4(credentials: credentials, region: "us-east-1", service: "service", sendsContentSHA256: false)
        let signed = signer.sign(testCase.request, at: Self.date)

        if Self.normalisingCases.contains(name) {
            // Every line but the path is the suite's; the path is the request's, encoded once, as is.
            var expected = testCase.canonicalRequest.split(separator: "\n", omittingEmptySubsequences: false)
            var actual = signed.canonicalRequest.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(actual[1] == Substring(S3URIEncoding.encodePath(testCase.request.path)))
            #expect(actual[1] != expected[1], "the suite normalises \(testCase.request.path); S3 must not")
            expected.remove(at: 1)
            actual.remove(at: 1)
            #expect(actual == expected)
            return
        }
        #expect(signed.canonicalRequest == testCase.canonicalRequest)
        #expect(signed.stringToSign == testCase.stringToSign)
        #expect(signed.authorization == testCase.authorization)
        #expect(signed.headersToAdd.last == S3HeaderField("Authorization", testCase.authorization))
        #expect(signed.headersToAdd.first == S3HeaderField("x-amz-date", "20150830T123600Z"))
    }
}

/// One case of the suite: the request parsed from its `.req` file and the expected texts.
struct SuiteCase: Sendable {
    var name: String
    var request: S3Request
    var sessionToken: String?
    var canonicalRequest: String
    var stringToSign: String
    var authorization: String

    static func loadAll() -> [SuiteCase] {
        guard let root = Bundle.module.url(forResource: "SigningFixtures/aws4_testsuite", withExtension: nil) else { return [] }
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        var cases: [SuiteCase] = []
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "req" else { continue }
            let folder = url.deletingLastPathComponent()
            let name = url.deletingPathExtension().lastPathComponent
            func read(_ suffix: String) -> String {
                (try? String(contentsOf: folder.appendingPathComponent("\(name).\(suffix)"), encoding: .utf8)) ?? ""
            }
            cases.append(SuiteCase(name: name, raw: read("req"), signedRaw: read("sreq"), creq: read("creq"), sts: read("sts"), authz: read("authz")))
        }
        return cases.sorted { $0.name < $1.name }
    }

    /// Parses the raw HTTP request the suite gives: request line, fields (a line starting with
    /// whitespace continues the previous field), an empty line, the body.
    init(name: String, raw: String, signedRaw: String, creq: String, sts: String, authz: String) {
        self.name = name
        canonicalRequest = creq
        stringToSign = sts
        authorization = authz.trimmingCharacters(in: .newlines)
        let (head, body) = Self.split(raw)
        let requestLine = head.first ?? ""
        let method = String(requestLine.prefix { $0 != " " })
        var target = requestLine.dropFirst(method.count + 1)
        if let version = target.range(of: " HTTP/", options: .backwards) { target = target[..<version.lowerBound] }
        let pathPart = target.prefix { $0 != "?" }
        let queryPart = target.dropFirst(pathPart.count + 1)
        let path = String(pathPart).removingPercentEncoding ?? String(pathPart)
        let query = queryPart.split(separator: "&").map { pair -> S3QueryItem in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : ""
            return S3QueryItem(name, value)
        }
        var headers = Self.fields(head.dropFirst())
        // The signer writes x-amz-date from its clock and the token from the credentials.
        headers.removeAll { $0.name.lowercased() == "x-amz-date" }
        var token = headers.first { $0.name.lowercased() == "x-amz-security-token" }?.value
        headers.removeAll { $0.name.lowercased() == "x-amz-security-token" }
        if token == nil, creq.contains("\nx-amz-security-token:") {
            // get-vanilla-with-session-token: the token is only in the signed request.
            token = Self.fields(Self.split(signedRaw).head.dropFirst()).first { $0.name.lowercased() == "x-amz-security-token" }?.value
        }
        sessionToken = token
        request = S3Request(method: method, path: path, queryItems: query, headers: headers, payload: .sha256(SHA256.hash(body)))
    }

    private static func split(_ raw: String) -> (head: [String], body: String) {
        let lines = raw.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n", omittingEmptySubsequences: false)
        guard let blank = lines.firstIndex(of: "") else { return (lines.map(String.init), "") }
        return (lines[..<blank].map(String.init), lines[(blank + 1)...].joined(separator: "\n"))
    }

    private static func fields(_ lines: ArraySlice<String>) -> [S3HeaderField] {
        var fields: [S3HeaderField] = []
        for line in lines {
            if line.first == " " || line.first == "\t", !fields.isEmpty {
                fields[fields.count - 1].value += " " + line
                continue
            }
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields.append(S3HeaderField(String(line[..<colon]), String(line[line.index(after: colon)...])))
        }
        return fields
    }
}
