@testable import BlobServer
import Foundation
import Testing

/// `blobd --backend s3://BUCKET[/PREFIX]` and the read cache's settings on the command line and in
/// `BLOBD_*` variables (parsing only: no gateway needed).
struct S3DaemonOptionsTests {
    /// The read cache's variables (the S3 backend's only settings besides `BLOBD_BACKEND`).
    static let cacheVariables: Set<String> = ["BLOBD_CACHE", "BLOBD_CACHE_SIZE", "BLOBD_CACHE_STALENESS"]

    private func outcome(_ arguments: [String], _ environment: [String: String] = [:]) -> DaemonCommandLine.Outcome {
        DaemonCommandLine.parse(arguments, environment: environment)
    }

    @Test func anS3LocationAndTheCacheSettingsComeFromFlagsOrVariables() throws {
        guard case .run(let flags) = outcome(["--backend", "s3://photos/fleet/a/", "--cache", "/var/cache/blobd", "--cache-size", "256M", "--cache-staleness", "2.5"]) else {
            Issue.record("flags refused")
            return
        }
        #expect(flags.backend == .s3 && flags.s3Location == "s3://photos/fleet/a/")
        #expect(flags.cacheFolder == "/var/cache/blobd" && flags.cacheBytes == 256 << 20 && flags.cacheStalenessSeconds == 2.5)

        let environment = ["BLOBD_BACKEND": "s3://photos", "BLOBD_CACHE": "cache", "BLOBD_CACHE_SIZE": "0", "BLOBD_CACHE_STALENESS": "0"]
        guard case .run(let variables) = outcome([], environment) else {
            Issue.record("variables refused")
            return
        }
        #expect(variables.backend == .s3 && variables.s3Location == "s3://photos")
        #expect(variables.cacheFolder == FileManager.default.currentDirectoryPath + "/cache", "a relative folder is taken from the current one")
        #expect(variables.cacheBytes == 0 && variables.cacheStalenessSeconds == 0)
        #expect(Set(DaemonCommandLine.environmentVariables.map(\.variable)).isSuperset(of: Self.cacheVariables))

        guard case .run(let defaults) = outcome(["--backend", "s3://photos"]) else {
            Issue.record("defaults refused")
            return
        }
        #expect(defaults.cacheFolder == nil && defaults.cacheBytes == 1 << 30 && defaults.cacheStalenessSeconds == 0)
        guard case .run(let longest) = outcome(["--backend", "s3://photos", "--cache-staleness", "86400"]) else {
            Issue.record("--cache-staleness 86400 refused")
            return
        }
        #expect(longest.cacheStalenessSeconds == 86_400, "a day is the longest bound (86401 is refused below)")
        guard case .run(let underRoot) = outcome(["--backend", "s3://photos", "--root", "/srv/blobs"]) else {
            Issue.record("--root refused")
            return
        }
        #expect(underRoot.effectiveCacheFolder == "/srv/blobs/s3-cache", "the default cache folder is s3-cache under the root")
        #expect(flags.effectiveCacheFolder == "/var/cache/blobd")
    }

    @Test func mistakesAreUsageErrorsNamingTheSetting() {
        let cases: [([String], [String: String], String)] = [
            (["--backend", "s3://Photos"], [:], "--backend 'Photos' is not a bucket name"),
            (["--backend", "s3://photos/a//b"], [:], "--backend the prefix 'a//b' has an empty, '.' or '..' segment"),
            (["--backend", "s4://photos"], [:], "--backend must be file, memory or s3://BUCKET[/PREFIX]"),
            (["--backend", "s3"], [:], "--backend must be file, memory or s3://BUCKET[/PREFIX]"),
            (["--cache", "/tmp/c"], [:], "--cache is a setting of the S3 read cache: it needs --backend s3://BUCKET[/PREFIX]"),
            ([], ["BLOBD_CACHE_SIZE": "1G"], "BLOBD_CACHE_SIZE is a setting of the S3 read cache"),
            (["--backend", "s3://photos", "--cache-size", "lots"], [:], "--cache-size must be a number of bytes"),
            (["--backend", "s3://photos", "--cache-staleness", "-1"], [:], "--cache-staleness must be a number of seconds from 0 to 86400"),
            (["--backend", "s3://photos", "--cache-staleness", "86401"], [:], "--cache-staleness must be a number of seconds from 0 to 86400"),
        ]
        for (arguments, environment, message) in cases {
            guard case .usageError(let text) = outcome(arguments, environment) else {
                Issue.record("\(arguments) \(environment) was accepted")
                continue
            }
            #expect(text.hasPrefix(message), "\(text)")
        }
    }

    @Test func theHelpTextNamesEverySetting() {
        for word in ["s3://BUCKET[/PREFIX]", "--cache DIR", "--cache-size BYTES", "--cache-staleness SECONDS", "BLOBD_CACHE_SIZE", "BLOBD_CACHE_STALENESS", "emptied at start"] {
            #expect(DaemonCommandLine.usage.contains(word), "\(word)")
        }
    }
}
