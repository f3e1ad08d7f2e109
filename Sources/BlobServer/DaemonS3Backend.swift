import BlobStore
import BlobSystem
import Foundation
import S3BlobStore

/// `blobd --backend s3://BUCKET[/PREFIX]`: the catalog of the stores in the bucket, read through
/// the daemon's read cache (docs/SCALE-OUT.md, "Read cache").
enum DaemonS3Backend {
    /// Resolves the AWS configuration, checks the bucket with one request, takes the cache folder
    /// and makes the catalog. Throws a ``StartupError`` naming what is wrong (the location, a
    /// missing credential, an unreachable endpoint, a missing bucket, a cache folder in use).
    static func catalog(_ configuration: ServerConfiguration, log: Log) throws -> S3StoreCatalog {
        let setup: S3BackendSetup
        do {
            setup = try S3BackendSetup(
                location: configuration.s3Location ?? "", environment: .process, checkBucket: true, transport: transport(configuration))
        } catch {
            throw StartupError(error.description)
        }
        log(.info, "backend \(setup.location): \(setup.configuration)")
        let timeouts = setup.client.transport.configuration
        log(.info, "S3 timeouts: \(timeouts.firstByteTimeout.secondsText) for the first answer byte and between pieces of a transfer, "
            + "\(timeouts.connectTimeout.secondsText) to connect; \(timeouts.maximumConnectionsPerEndpoint) requests in flight at most")
        var cache: S3ReadCache?
        if configuration.cacheBytes > 0 {
            let folder = configuration.effectiveCacheFolder
            let settings = S3ReadCacheConfiguration(
                folder: folder, capacityBytes: Int64(configuration.cacheBytes), stalenessSeconds: configuration.cacheStalenessSeconds,
                log: { line in log(.error, line) })
            do { cache = try S3ReadCache(settings) } catch { throw StartupError("\(error)") }
            log(.info, "read cache \(folder) (emptied), \(settings.capacityBytes) bytes, blobs up to \(settings.maximumEntryBytes) bytes, "
                + "staleness \(settings.stalenessSeconds) s")
        } else {
            log(.info, "read cache off: every read goes to S3")
        }
        return catalog(setup, cache: cache)
    }

    /// Starts the sweep of the abandoned multipart uploads of the stores under the location
    /// (docs/SCALE-OUT.md, "Puts"): a round at once and one every period, on a thread of its own.
    /// `nil` when the catalog is not on S3 or the period is 0. Never throws: a round that fails is
    /// logged and tried again a period later.
    static func startUploadSweeper(for catalog: any ServedBackendCatalog, _ configuration: ServerConfiguration, log: Log) -> S3StaleUploadSweeper? {
        let s3 = ((catalog as? FleetCatalog)?.wrapped ?? catalog) as? S3StoreCatalog
        guard let s3 else { return nil }
        guard let schedule = configuration.uploadSweep.schedule else {
            log(.info, "upload sweep off: abandoned multipart uploads under \(s3.markers.location) stay until aborted otherwise")
            return nil
        }
        return startUploadSweeper(s3.markers, schedule: schedule, log: log)
    }

    /// Starts the sweep of the stores `markers` records with `schedule`, logging to `log`.
    static func startUploadSweeper(_ markers: S3StoreMarkers, schedule: S3StaleUploadSweeper.Schedule, log: Log) -> S3StaleUploadSweeper {
        let sweeper = S3StaleUploadSweeper(stores: markers, schedule: schedule) { severity, line in
            log(severity == .error ? .error : .info, line)
        }
        log(.info, "upload sweep of \(markers.backendName): at start and every \(schedule.period.components.seconds) s, aborting each store's "
            + "unfinished multipart uploads initiated more than \(schedule.age.components.seconds) s ago")
        sweeper.start()
        return sweeper
    }

    /// The S3 transport's settings for `configuration` (its ``ServerConfiguration/s3TimeoutSeconds``).
    static func transport(_ configuration: ServerConfiguration) -> TransportConfiguration {
        TransportConfiguration(timeout: .milliseconds(Int64((configuration.s3TimeoutSeconds * 1000).rounded())))
    }

    /// blobd on S3's blocking-work pools. A get or put on S3 holds its thread while it waits for the
    /// object store, so that a stalled object store holds up no other request:
    /// - quick threads: one for each request the transport lets in flight, and the usual number
    ///   more. With only the usual number, as many stalled requests would hold every thread and
    ///   queue all other gets and puts (cache hits too) behind their timeouts; with these, the
    ///   transport's limit is met first, and a request beyond it fails `503` within the connect
    ///   timeout (waiting for a free connection) while the rest still find a thread;
    /// - each small put a job of its own: in a shared one, the puts behind a stalled one would wait
    ///   for its timeout.
    static func workPools(for transport: TransportConfiguration) -> WorkPools {
        WorkPools(quickThreads: transport.maximumConnectionsPerEndpoint + WorkPools.defaultQuickThreads, smallPutsShareAJob: false)
    }

    /// The catalog of `setup`'s stores, read through `cache`.
    static func catalog(_ setup: S3BackendSetup, cache: S3ReadCache?, spoolFolder: URL? = nil) -> S3StoreCatalog {
        S3StoreCatalog(markers: setup.markers, cache: cache) { name in setup.store(name, spoolFolder: spoolFolder) }
    }
}
