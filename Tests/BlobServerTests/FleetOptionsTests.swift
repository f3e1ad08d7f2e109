@testable import BlobServer
import BlobStore
import BlobSystem
import Foundation
import S3BlobStore
import Testing

/// The fleet's settings, names, and which opened store a bucket event goes to.
@Suite struct FleetOptionsTests {
    /// The fleet's variables (EnvironmentConfigurationTests checks the others).
    static let eventVariables: Set<String> = ["BLOBD_EVENTS_LISTEN", "BLOBD_EVENTS_ENDPOINT", "BLOBD_EVENTS_MEMBER"]

    @Test func blobdTakesTheFlagsAndTheirVariables() throws {
        let environment = ["BLOBD_EVENTS_LISTEN": "0.0.0.0:7001", "BLOBD_EVENTS_ENDPOINT": "http://10.1.2.3:7001", "BLOBD_EVENTS_MEMBER": "web-1"]
        guard case .run(let fromVariables) = DaemonCommandLine.parse(["--backend", "s3://bucket/prefix"], environment: environment) else {
            Issue.record("the variables were refused")
            return
        }
        #expect(fromVariables.fleetEvents == FleetEventOptions(isEnabled: true, listenHost: "0.0.0.0", listenPort: 7001, endpoint: "http://10.1.2.3:7001", member: "web-1"))
        guard case .run(let defaults) = DaemonCommandLine.parse(["--backend", "s3://bucket/prefix"], environment: [:]) else {
            Issue.record("the defaults were refused")
            return
        }
        #expect(!defaults.fleetEvents.isEnabled, "a daemon joins a fleet's events only when --events-listen says where")
        guard case .run(let port) = DaemonCommandLine.parse(["--backend", "s3://bucket/prefix", "--events-listen", "0"], environment: [:]) else {
            Issue.record("--events-listen 0 was refused")
            return
        }
        #expect(port.fleetEvents == FleetEventOptions(isEnabled: true, listenHost: "127.0.0.1", listenPort: 0))
        guard case .run(let fromFlags) = DaemonCommandLine.parse(["--events-listen", "off", "--events-member=web-2"], environment: environment) else {
            Issue.record("the flags were refused")
            return
        }
        #expect(!fromFlags.fleetEvents.isEnabled)
        #expect(fromFlags.fleetEvents.member == "web-2")
        guard case .usageError(let message) = DaemonCommandLine.parse(["--events-listen", "nowhere"], environment: [:]) else {
            Issue.record("a bad address was taken")
            return
        }
        #expect(message == "--events-listen must be off, PORT or HOST:PORT")
        for variable in Self.eventVariables {
            let flag = try #require(DaemonCommandLine.environmentVariables.first { $0.variable == variable }?.flag)
            #expect(DaemonCommandLine.usage.contains(flag) && DaemonCommandLine.usage.contains("env \(variable)"), "\(variable)")
        }
    }

    @Test func listenAddressesAreReadOrRefused() {
        #expect(FleetEventOptions.parseListen("off")?.enabled == false)
        #expect(FleetEventOptions.parseListen("9000")! == (true, "127.0.0.1", 9000))
        #expect(FleetEventOptions.parseListen("0.0.0.0:9000")! == (true, "0.0.0.0", 9000))
        #expect(FleetEventOptions.parseListen("[::1]:0")! == (true, "::1", 0))
        for bad in ["", "x", ":9000", "host:", "host:70000", "host:-1"] {
            #expect(FleetEventOptions.parseListen(bad) == nil, "\(bad)")
        }
    }

    @Test func optionsApplyAndNameWhatIsWrong() {
        var options = FleetEventOptions()
        #expect(options.apply("--events-listen", "127.0.0.1:7000") == nil)
        #expect(options.listenPort == 7000 && options.isEnabled)
        #expect(options.apply("--events-endpoint", "http://10.0.0.5:7000") == nil)
        #expect(options.endpoint == "http://10.0.0.5:7000")
        #expect(options.apply("--events-member", "web-1_a") == nil)
        #expect(options.member == "web-1_a")
        #expect(options.apply("--events-listen", nil) == "must be off, PORT or HOST:PORT")
        #expect(options.apply("--events-endpoint", "10.0.0.5:7000") == "must be an http:// or https:// URL")
        #expect(options.apply("--events-member", "web.1") == "must be 1 to 200 of A-Z, a-z, 0-9, '-' and '_'")
        #expect(options.apply("--events-listen", "off") == nil)
        #expect(!options.isEnabled)
    }

    @Test func memberNamesAreStablePerSocketAndTopicSafe() {
        let first = FleetMember.defaultMember(socketPath: "/run/blobd/a.sock")
        #expect(first == FleetMember.defaultMember(socketPath: "/run/blobd/a.sock"))
        #expect(first != FleetMember.defaultMember(socketPath: "/run/blobd/b.sock"))
        #expect(FleetEventOptions.topicSafe(first) == FleetEventOptions.topicSafe(first))
        #expect(FleetEventOptions.topicSafe("web.1 é") == "web_1__")
    }

    @Test func onlyEarlierRunsOfTheSameMemberAreLeftovers() {
        #expect(FleetMember.isRun("web-1-i18f0a3c", of: "web-1"))
        #expect(!FleetMember.isRun("web-1-i", of: "web-1"))
        #expect(!FleetMember.isRun("web-1-ib-i18f0", of: "web-1"), "member web-1-ib is another member")
        #expect(!FleetMember.isRun("web-10-i18f0", of: "web-1"))
        #expect(!FleetMember.isRun("other", of: "web-1"))
    }

    @Test func theDefaultEndpointIsTheBoundAddressOrLoopbackForAWildcard() throws {
        let listener = try TCPSocket.listen(host: "127.0.0.1", port: 0)
        defer { try? listener.close() }
        let address = try TCPSocket.localAddress(listener)
        #expect(FleetMember.defaultEndpoint(address, host: "127.0.0.1") == "http://127.0.0.1:\(address.port)")
        #expect(FleetMember.defaultEndpoint(address, host: "0.0.0.0") == "http://127.0.0.1:\(address.port)")
    }
}

/// A member whose subscription the object store refuses does not start, and says what to do.
@Suite struct FleetSubscriptionRefusedTests {
    @Test func aRefusedSubscriptionStopsTheStartNamingEndpointMemberAndTheWayOut() throws {
        let environment = AWSEnvironment(
            variables: ["AWS_ENDPOINT_URL": "http://127.0.0.1:1", "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_REGION": "us-east-1"],
            readFile: { _ in nil })
        let setup = try S3BackendSetup(location: "s3://bucket/prefix", environment: environment, checkBucket: false)
        let catalog = FleetCatalog(DaemonS3Backend.catalog(setup, cache: nil))
        var configuration = ServerConfiguration(socketPath: "/tmp/fleet-refused.sock")
        configuration.backend = .s3
        configuration.s3Location = "s3://bucket/prefix"
        configuration.fleetEvents = FleetEventOptions(isEnabled: true, member: "web-1")
        let error = #expect(throws: StartupError.self) { _ = try FleetMember.start(for: catalog, configuration, log: Log(level: .error)) }
        let message = error?.description ?? ""
        #expect(message.contains("cannot subscribe to the changes of s3://bucket/prefix at http://127.0.0.1:1"), "\(message)")
        #expect(message.contains("fleet member web-1"), "\(message)")
        #expect(message.hasSuffix("an object store without HTTP push notifications (AWS S3) needs --events-listen off, the default"), "\(message)")
    }
}
