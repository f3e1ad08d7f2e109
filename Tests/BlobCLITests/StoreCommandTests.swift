@testable import BlobCLI
import BlobStore
import Foundation
import Testing

/// Cache mode in `blob` (docs/CLI.md, "store" and "Units"): the human units of sizes and
/// durations, and `store create|set|show`, `stores` and `put --ttl/--expires` against blobd.
@Suite("blob store and its units")
struct StoreUnitTests {
    @Test func sizesArePowersOf1024() throws {
        #expect(try PolicyUnits.size("2G", option: "max-size", command: "store") == 2_147_483_648)
        #expect(try PolicyUnits.size("512M", option: "max-size", command: "store") == 536_870_912)
        #expect(try PolicyUnits.size("1.5K", option: "max-size", command: "store") == 1536)
        #expect(try PolicyUnits.size("1t", option: "max-size", command: "store") == 1 << 40)
        #expect(try PolicyUnits.size("2GiB", option: "max-size", command: "store") == 2_147_483_648)
        #expect(try PolicyUnits.size("4096", option: "max-size", command: "store") == 4096)
        for bad in ["", "G", "2X", "-1", "0", "1e3", ".5G", "2 G B", "9999999T"] {
            #expect(throws: UsageError.self, "\(bad)") { try PolicyUnits.size(bad, option: "max-size", command: "store") }
        }
    }

    @Test func durationsTakeSecondsMinutesHoursDaysAndWeeks() throws {
        #expect(try PolicyUnits.duration("7d", option: "ttl", command: "store") == .seconds(604_800))
        #expect(try PolicyUnits.duration("2w", option: "ttl", command: "store") == .seconds(1_209_600))
        #expect(try PolicyUnits.duration("1.5h", option: "ttl", command: "store") == .seconds(5400))
        #expect(try PolicyUnits.duration("15m", option: "ttl", command: "store") == .seconds(900))
        #expect(try PolicyUnits.duration("90", option: "ttl", command: "store") == .seconds(90))
        #expect(try PolicyUnits.duration("30s", option: "ttl", command: "store") == .seconds(30))
        for bad in ["", "7y", "0s", "-1h", "h", "5000000000"] {
            #expect(throws: UsageError.self, "\(bad)") { try PolicyUnits.duration(bad, option: "ttl", command: "store") }
        }
        #expect(PolicyUnits.describe(.seconds(604_800)) == "1w")
        #expect(PolicyUnits.describe(.seconds(5400)) == "1h 30m")
        #expect(PolicyUnits.describe(.milliseconds(1500)) == "1.5s")
    }

    @Test func badValuesAreUsageErrorsWithAHint() async throws {
        let folder = TempFolder()
        let size = await runInProcess(["--root", folder.path, "store", "create", "photos", "--max-size", "2X"])
        #expect(size.status == 64)
        #expect(size.error == "Error: '--max-size 2X' is not a size: give bytes, or a number with K, M, G or T (powers of 1024), e.g. 2G. See 'blob help store'.\n")
        let ttl = await runInProcess(["--root", folder.path, "put", "photos/a", "--ttl", "7y"])
        #expect(ttl.status == 64 && ttl.error.hasPrefix("Error: '--ttl 7y' is not a duration: give seconds, or a number with s, m, h, d or w"), "\(ttl.error)")
        let expires = await runInProcess(["--root", folder.path, "put", "photos/a", "--expires", "soon"])
        #expect(expires.status == 64 && expires.error.hasPrefix("Error: '--expires soon' is not a date"), "\(expires.error)")
        let both = await runInProcess(["--root", folder.path, "put", "photos/a", "--ttl", "1h", "--expires", "never"])
        #expect(both.status == 64 && both.error.hasPrefix("Error: '--ttl' and '--expires' cannot be used together"))
        let action = await runInProcess(["--root", folder.path, "store", "drop", "photos"])
        #expect(action.status == 64 && action.error.hasPrefix("Error: unknown action 'drop'; use create, set or show"))
        let empty = await runInProcess(["--root", folder.path, "store", "set", "photos"])
        #expect(empty.status == 64 && empty.error.hasPrefix("Error: 'store set' needs at least one of --max-size, --max-count, --ttl"))
        let show = await runInProcess(["--root", folder.path, "store", "show", "photos", "--ttl", "1h"])
        #expect(show.status == 64)
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/photos"), "nothing was created")
    }

    @Test func putParsesItsExpiry() throws {
        let ttl = try PutCommand(ArgumentParser.parse(["s/a", "--ttl", "1h"], spec: PutCommand.spec))
        #expect(ttl.options.expiry == .after(.seconds(3600)))
        let never = try PutCommand(ArgumentParser.parse(["s/a", "--expires", "never"], spec: PutCommand.spec))
        #expect(never.options.expiry == .never)
        let day = try PutCommand(ArgumentParser.parse(["s/a", "--expires", "2026-12-01"], spec: PutCommand.spec))
        #expect(day.options.expiry == .at(Date(timeIntervalSince1970: 1_796_083_200)))
        let plain = try PutCommand(ArgumentParser.parse(["s/a"], spec: PutCommand.spec))
        #expect(plain.options.expiry == .storeDefault)
    }

