import Foundation
import Testing

@testable import S3BlobStore

/// S3Configuration.resolve over injected environments and files: the AWS CLI's precedence, the
/// files' syntax, and errors that say what is missing and where it was looked for.
@Suite struct ConfigurationTests {
    /// An environment whose files are the given texts (any other path does not exist).
    static func environment(_ variables: [String: String], files: [String: String] = [:]) -> AWSEnvironment {
        AWSEnvironment(variables: variables) { path in files[path] }
    }

    static let home = ["HOME": "/home/u"]

    @Test func environmentVariablesAlone() throws {
        let configuration = try S3Configuration.resolve(environment: Self.environment([
            "AWS_ACCESS_KEY_ID": "AKENV", "AWS_SECRET_ACCESS_KEY": "secret-env", "AWS_SESSION_TOKEN": "tok",
            "AWS_REGION": "eu-west-3", "AWS_DEFAULT_REGION": "us-west-2",
            "AWS_ENDPOINT_URL": "http://generic:1", "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:7480",
        ]))
        #expect(configuration.credentials == AWSCredentials(accessKeyID: "AKENV", secretAccessKey: "secret-env", sessionToken: "tok"))
        #expect(configuration.region == "eu-west-3")
        #expect(configuration.endpoint == S3Endpoint(scheme: .http, host: "127.0.0.1", port: 7480))
        #expect(configuration.addressingStyle == .path)
        #expect(configuration.profile == "default")
        #expect(configuration.origins.endpoint == "environment variable AWS_ENDPOINT_URL_S3")
        #expect(configuration.origins.region == "environment variable AWS_REGION")
    }

    @Test func defaultRegionVariableAndGenericEndpoint() throws {
        let configuration = try S3Configuration.resolve(environment: Self.environment([
            "AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "s", "AWS_DEFAULT_REGION": "us-west-2",
            "AWS_ENDPOINT_URL": "https://minio.example:9000/",
        ]))
        #expect(configuration.region == "us-west-2")
        #expect(configuration.endpoint.description == "https://minio.example:9000")
        #expect(configuration.origins.endpoint == "environment variable AWS_ENDPOINT_URL")
    }

    @Test func withoutEndpointItIsAWSVirtualHosted() throws {
        let configuration = try S3Configuration.resolve(environment: Self.environment([
            "AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "s",
        ]))
        #expect(configuration.region == "us-east-1")
        #expect(configuration.origins.region == "the default")
        #expect(configuration.endpoint == S3Endpoint(scheme: .https, host: "s3.us-east-1.amazonaws.com"))
        #expect(configuration.endpoint.hostHeader == "s3.us-east-1.amazonaws.com")
        #expect(configuration.addressingStyle == .virtualHosted)
    }

    @Test func environmentWinsOverFiles() throws {
        let files = [
            "/home/u/.aws/credentials": "[default]\naws_access_key_id = AKFILE\naws_secret_access_key = sfile\n",
            "/home/u/.aws/config": "[default]\nregion = ap-south-1\nendpoint_url = http://file-endpoint\n",
        ]
        let configuration = try S3Configuration.resolve(environment: Self.environment(Self.home.merging([
            "AWS_ACCESS_KEY_ID": "AKENV", "AWS_SECRET_ACCESS_KEY": "senv", "AWS_REGION": "eu-north-1",
            "AWS_ENDPOINT_URL": "http://env-endpoint",
        ]) { $1 }, files: files))
        #expect(configuration.credentials.accessKeyID == "AKENV")
        #expect(configuration.region == "eu-north-1")
        #expect(configuration.endpoint.host == "env-endpoint")
        // And without the variables, the files are read.
        let fromFiles = try S3Configuration.resolve(environment: Self.environment(Self.home, files: files))
        #expect(fromFiles.credentials == AWSCredentials(accessKeyID: "AKFILE", secretAccessKey: "sfile"))
        #expect(fromFiles.region == "ap-south-1")
        #expect(fromFiles.endpoint == S3Endpoint(scheme: .http, host: "file-endpoint", port: 80))
        #expect(fromFiles.origins.credentials == "/home/u/.aws/credentials [default]")
        #expect(fromFiles.origins.region == "/home/u/.aws/config [default]")
    }

