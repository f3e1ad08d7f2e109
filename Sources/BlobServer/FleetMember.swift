import BlobStore
import BlobSystem
import Foundation
import S3BlobStore

/// One blobd of a fleet over one bucket: it listens for the gateway's bucket notifications and
/// hands each change under its location to the store it names, which passes other members' changes
/// to its subscribers (docs/SCALE-OUT.md, "Fleet").
///
/// At start it listens first, then removes what an earlier run under the same member name left
/// (a crash leaves its notification entry and topic behind), then creates a persistent topic of its
/// own (`MEMBER-iHEX`, new on every start) pushing to its endpoint and adds the bucket's entry of
/// the same name for the location's prefix. At a clean stop it removes the entry, then the topic,
/// then stops listening. Other members' entries are never touched: on Ceph's gateway each entry is
/// added and removed by its own id.
///
/// Threads: the receiver's (``S3NotificationReceiver``); the handler's thread makes the stores'
/// HEAD requests, never an event loop. Immutable after start.
final class FleetMember: Sendable {
    /// The member's name (the prefix of its topics' names).
    let member: String
    /// This run's topic and notification entry.
    let subscription: S3NotificationSubscription
    /// The URL the gateway POSTs to.
    let endpoint: String
    private let receiver: S3NotificationReceiver
    private let client: S3Client
    private let log: Log
    private let stopped = Locked(false)

    /// Starts listening and subscribes; throws a ``StartupError`` saying what failed.
    init(client: S3Client, location: S3Location, catalog: FleetCatalog, options: FleetEventOptions, socketPath: String, log: Log) throws {
        let layout = location.layout
        let member = FleetEventOptions.topicSafe(options.member ?? Self.defaultMember(socketPath: socketPath))
        let receiver: S3NotificationReceiver
        do {
            receiver = try S3NotificationReceiver(host: options.listenHost, port: options.listenPort) { event in
                guard let (store, identifier) = layout.blob(ofKey: event.key), let change = event.remoteChange(identifier: identifier),
                      let target = catalog.receiverOpening(store)
                else { return }
                target.receiveRemoteChange(change)
            }
        } catch {
            throw StartupError("cannot listen for bucket events on \(options.listenHost):\(options.listenPort): \(error)")
        }
        let endpoint = options.endpoint ?? Self.defaultEndpoint(receiver.address, host: options.listenHost)
        do {
            Self.removeLeftovers(of: member, client: client, log: log)
            let name = "\(member)-i\(String(UInt64(Date().timeIntervalSince1970 * 1000), radix: 16))"
            subscription = try S3NotificationSubscription.subscribe(client, name: name, pushEndpoint: endpoint, keyPrefix: layout.keyPrefix)
        } catch {
            receiver.stop()
            throw StartupError(
                "cannot subscribe to the changes of \(location) at \(client.bucket.endpoint) (fleet member \(member), endpoint \(endpoint)): \(error); "
                    + "an object store without HTTP push notifications (AWS S3) needs --events-listen off, the default")
        }
        self.member = member
        self.endpoint = endpoint
        self.receiver = receiver
        self.client = client
        self.log = log
        log(.info, "fleet member \(member): bucket events for \(location) on \(receiver.address), pushed to \(endpoint) by topic \(subscription.topicARN)")
    }

    /// The member a daemon serving `catalog` runs: one when the catalog is an S3 one (wrapped in a
    /// ``FleetCatalog``) and `--events-listen` is not `off`, else `nil`.
    static func start(for catalog: any ServedBackendCatalog, _ configuration: ServerConfiguration, log: Log) throws -> FleetMember? {
        guard configuration.fleetEvents.isEnabled, let fleet = catalog as? FleetCatalog, let s3 = fleet.wrapped as? S3StoreCatalog else {
            if configuration.backend == .s3 { log(.info, "fleet events off: only changes made through this daemon reach its subscribers (--events-listen [HOST:]PORT turns them on)") }
            return nil
        }
        return try FleetMember(
            client: s3.markers.client, location: s3.markers.location, catalog: fleet, options: configuration.fleetEvents,
            socketPath: configuration.socketPath, log: log)
    }

    /// Removes the notification entry and topic, then stops listening (once; later calls do nothing). Changes made after this are
    /// not seen. Logs (does not throw) when the gateway cannot be told: the entry and topic stay
    /// until this member starts again or an operator removes them.
    func stop() {
        guard stopped.withLock({ state in
            defer { state = true }
            return !state
        }) else { return }
        do {
            try subscription.cancel(client)
        } catch {
            log(.error, "fleet member \(member): cannot remove notification \(subscription.name) and its topic: \(error); they are removed when this member starts again")
        }
        receiver.stop()
    }

    /// What the receiver has seen.
    var counters: S3NotificationReceiver.Counters { receiver.counters }

    /// `blobd-HOST-HASH`: the host name and a hash of the socket path, stable across restarts of
    /// one daemon and different for two daemons on one machine.
    static func defaultMember(socketPath: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in socketPath.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "host"
        return "blobd-\(host)-\(String(hash & 0xffff_ffff, radix: 16))"
    }

    static func defaultEndpoint(_ address: TCPAddress, host: String) -> String {
        let wildcard = host == "0.0.0.0" || host == "::" || host == "[::]"
        return wildcard ? "http://127.0.0.1:\(address.port)" : "http://\(address)"
    }

    /// Removes the entries (and their topics) of earlier runs of `member`: `MEMBER-iHEX`. Only one
    /// daemon runs under a name at a time (its socket path is part of the default name), so none of
    /// them is alive.
    private static func removeLeftovers(of member: String, client: S3Client, log: Log) {
        guard let entries = try? S3NotificationSubscription.entries(client) else { return }
        for entry in entries where isRun(entry.id, of: member) {
            do {
                try S3NotificationSubscription(name: entry.id, topicARN: entry.topicARN).cancel(client)
                log(.info, "fleet member \(member): removed notification \(entry.id) left by an earlier run")
            } catch {
                log(.error, "fleet member \(member): cannot remove notification \(entry.id) left by an earlier run: \(error)")
            }
        }
    }

    static func isRun(_ id: String, of member: String) -> Bool {
        let prefix = member + "-i"
        guard id.hasPrefix(prefix) else { return false }
        let rest = id.dropFirst(prefix.count)
        return !rest.isEmpty && rest.allSatisfy(\.isHexDigit)
    }
}
