@testable import BlobServer
import BlobStore
import BlobSystem
import BlobTestSupport
import Dispatch
import Foundation
import S3BlobStore
import Testing

/// Four blobds over one bucket and prefix, against a real Ceph gateway (`.ci/ceph up DIR`, then
/// source `DIR/env`): each with its own socket, read cache and fleet member (receiver, topic,
/// notification entry), run in-process as `blobd --backend s3://BUCKET/PREFIX` runs them.
@Suite(.serialized) struct FleetTests {
    static let skipReason = "FleetTests: skipped, no AWS_ENDPOINT_URL and AWS_ACCESS_KEY_ID (run .ci/ceph up DIR and source DIR/env)"

    static var bucket: String? {
        let environment = ProcessInfo.processInfo.environment
        guard environment["AWS_ENDPOINT_URL"] != nil, environment["AWS_ACCESS_KEY_ID"] != nil else { return nil }
        return environment["BLOB_S3_BUCKET"] ?? "blobstore-ci"
    }

    /// One daemon of the fleet.
    final class Member {
        let folder = TempFolder()
        let socketPath: String
        let server: Server
        let fleet: FleetMember
        private let listener: FileDescriptor

        init(index: Int, location: String) throws {
            socketPath = folder.path + "/blobd.sock"
            // As blobd --backend s3://… --cache DIR --events-member NAME composes them.
            var configuration = ServerConfiguration(socketPath: socketPath)
            configuration.backend = .s3
            configuration.s3Location = location
            configuration.fleetEvents.isEnabled = true  // --events-listen 127.0.0.1:0
            configuration.fleetEvents.member = "fleet-test-\(index)"
            let log = Log(level: .error)
            configuration.cacheFolder = folder.path + "/cache"
            let catalog = FleetCatalog(try DaemonS3Backend.catalog(configuration, log: log))
            listener = try UnixSocket.listen(path: socketPath, permissions: 0o600)
            fleet = try #require(try FleetMember.start(for: catalog, configuration, log: log))
            server = try Server(
                listener: listener, catalog: catalog, maximumBlobSize: 1 << 30, eventLoopCount: 1, heartbeatSeconds: 15,
                accessLog: nil, allowedGroup: nil, log: log)
        }

        func stop() {
            fleet.stop()
            server.stop(graceSeconds: 1)
            try? listener.close()
        }

        func request(_ method: String, _ target: String, headers: [String: String] = [:], body: [UInt8]? = nil) throws -> RawResponse {
            try RawClient(path: socketPath).request(method, target, headers: headers, body: body)
        }
    }

    /// Reads one daemon's `/v1/events?store=` stream on a thread of its own and notes when each
    /// event arrived.
    final class EventStream {
        struct Arrival: Sendable {
            var kind: String
            var identifier: String
            var at: ContinuousClock.Instant
        }

        let arrivals = Locked<[Arrival]>([])
        private let client: RawClient

        /// Follows `store`'s changes, or every store's when `store` is nil.
        init(_ member: Member, store: String?) throws {
            client = try RawClient(path: member.socketPath)
            try client.send("GET /v1/events\(store.map { "?store=\($0)" } ?? "") HTTP/1.1\r\nHost: blobd\r\n\r\n")
            let (fd, arrivals) = (client.fd, arrivals)
            Thread {
                var pending: [UInt8] = []
                var chunk = [UInt8](repeating: 0, count: 65536)
                while true {
                    guard let count = try? chunk.withUnsafeMutableBytes({ try fd.receive(into: $0) }) else { continue }  // SO_RCVTIMEO
                    if count == 0 { return }
                    pending += chunk[..<count]
                    while let end = pending.firstRange(of: Array("\n\n".utf8)) {
                        let frame = String(decoding: pending[..<end.lowerBound], as: UTF8.self)
                        pending.removeSubrange(..<end.upperBound)
                        var kind = "", data = ""
                        for line in frame.split(separator: "\n") {
                            if line.hasPrefix("event: ") { kind = String(line.dropFirst(7)) }
                            if line.hasPrefix("data: ") { data = String(line.dropFirst(6)) }
                        }
                        guard !kind.isEmpty, let object = try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] else { continue }
                        let identifier = (object["identifier"] as? String) ?? ((object["blob"] as? [String: Any])?["identifier"] as? String) ?? ""
                        let now = ContinuousClock.now
                        arrivals.withLock { $0.append(Arrival(kind: kind, identifier: identifier, at: now)) }
                    }
                }
            }.start()
        }

        /// Stops reading (the thread ends at the end of stream).
        func close() { _ = shutdown(client.fd.rawValue, Int32(SHUT_RDWR)) }