    @Test func expiryIsShownByStatLsAndWatch() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        var metadata = BlobMetadata(
            identifier: "a", size: 5, contentType: "text/plain", etag: ETag("0123456789abcdef")!, created: date, modified: date)
        let plain = LsCommand.table([metadata], header: true, utcOffset: 0)
        #expect(!plain.contains("EXPIRES") && !Formatting.metadataBlock(metadata, store: "s", utcOffset: 0).contains("Expires:"))
        metadata.expires = date.addingTimeInterval(3600)
        #expect(Formatting.metadataBlock(metadata, store: "s", utcOffset: 0).contains("Expires:       2023-11-14 23:13:20"))
        #expect(JSONOutput.metadata(metadata, store: "s").serialized().hasSuffix(#","metadata":{},"expires":"2023-11-14T23:13:20.000Z"}"#))
        var other = metadata
        other.identifier = "b"
        other.expires = nil
        #expect(LsCommand.table([metadata, other], header: true, utcOffset: 0) == """
                  SIZE  MODIFIED             TYPE                      EXPIRES              IDENTIFIER
                   5 B  2023-11-14 22:13:20  text/plain                2023-11-14 23:13:20  a
                   5 B  2023-11-14 22:13:20  text/plain                -                    b
            """)
        let expired = BlobChange(sequence: 14, store: "s", kind: .removed(identifier: "a"), date: date, reason: .expired)
        let evicted = BlobChange(sequence: 15, store: "s", kind: .removed(identifier: "b"), date: date, reason: .evicted)
        #expect(WatchCommand.line(expired, utcOffset: 0).hasPrefix("2023-11-14 22:13:20  #14       expired    "))
        #expect(WatchCommand.line(evicted, utcOffset: 0).hasPrefix("2023-11-14 22:13:20  #15       evicted    "))
        #expect(JSONOutput.change(expired).serialized().hasSuffix(#""kind":"removed","identifier":"a","reason":"expired"}"#))
        #expect(JSONOutput.change(evicted).serialized().hasSuffix(#""kind":"removed","identifier":"b","reason":"evicted"}"#))
    }

    @Test func aStoreIsCreatedWithItsPolicyOnAFolder() async throws {
        let folder = TempFolder()
        let created = await runInProcess(["--root", folder.path, "store", "create", "photos", "--max-size", "2G", "--max-count", "100", "--ttl", "7d"])
        #expect(created.status == 0, "\(created.error)")
        #expect(created.outputText.contains("0 B of 2.0 GiB (0%)") && created.outputText.contains("0 of 100 (0%)") && created.outputText.contains("1w"))
        #expect(FileManager.default.fileExists(atPath: folder.path + "/photos"))
        let missing = await runInProcess(["--root", folder.path, "store", "set", "nosuch", "--ttl", "1h"])
        #expect(missing.status == 2 && missing.error.contains("store 'nosuch' not found"))
    }

    /// CLI.md, "stores": with `--root` too, a store with a limit shows it after its usage, and the
    /// TTL column appears because one store has a default time to live.
    @Test func storesShowsLimitsOnAFolder() async throws {
        let folder = TempFolder()
        #expect(await runInProcess(["--root", folder.path, "store", "create", "logs", "--max-count", "1000", "--ttl", "1d"]).status == 0)
        #expect(await runInProcess(["--root", folder.path, "store", "create", "photos", "--max-size", "2G"]).status == 0)
        let file = folder.path + "/content"
        try Data(repeating: 1, count: 2048).write(to: URL(fileURLWithPath: file))
        #expect(await runInProcess(["--root", folder.path, "put", "photos/a", file]).status == 0)
        #expect(await runInProcess(["--root", folder.path, "put", "photos/b", file]).status == 0)
        #expect(await runInProcess(["--root", folder.path, "put", "plain/c", file]).status == 0)
        let stores = await runInProcess(["--root", folder.path, "stores"])
        #expect(stores.status == 0, "\(stores.error)")
        #expect(stores.outputText == """
            NAME        COUNT               SIZE  TTL
            logs    0 / 1,000                0 B   1d
            photos          2  4.0 KiB / 2.0 GiB    -
            plain           1            2.0 KiB    -