    @Test func namedProfileInBothFiles() throws {
        let files = [
            "/home/u/.aws/credentials": """
                # comment
                [default]
                aws_access_key_id=AKDEFAULT
                aws_secret_access_key=sdefault

                [ceph]
                AWS_ACCESS_KEY_ID = AKCEPH
                aws_secret_access_key: sceph
                aws_session_token = tceph
                """,
            "/home/u/.aws/config": """
                [default]
                region = us-east-2
                ; another comment
                [profile ceph]
                region = default
                endpoint_url = http://[::1]:7480
                s3 =
                  addressing_style = virtual
                """,
        ]
        let configuration = try S3Configuration.resolve(environment: Self.environment(Self.home.merging(["AWS_PROFILE": "ceph"]) { $1 }, files: files))
        #expect(configuration.profile == "ceph")
        #expect(configuration.credentials == AWSCredentials(accessKeyID: "AKCEPH", secretAccessKey: "sceph", sessionToken: "tceph"))
        #expect(configuration.region == "default")
        #expect(configuration.endpoint == S3Endpoint(scheme: .http, host: "::1", port: 7480))
        #expect(configuration.endpoint.hostHeader == "[::1]:7480")
        #expect(configuration.addressingStyle == .virtualHosted)
        #expect(configuration.origins.endpoint == "/home/u/.aws/config [profile ceph] endpoint_url")
    }

    @Test func credentialsInTheConfigFileAndFileOverrides() throws {
        let files = [
            "/etc/aws-config": "[profile p]\naws_access_key_id = AKCONF\naws_secret_access_key = sconf\nservices = local\n"
                + "[services local]\ns3 =\n  endpoint_url = http://localhost:8000\n",
            "/home/u/creds": "[other]\naws_access_key_id = X\naws_secret_access_key = Y\n",
        ]
        let configuration = try S3Configuration.resolve(environment: Self.environment(Self.home.merging([
            "AWS_PROFILE": "p", "AWS_CONFIG_FILE": "/etc/aws-config", "AWS_SHARED_CREDENTIALS_FILE": "~/creds",
        ]) { $1 }, files: files))
        #expect(configuration.credentials.accessKeyID == "AKCONF")
        #expect(configuration.origins.credentials == "/etc/aws-config [profile p]")
        #expect(configuration.endpoint == S3Endpoint(scheme: .http, host: "localhost", port: 8000))
        #expect(configuration.addressingStyle == .path)
    }

    @Test func ignoringConfiguredEndpoints() throws {
        let configuration = try S3Configuration.resolve(environment: Self.environment([
            "AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "s", "AWS_REGION": "eu-west-1",
            "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:7480", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true",
        ]))
        #expect(configuration.endpoint == .aws(region: "eu-west-1"))
        #expect(configuration.addressingStyle == .virtualHosted)
    }

    @Test func defaultProfileReadsBothSectionNamesAndCanIgnoreEndpoints() throws {
        let files = [
            "/home/u/.aws/config": """
                [default]
                region = eu-west-1
                endpoint_url = http://plain-default
                aws_access_key_id = AKPLAIN
                aws_secret_access_key = splain
                [profile default]
                region = eu-central-1
                """,
        ]
        let configuration = try S3Configuration.resolve(environment: Self.environment(Self.home, files: files))
        #expect(configuration.region == "eu-central-1")
        #expect(configuration.endpoint.host == "plain-default")
        #expect(configuration.credentials.accessKeyID == "AKPLAIN")
        let ignoring = try S3Configuration.resolve(environment: Self.environment(Self.home, files: [
            "/home/u/.aws/config": files["/home/u/.aws/config"]! + "\nignore_configured_endpoint_urls = true\n",
        ]))
        #expect(ignoring.endpoint == .aws(region: "eu-central-1"))
    }