        /// When `kind` of `identifier` arrived, waiting up to `seconds` for it.
        func arrival(_ kind: String, _ identifier: String, within seconds: Double) -> ContinuousClock.Instant? {
            let deadline = Date().addingTimeInterval(seconds)
            repeat {
                if let found = arrivals.withLock({ $0.first { $0.kind == kind && $0.identifier == identifier } }) { return found.at }
                usleep(5_000)
            } while Date() < deadline
            return nil
        }
    }

    /// Starts four members under a fresh prefix, runs `body`, and stops them.
    static func withFleet(_ body: ([Member]) throws -> Void) throws {
        guard let bucket else {
            print(skipReason)
            return
        }
        let location = "s3://\(bucket)/fleet-test-\(UInt32.random(in: 0...UInt32.max))"
        var members: [Member] = []
        defer { for member in members { member.stop() } }
        for index in 0..<4 { members.append(try Member(index: index, location: location)) }
        try body(members)
    }

    @Test func aWriteThroughOneIsReadThroughEveryOtherAtOnce() async throws { try await onOwnThread { try Self().aWriteThroughOneIsReadThroughEveryOtherAtOnceBlocking() } }

    func aWriteThroughOneIsReadThroughEveryOtherAtOnceBlocking() throws {
        try Self.withFleet { members throws in
            for round in 0..<3 {
                let writer = members[round % members.count]
                let body = Array("version \(round) from member \(round % members.count)".utf8)
                #expect(try writer.request("PUT", "/v1/stores/shared/blobs/doc", body: body).status == (round == 0 ? 201 : 200))
                for reader in members {
                    let response = try reader.request("GET", "/v1/stores/shared/blobs/doc")
                    #expect(response.status == 200)
                    #expect(response.body == body, "every member reads the latest version at once (its cache validates by ETag)")
                }
            }
        }
    }

    @Test func sixteenCreateOnlyPutsOfOneIdentifierThroughFourDaemonsHaveOneWinner() async throws { try await onOwnThread { try Self().sixteenCreateOnlyPutsOfOneIdentifierThroughFourDaemonsHaveOneWinnerBlocking() } }

    func sixteenCreateOnlyPutsOfOneIdentifierThroughFourDaemonsHaveOneWinnerBlocking() throws {
        try Self.withFleet { members throws in
            let sockets = members.map(\.socketPath)
            for round in 0..<3 {
                let statuses = Locked<[Int]>([])
                let group = DispatchGroup()
                for index in 0..<16 {
                    group.enter()
                    Thread {
                        defer { group.leave() }
                        let status = (try? RawClient(path: sockets[index % sockets.count]).request(
                            "PUT", "/v1/stores/race/blobs/only-\(round)", headers: ["If-None-Match": "*"],
                            body: Array("writer \(index)".utf8)).status) ?? -1
                        statuses.withLock { $0.append(status) }
                    }.start()
                }
                group.wait()
                let seen = statuses.withLock { $0 }
                #expect(seen.filter { $0 == 201 || $0 == 200 }.count == 1, "round \(round): \(seen.sorted())")
                #expect(seen.filter { $0 == 412 }.count == 15, "round \(round): \(seen.sorted())")
                let winner = try members[0].request("GET", "/v1/stores/race/blobs/only-\(round)")
                for member in members.dropFirst() {
                    #expect(try member.request("GET", "/v1/stores/race/blobs/only-\(round)").body == winner.body)
                }
            }
        }
    }

    @Test func aRemoveThroughOneIsSeenByAll() async throws { try await onOwnThread { try Self().aRemoveThroughOneIsSeenByAllBlocking() } }

    func aRemoveThroughOneIsSeenByAllBlocking() throws {
        try Self.withFleet { members throws in
            #expect(try members[0].request("PUT", "/v1/stores/shared/blobs/gone", body: Array("x".utf8)).status == 201)
            for member in members { #expect(try member.request("GET", "/v1/stores/shared/blobs/gone").status == 200) }
            #expect(try members[1].request("DELETE", "/v1/stores/shared/blobs/gone").status == 204)
            for member in members {
                #expect(try member.request("GET", "/v1/stores/shared/blobs/gone").status == 404)
                #expect(try member.request("HEAD", "/v1/stores/shared/blobs/gone").status == 404)
            }
        }
    }

    @Test func changeEventsReachTheSubscribersOfEveryDaemon() async throws { try await onOwnThread { try Self().changeEventsReachTheSubscribersOfEveryDaemonBlocking() } }

    func changeEventsReachTheSubscribersOfEveryDaemonBlocking() throws {
        try Self.withFleet { members throws in
            // Every member opens the store (a daemon routes bucket events to the stores it has opened).
            #expect(try members[0].request("PUT", "/v1/stores/feed/blobs/seed", body: Array("seed".utf8)).status == 201)
            for member in members { #expect(try member.request("GET", "/v1/stores/feed/blobs/seed").status == 200) }
            let streams = try members.map { try EventStream($0, store: "feed") }
            defer { streams.forEach { $0.close() } }

            // Warm-up: the gateway's first delivery on a new topic takes up to ~30 s.
            #expect(try members[0].request("PUT", "/v1/stores/feed/blobs/warm-up", body: Array("w".utf8)).status == 201)
            for (index, stream) in streams.enumerated() {
                #expect(stream.arrival("put", "warm-up", within: 120) != nil, "member \(index) never saw the warm-up put")
            }

            var delays: [Duration] = []
            let count = Int(ProcessInfo.processInfo.environment["FLEET_EVENT_COUNT"] ?? "") ?? 50
            for index in 0..<count {
                let writer = index % members.count
                let identifier = "event-\(index)"
                let removing = index % 5 == 4
                if removing {
                    #expect(try members[writer].request("DELETE", "/v1/stores/feed/blobs/event-\(index - 1)").status == 204)
                } else {
                    #expect(try members[writer].request("PUT", "/v1/stores/feed/blobs/\(identifier)", body: Array("\(index)".utf8)).status == 201)
                }
                let acknowledged = ContinuousClock.now
                let (kind, name) = removing ? ("removed", "event-\(index - 1)") : ("put", identifier)
                for (reader, stream) in streams.enumerated() {
                    guard let at = stream.arrival(kind, name, within: 30) else {
                        Issue.record("member \(reader) never saw \(kind) \(name) made through member \(writer)")
                        continue
                    }
                    if reader != writer { delays.append(max(.zero, at - acknowledged)) }
                }
            }
            // A store only one member has served: the others open it when its first change's event
            // comes, so their subscribers to every store see it (as `blob watch` does).
            let everyStore = try members.dropFirst().map { try EventStream($0, store: nil) }
            defer { everyStore.forEach { $0.close() } }
            #expect(try members[0].request("PUT", "/v1/stores/unseen/blobs/first", body: Array("1".utf8)).status == 201)
            for (index, stream) in everyStore.enumerated() {
                #expect(stream.arrival("put", "first", within: 30) != nil, "member \(index + 1), never asked for store 'unseen', did not pass on its put")
            }

            // Each member saw each change once: its own when it made it, the others' from the gateway.
            for (index, stream) in streams.enumerated() {
                let arrivals = stream.arrivals.withLock { $0 }.filter { $0.identifier.hasPrefix("event-") }
                let keys = arrivals.map { "\($0.kind) \($0.identifier)" }
                let repeated = Dictionary(grouping: keys, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
                #expect(repeated.isEmpty, "member \(index) got these changes more than once: \(repeated)")
            }
            let sorted = delays.sorted()
            if !sorted.isEmpty {
                let median = sorted[sorted.count / 2], p90 = sorted[min(sorted.count - 1, sorted.count * 9 / 10)]
                print("FleetTests: \(sorted.count) remote change events, delay from the writer's acknowledgement to another daemon's subscriber: "
                    + "median \(median.milliseconds) ms, p90 \(p90.milliseconds) ms, max \(sorted.last!.milliseconds) ms")
            }
        }
    }

    @Test func aCleanStopRemovesItsEntryAndARestartRemovesWhatACrashedRunLeft() async throws { try await onOwnThread { try Self().aCleanStopRemovesItsEntryAndARestartRemovesWhatACrashedRunLeftBlocking() } }

    func aCleanStopRemovesItsEntryAndARestartRemovesWhatACrashedRunLeftBlocking() throws {
        guard let bucket = Self.bucket else {
            print(Self.skipReason)
            return
        }
        let folder = TempFolder()
        let location = "s3://\(bucket)/fleet-test-\(UInt32.random(in: 0...UInt32.max))"
        let setup = try S3BackendSetup(location: location, environment: .process, checkBucket: true)
        let catalog = FleetCatalog(DaemonS3Backend.catalog(setup, cache: nil))
        var configuration = ServerConfiguration(socketPath: folder.path + "/blobd.sock")
        configuration.backend = .s3
        configuration.s3Location = location
        let member = "fleet-test-restart-\(UInt16.random(in: 0...UInt16.max))"
        configuration.fleetEvents.isEnabled = true
        configuration.fleetEvents.member = member
        let ids = { Set(try S3NotificationSubscription.entries(setup.client).map(\.id)) }

        // A run that crashed: its entry and topic are still there.
        let crashed = try S3NotificationSubscription.subscribe(setup.client, name: "\(member)-i1", pushEndpoint: "http://127.0.0.1:9", keyPrefix: "x/")
        let other = try S3NotificationSubscription.subscribe(setup.client, name: "\(member)-other-i1", pushEndpoint: "http://127.0.0.1:9", keyPrefix: "x/")
        defer { try? other.cancel(setup.client) }
        #expect(try ids().contains(crashed.name))

        let restarted = try #require(try FleetMember.start(for: catalog, configuration, log: Log(level: .error)))
        var now = try ids()
        #expect(!now.contains(crashed.name), "the restarted member removed what its crashed run left")
        #expect(now.contains(other.name), "another member's entry stays")
        #expect(now.contains(restarted.subscription.name))
        let topics = try setup.client.send(setup.client.bucket.listTopics().request, body: .bytes(setup.client.bucket.listTopics().body), context: setup.client.bucket.context("ListTopics"))
        #expect(try !S3TopicAnswers.topicARNs(topics.body).contains(crashed.topicARN), "and its topic")

        restarted.stop()
        now = try ids()
        #expect(!now.contains(restarted.subscription.name), "a clean stop removes the member's entry")
        #expect(now.contains(other.name))
    }
}

extension Duration {
    fileprivate var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
