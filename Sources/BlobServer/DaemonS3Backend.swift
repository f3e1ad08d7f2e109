import BlobStore
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
            setup = try S3BackendSetup(location: configuration.s3Location ?? "", environment: .process, checkBucket: true)
        } catch {
            throw StartupError(error.description)
        }
        log(.info, "backend \(setup.location): \(setup.configuration)")
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

    /// The catalog of `setup`'s stores, read through `cache`.
    static func catalog(_ setup: S3BackendSetup, cache: S3ReadCache?, spoolFolder: URL? = nil) -> S3StoreCatalog {
        S3StoreCatalog(markers: setup.markers, cache: cache) { name in setup.store(name, spoolFolder: spoolFolder) }
    }
}