    @Test func missingCredentialsSayWhereTheyWereLookedFor() {
        let files = ["/home/u/.aws/config": "[default]\nregion = eu-west-1\n"]
        #expect {
            try S3Configuration.resolve(environment: Self.environment(Self.home, files: files))
        } throws: { error in
            let text = String(describing: error)
            return error as? AWSConfigurationError == .missingCredentials(profile: "default", lookedIn: [
                "environment variables AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (not set)",
                "/home/u/.aws/credentials (no such file)",
                "/home/u/.aws/config [default] (no aws_access_key_id)",
            ]) && text.contains("no AWS credentials for profile 'default'") && text.contains("/home/u/.aws/credentials")
        }
        #expect(throws: AWSConfigurationError.missingCredentials(profile: "default", lookedIn: [
            "environment variables AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (not set)",
            "no ~/.aws file (HOME is not set)", "no ~/.aws file (HOME is not set)",
        ])) {
            try S3Configuration.resolve(environment: Self.environment([:]))
        }
    }

    @Test func partialCredentialsNameTheMissingHalfAndNeverTheSecret() {
        #expect(throws: AWSConfigurationError.partialCredentials(missing: "AWS_ACCESS_KEY_ID", source: "the environment (AWS_SECRET_ACCESS_KEY is set)")) {
            try S3Configuration.resolve(environment: Self.environment(["AWS_SECRET_ACCESS_KEY": "very-secret"]))
        }
        #expect(throws: AWSConfigurationError.partialCredentials(missing: "AWS_SECRET_ACCESS_KEY", source: "the environment (AWS_ACCESS_KEY_ID is set)")) {
            try S3Configuration.resolve(environment: Self.environment(["AWS_ACCESS_KEY_ID": "AK"]))
        }
        let files = ["/home/u/.aws/credentials": "[default]\naws_secret_access_key = very-secret\n"]
        #expect {
            try S3Configuration.resolve(environment: Self.environment(Self.home, files: files))
        } throws: { error in
            error as? AWSConfigurationError == .partialCredentials(missing: "aws_access_key_id", source: "/home/u/.aws/credentials [default]")
                && !String(describing: error).contains("very-secret")
        }
    }

    @Test func unknownProfile() {
        #expect(throws: AWSConfigurationError.profileNotFound(profile: "nope", lookedIn: [
            "/home/u/.aws/credentials", "/home/u/.aws/config (no such file)",
        ])) {
            try S3Configuration.resolve(environment: Self.environment(
                Self.home.merging(["AWS_PROFILE": "nope", "AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "s"]) { $1 },
                files: ["/home/u/.aws/credentials": "[default]\n"]
            ))
        }
    }

    @Test func anUnreadableFileIsAnErrorNotAnAbsentFile() {
        struct Denied: Error, CustomStringConvertible { var description: String { "EACCES (Permission denied)" } }
        let environment = AWSEnvironment(variables: Self.home.merging(["AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "s"]) { $1 }) { path in
            if path.hasSuffix("config") { throw Denied() }
            return nil
        }
        #expect(throws: AWSConfigurationError.unreadableFile(path: "/home/u/.aws/config", reason: "EACCES (Permission denied)")) {
            try S3Configuration.resolve(environment: environment)
        }
    }

    @Test(arguments: [
        ("region = x\n", 1, "a setting before any [section] header"),
        ("[default]\nregion\n", 2, "expected 'name = value'"),
        ("[default\n", 1, "a section header without its closing ']'"),
        ("[default]\n = value\n", 2, "a setting without a name"),
    ])
    func malformedFileNamesTheLine(text: String, line: Int, reason: String) {
        #expect(throws: AWSConfigurationError.malformedFile(path: "/home/u/.aws/config", line: line, reason: reason)) {
            try S3Configuration.resolve(environment: Self.environment(Self.home, files: ["/home/u/.aws/config": text]))
        }
    }

    @Test(arguments: ["127.0.0.1:7480", "ftp://host", "http://", "http://host/path", "http://host:0", "http://host:x", "http://user@host", "http://[::1"])
    func invalidEndpointIsRefusedNamingItsSource(text: String) {
        #expect {
            try S3Configuration.resolve(environment: Self.environment([
                "AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "s", "AWS_ENDPOINT_URL": text,
            ]))
        } throws: { error in
            guard case .invalidEndpoint(let value, let source, _) = error as? AWSConfigurationError else { return false }
            return value == text && source == "environment variable AWS_ENDPOINT_URL"
        }
    }

    @Test func invalidAddressingStyleAndRegion() {
        let files = ["/home/u/.aws/config": "[default]\ns3 =\n    addressing_style = sideways\n"]
        #expect(throws: AWSConfigurationError.invalidSetting(
            name: "s3.addressing_style", value: "sideways", source: "/home/u/.aws/config [default]", reason: "expected path, virtual or auto"
        )) {
            try S3Configuration.resolve(environment: Self.environment(
                Self.home.merging(["AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "s"]) { $1 }, files: files
            ))
        }
        #expect(throws: AWSConfigurationError.self) {
            try S3Configuration.resolve(environment: Self.environment(["AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "s", "AWS_REGION": "us east/1"]))
        }
    }

    @Test func descriptionShowsOriginsButNoSecret() throws {
        let configuration = try S3Configuration.resolve(environment: Self.environment([
            "AWS_ACCESS_KEY_ID": "AKVISIBLE", "AWS_SECRET_ACCESS_KEY": "hidden-secret", "AWS_SESSION_TOKEN": "hidden-token",
            "AWS_ENDPOINT_URL": "http://127.0.0.1:7480",
        ]))
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in [configuration.description, dumped] {
            #expect(text.contains("AKVISIBLE"))
            #expect(!text.contains("hidden-secret"))
            #expect(!text.contains("hidden-token"))
        }
        #expect(configuration.description.contains("http://127.0.0.1:7480 (environment variable AWS_ENDPOINT_URL)"))
    }

    /// The process's file reader: absent is nil, present is its text, unreadable is an error.
    @Test func processFileReader() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aws-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("config")
        try "[default]\nregion = eu-west-1\n".write(to: file, atomically: true, encoding: .utf8)
        let read = AWSEnvironment.process.readFile
        #expect(try read(file.path) == "[default]\nregion = eu-west-1\n")
        #expect(try read(folder.appendingPathComponent("absent").path) == nil)
        #expect(try read(file.path + "/under-a-file") == nil)
        // A folder opens but cannot be read (EISDIR): an error, not "no file".
        #expect(throws: (any Error).self) { try read(folder.path) }
        #expect(AWSEnvironment.process.variables["PATH"] != nil)
    }
}
