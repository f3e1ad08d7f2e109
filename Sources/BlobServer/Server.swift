import BlobStore
import BlobSystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The serving part of the daemon, on a listening socket it is given: the store directory over a
/// backend's catalog, the event log, the blocking-work pools, the event loops and the acceptor.
/// ``Daemon`` adds the process around it (root lock, socket file, signals); tests run it in-process
/// over a backend of their own.
///
/// Threads: the acceptor's, one per event loop (each owns the connections dealt to it), and the
/// pools' (``WorkPools``), on which every store call runs.
final class Server {
    private let loops: [EventLoop]
    private let acceptor: Acceptor

    /// Builds and starts everything; serving begins at once. Store calls run on `pools`.
    init(
        listener: FileDescriptor, catalog: any ServedBackendCatalog, maximumBlobSize: Int64, eventLoopCount: Int,
        heartbeatSeconds: Double, accessLog: AccessLog?, allowedGroup: UInt32?, log: Log, pools: WorkPools = WorkPools()
    ) throws {
        let events = EventLog()
        let metrics = Metrics(shards: max(1, eventLoopCount))
        let policyCounters = PolicyCounters()
        let stores = StoreDirectory(catalog: catalog, maximumBlobSize: maximumBlobSize, log: log) { store in
            // Observed before the store is handed out, so no change is missed; and synchronously by
            // whichever thread commits, so an event is in the log before its writer gets the acknowledgement.
            store.observeChanges {
                // Counted first: whoever sees the event may read the metrics next.
                policyCounters.record($0)
                events.append($0)
            }
            if let warning = (store as? PersistentDataStore)?.syncWarning { log(.error, "store \(store.name): \(warning)") }
        }
        if let fleet = catalog as? FleetCatalog {
            // A bucket event naming a store this daemon has not opened opens it, as a request would.
            // Weakly: the directory holds the catalog, which holds this closure.
            fleet.openStores { [weak stores] name in
                guard let stores, (try? StoreName.validate(name)) != nil else { return }  // gone, or another program's key under the prefix
                do { _ = try stores.existing(name) } catch {
                    log(.error, "bucket event for store '\(name)': cannot open the store: \(error)")
                }
            }
        }
        let router = Router(stores: stores, events: events, metrics: metrics, policyCounters: policyCounters)
        var loops: [EventLoop] = []
        for index in 0..<max(1, eventLoopCount) {
            loops.append(
                try EventLoop(index: index, router: router, pools: pools, log: log, heartbeatInterval: heartbeatSeconds, accessLog: accessLog))
        }
        self.loops = loops
        acceptor = Acceptor(listener: listener, loops: loops, policy: PeerPolicy(ownUserID: getuid(), allowedGroup: allowedGroup), log: log)
        loops.forEach { $0.start() }
        acceptor.start()
    }

    /// Small puts of `store` queued in the loops' lanes, not yet taken by a job (for tests; see
    /// ``EventLoop/queuedSmallPuts(store:)``).
    func queuedSmallPuts(store: String) -> Int {
        loops.reduce(0) { $0 + $1.queuedSmallPuts(store: store) }
    }

    /// Stops accepting, lets the loops finish what is in flight for up to `graceSeconds`, and
    /// returns once they have (or a second after that, when they did not notice).
    func stop(graceSeconds: Double) {
        acceptor.stop()
        let deadline = Date().addingTimeInterval(graceSeconds)
        loops.forEach { $0.drain(until: deadline) }
        // The loops close what is left at the deadline; allow a little longer for them to notice.
        let hardDeadline = deadline.addingTimeInterval(1)
        while Date() < hardDeadline && !(loops.allSatisfy(\.hasFinished) && acceptor.hasFinished) { usleep(10_000) }
    }
}
