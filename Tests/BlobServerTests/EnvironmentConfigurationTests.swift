@testable import BlobServer
import BlobStore
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// `blobd`'s settings from `BLOBD_*` environment variables, under the flags.
struct EnvironmentConfigurationTests {
    private func configuration(_ arguments: [String], _ environment: [String: String]) -> ServerConfiguration? {
        if case .run(let configuration) = DaemonCommandLine.parse(arguments, environment: environment) { return configuration }
        return nil
    }

    private func usageError(_ arguments: [String], _ environment: [String: String]) -> String? {
        if case .usageError(let message) = DaemonCommandLine.parse(arguments, environment: environment) { return message }
        return nil
    }

    @Test func everyVariableSetsItsSetting() throws {
        let environment = [
            "BLOBD_ROOT": "/srv/blobs", "BLOBD_SOCKET": "/run/b.sock", "BLOBD_DURABILITY": "relaxed", "BLOBD_EVENT_LOOPS": "5",
            "BLOBD_ALLOW_GROUP": "123", "BLOBD_LOG_LEVEL": "error", "BLOBD_LOG_FORMAT": "json", "BLOBD_ACCESS_LOG": "/var/log/b.log",
            "BLOBD_HEARTBEAT": "2.5", "BLOBD_BACKEND": "memory", "BLOBD_MEMORY_TIER": "16M",
        ]
        let c = try #require(configuration([], environment))
        #expect(c.root.path == "/srv/blobs")
        #expect(c.socketPath == "/run/b.sock")
        #expect(c.durability == .relaxed)
        #expect(c.eventLoopCount == 5)
        #expect(c.allowedGroup == 123)
        #expect(c.logLevel == .error)
        #expect(c.logFormat == .json)
        #expect(c.accessLog == .file("/var/log/b.log"))
        #expect(c.heartbeatSeconds == 2.5)
        #expect(c.backend == .memory)
        #expect(c.memoryTierBytes == 16 << 20)
        // Every variable is in the table, and --help names every one.
        #expect(Set(DaemonCommandLine.environmentVariables.map(\.variable)).subtracting(S3DaemonOptionsTests.cacheVariables).subtracting(FleetOptionsTests.eventVariables)
            .subtracting(StaleUploadSweepDaemonTests.variables).subtracting(S3StallTests.timeoutVariables) == Set(environment.keys))
        for (flag, variable) in DaemonCommandLine.environmentVariables {
            #expect(DaemonCommandLine.usage.contains(flag) && DaemonCommandLine.usage.contains("env \(variable)"), "\(variable)")
        }
    }

    @Test func flagsWinOverVariablesAndEmptyVariablesAreUnset() throws {
        let environment = ["BLOBD_DURABILITY": "relaxed", "BLOBD_EVENT_LOOPS": "7", "BLOBD_LOG_FORMAT": "", "BLOBD_ACCESS_LOG": "nonsense/../x"]
        let c = try #require(configuration(["--durability", "durable", "--event-loops=3", "--access-log", "off"], environment))
        #expect(c.durability == .durable)
        #expect(c.eventLoopCount == 3)
        #expect(c.logFormat == .text)
        #expect(c.accessLog == .off)
        // A flag that is given wins even when the variable's value is invalid.
        #expect(configuration(["--event-loops", "2"], ["BLOBD_EVENT_LOOPS": "many"])?.eventLoopCount == 2)
    }

    @Test func anInvalidVariableIsAUsageErrorNamingIt() {
        #expect(usageError([], ["BLOBD_EVENT_LOOPS": "0"]) == "BLOBD_EVENT_LOOPS must be a number from 1 to 64")
        #expect(usageError([], ["BLOBD_LOG_FORMAT": "xml"]) == "BLOBD_LOG_FORMAT must be text or json")
        #expect(usageError([], ["BLOBD_DURABILITY": "maybe"]) == "BLOBD_DURABILITY must be durable or relaxed")
        #expect(usageError(["--log-format", "xml"], [:]) == "--log-format must be text or json")
        let long = "/" + String(repeating: "s", count: 120)
        #expect(usageError([], ["BLOBD_SOCKET": long])?.hasPrefix("BLOBD_SOCKET path is 121 bytes") == true)
    }

    @Test func theAccessLogDefaultsToStderrAtDebugOnly() throws {
        #expect(try #require(configuration([], [:])).effectiveAccessLog == .off)
        #expect(try #require(configuration([], ["BLOBD_LOG_LEVEL": "debug"])).effectiveAccessLog == .stderr)
        #expect(try #require(configuration(["--log-level", "debug", "--access-log", "off"], [:])).effectiveAccessLog == .off)
        let relative = try #require(configuration(["--access-log", "logs/a.log"], [:]))
        #expect(relative.accessLog == .file(FileManager.default.currentDirectoryPath + "/logs/a.log"))
    }

    @Test(.enabled(if: BlobdBinary.url != nil, "blobd binary not found in .build/debug"))
    func theDaemonExits64OnABadVariableAndServesWithGoodOnes() throws {
        let folder = TempFolder()
        let bad = Process()
        bad.executableURL = BlobdBinary.url!
        bad.arguments = ["--root", folder.path + "/root", "--socket", folder.path + "/s"]
        bad.environment = ["BLOBD_DURABILITY": "sometimes", "PATH": "/usr/bin:/bin"]
        let stderr = Pipe()
        bad.standardError = stderr
        try bad.run()
        bad.waitUntilExit()
        let message = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(bad.terminationStatus == 64)
        #expect(message.contains("BLOBD_DURABILITY must be durable or relaxed"), "\(message)")
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/root"))

        // Root and socket from the environment alone.
        let good = Process()
        good.executableURL = BlobdBinary.url!
        good.environment = ["BLOBD_ROOT": folder.path + "/root", "BLOBD_SOCKET": folder.path + "/s", "BLOBD_DURABILITY": "relaxed", "PATH": "/usr/bin:/bin"]
        good.standardError = FileHandle.nullDevice
        try good.run()
        defer {
            kill(good.processIdentifier, SIGTERM)
            good.waitUntilExit()
        }
        var response: RawResponse?
        for _ in 0..<500 where response == nil {
            response = try? RawClient(path: folder.path + "/s").request("GET", "/v1/health")
            if response == nil { usleep(20_000) }
        }
        #expect(response?.status == 200)
        #expect(FileManager.default.fileExists(atPath: folder.path + "/root/.blobd.lock"))
    }
}