            """, "\(stores.outputText)")
        let json = await runInProcess(["--root", folder.path, "--json", "stores"])
        let listed = try #require(try JSONSerialization.jsonObject(with: json.output) as? [String: Any])
        let entries = try #require(listed["stores"] as? [[String: Any]])
        #expect(entries.map { $0["name"] as? String } == ["logs", "photos", "plain"])
        #expect(entries[0]["maxCount"] as? Int == 1000 && entries[0]["defaultTTL"] as? Int == 86_400 && entries[0]["maxBytes"] is NSNull)
        #expect(entries[1]["maxBytes"] as? Int == 2_147_483_648 && entries[1]["maxCount"] is NSNull)
    }

    /// CLI.md, "store": `create` on an existing store gives it exactly the limits given, lifting
    /// those it leaves out (unlike `set`, which keeps them).
    @Test func createAgainLiftsTheLimitsItLeavesOut() async throws {
        let folder = TempFolder()
        #expect(await runInProcess(["--root", folder.path, "store", "create", "photos", "--max-count", "100", "--ttl", "7d"]).status == 0)
        let again = await runInProcess(["--root", folder.path, "store", "create", "photos", "--max-size", "1G"])
        #expect(again.status == 0, "\(again.error)")
        let store = try PersistentDataStore(readingOnly: "photos", root: URL(fileURLWithPath: folder.path))
        #expect(try await store.policy() == StorePolicy(maximumBytes: 1 << 30))
        let shown = await runInProcess(["--root", folder.path, "--json", "store", "show", "photos"])
        let policy = try #require((try JSONSerialization.jsonObject(with: shown.output) as? [String: Any])?["policy"] as? [String: Any])
        #expect(policy["maxBytes"] as? Int == 1 << 30 && policy["maxCount"] is NSNull && policy["defaultTTL"] is NSNull, "\(policy)")
    }
}

@Suite(
    "blob store against blobd", .serialized,
    .enabled(if: BlobBinary.url != nil && BlobdBinary.url != nil, "blob or blobd binary not built; run `swift build` first"))
struct StoreCommandDaemonTests {
    @Test func storeCommandsSetAndShowThePolicyThroughTheDaemon() throws {
        let daemon = try DaemonProcess(extraArguments: ["--backend", "memory"])
        defer { daemon.terminate() }
        func blob(_ arguments: [String], input: Data? = nil) throws -> ProcessRun {
            try runBlob(["--socket", daemon.socketPath] + arguments, input: input)
        }
        let created = try blob(["store", "create", "photos", "--max-size", "2G", "--max-count", "100", "--ttl", "7d"])
        #expect(created.status == 0, "\(created.errorText)")
        #expect(try blob(["put", "photos/a", "-", "--ttl", "1h"], input: Data(repeating: 1, count: 2048)).status == 0)
        #expect(try blob(["put", "photos/b", "-", "--expires", "never"], input: Data("b".utf8)).status == 0)

        let shown = try blob(["store", "show", "photos"])
        #expect(shown.status == 0)
        #expect(shown.outputText == """
            Store:        photos
            Size:         2.0 KiB of 2.0 GiB (0%)
            Blobs:        2 of 100 (2%)
            Default TTL:  1w

            """, "\(shown.outputText)")
        let json = try #require(try JSONSerialization.jsonObject(with: blob(["--json", "store", "show", "photos"]).output) as? [String: Any])
        let policy = try #require(json["policy"] as? [String: Any])
        #expect(json["count"] as? Int == 2 && policy["maxBytes"] as? Int == 2_147_483_648 && policy["maxCount"] as? Int == 100 && policy["defaultTTL"] as? Int == 604_800)

        // `set` changes only what it is given; `none` lifts a limit.
        #expect(try blob(["store", "set", "photos", "--ttl", "none", "--max-count", "none"]).status == 0)
        let changed = try blob(["store", "show", "photos"]).outputText
        #expect(changed.contains("2 (no limit)") && changed.contains("of 2.0 GiB") && changed.contains("none (blobs never expire"), "\(changed)")
        let missing = try blob(["store", "set", "nosuch", "--ttl", "1h"])
        #expect(missing.status == 2 && missing.errorText.contains("store 'nosuch' not found"), "\(missing.errorText)")
        #expect(try blob(["store", "show", "nosuch"]).status == 2)
        #expect(try blob(["stores"]).outputText.contains("nosuch") == false, "a refused set creates nothing")

        #expect(try blob(["store", "create", "logs", "--max-count", "1000", "--ttl", "1d"]).status == 0)
        let stores = try blob(["stores"])
        #expect(stores.outputText == """
            NAME        COUNT               SIZE  TTL
            logs    0 / 1,000                0 B   1d
            photos          2  2.0 KiB / 2.0 GiB    -

            """, "\(stores.outputText)")
        let listed = try #require(try JSONSerialization.jsonObject(with: blob(["--json", "stores"]).output) as? [String: Any])
        let first = try #require((listed["stores"] as? [[String: Any]])?.first)
        #expect(first["name"] as? String == "logs" && first["maxCount"] as? Int == 1000 && first["defaultTTL"] as? Int == 86_400 && first["maxBytes"] is NSNull)

        // `create` on an existing store lifts what it leaves out: here the count limit and the TTL.
        #expect(try blob(["store", "create", "logs", "--max-size", "1M"]).status == 0)
        let recreated = try #require(try JSONSerialization.jsonObject(with: blob(["--json", "store", "show", "logs"]).output) as? [String: Any])
        let lifted = try #require(recreated["policy"] as? [String: Any])
        #expect(lifted["maxBytes"] as? Int == 1 << 20 && lifted["maxCount"] is NSNull && lifted["defaultTTL"] is NSNull, "\(lifted)")
    }
}
