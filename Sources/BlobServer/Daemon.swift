import BlobStore
import BlobSystem
import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's lifecycle: claim the root, place the socket, serve, and shut down cleanly on SIGTERM/SIGINT.
package enum Daemon {
    /// Runs the daemon until a signal stops it; returns the process exit status
    /// (0 after a clean shutdown, 1 when it cannot start). Blocks the calling thread.
    package static func run(_ configuration: ServerConfiguration) -> Int32 {
        let log = Log(level: configuration.logLevel, format: configuration.logFormat)
        do {
            try serve(configuration, log: log)
            return 0
        } catch {
            log.always(.error, "\(error)")
            return 1
        }
    }

    /// Each connection costs a descriptor; the usual soft limit (1024) would refuse clients long before
    /// memory runs short, so take the hard limit, as nginx's `worker_rlimit_nofile` does.
    private static func raiseOpenFileLimit(log: Log) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        let previous = limit.rlim_cur
        limit.rlim_cur = limit.rlim_max
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            log(.info, "open file limit raised from \(previous) to \(limit.rlim_max)")
        }
    }

    private static func describe(_ destination: AccessLogDestination) -> String {
        switch destination {
        case .off: "off"
        case .stderr: "stderr"
        case .file(let path): path
        }
    }

    private static func serve(_ configuration: ServerConfiguration, log: Log) throws {
        let root = configuration.root.standardizedFileURL.path
        let socketPath = configuration.socketPath
        let memory = configuration.backend == .memory
        let s3 = configuration.backend == .s3
        log(.info, memory ? "backend memory (stores live in memory and are gone at exit)" : s3 ? "backend \(configuration.s3Location ?? "")" : "root \(root)")
        log(.info, "socket \(socketPath)")
        log(.info, "durability \(configuration.durability.rawValue), event loops \(configuration.eventLoopCount), "
            + "allowed group \(configuration.allowedGroup.map(String.init) ?? "none"), log level \(configuration.logLevel), "
            + "event heartbeat \(configuration.heartbeatSeconds) s, log format \(configuration.logFormat.rawValue), "
            + "access log \(describe(configuration.effectiveAccessLog)), memory tier \(configuration.memoryTierBytes) bytes for all stores")

        raiseOpenFileLimit(log: log)
        let accessLog = try AccessLog.open(configuration.effectiveAccessLog, format: configuration.logFormat)
        // The memory and S3 backends have no root: nothing to create or claim.
        var lock: RootLock?
        if !memory && !s3 {
            do { try FileSystem.makeDirectories(root, permissions: 0o700) } catch {
                throw StartupError("cannot create root \(root): \(error)")
            }
            lock = try RootLock.acquire(root: root)
        }
        defer { try? lock?.descriptor.close() }
        // Before the socket exists: a bucket that cannot be used stops the daemon before any client can connect.
        // One budget for the tiers of every store served: memory bounded by --memory-tier however many are open.
        let storeConfiguration = StoreConfiguration(
            durability: configuration.durability, memoryTierBytes: configuration.memoryTierBytes,
            sharedMemoryTier: MemoryTierBudget(bytes: configuration.memoryTierBytes))
        let catalog: any ServedBackendCatalog = switch configuration.backend {
        case .memory: MemoryStoreCatalog()
        case .file: FileStoreCatalog(root: configuration.root, configuration: storeConfiguration)
        case .s3: FleetCatalog(try DaemonS3Backend.catalog(configuration, log: log))
        }
        let activated = try SocketActivation.inheritedListener()
        // Before we accept a connection (so before a request can have us open a store): whoever
        // finds a store held by us learns here where we listen.
        let served = if let activated { RootLock.boundPath(of: activated) } else { Optional(socketPath) }
        if let lock, let served { lock.record(socket: served) }
        if activated == nil {
            try SocketPlacement.prepareDirectory(for: socketPath)
            try SocketPlacement.clearStale(socketPath)
        }

        let shutdown = DispatchSemaphore(value: 0)
        try SignalWatcher.start(onHangUp: {
            guard let accessLog, let path = accessLog.path else { return log(.info, "signal 1: no access log file to reopen") }
            do {
                try accessLog.reopen()
                log(.info, "signal 1: access log \(path) reopened")
            } catch {
                log(.error, "signal 1: cannot reopen access log \(path): \(error); still writing to the old file")
            }
        }) { number in
            log(.info, "signal \(number): shutting down")
            shutdown.signal()
        }

        let listener: FileDescriptor
        let socketInode: UInt64?
        if let activated {
            // The supervisor owns the socket file: never unlink it.
            listener = activated
            socketInode = nil
        } else {
            do {
                listener = try UnixSocket.listen(path: socketPath, permissions: configuration.allowedGroup == nil ? 0o600 : 0o660)
            } catch {
                throw StartupError("cannot listen on \(socketPath): \(error)")
            }
            if let group = configuration.allowedGroup, chown(socketPath, uid_t.max, group) != 0 {
                log(.error, "cannot give socket to group \(group): \(String(cString: strerror(errno)))")
            }
            socketInode = try? FileSystem.linkStatus(socketPath).inode
        }
        defer { try? listener.close() }

        // Listening for the other fleet members' changes before serving (docs/SCALE-OUT.md, "Fleet").
        let fleet = try FleetMember.start(for: catalog, configuration, log: log)
        defer { fleet?.stop() }
        let sweeper = DaemonS3Backend.startUploadSweeper(for: catalog, configuration, log: log)
        defer { sweeper?.stop() }
        let server = try Server(
            listener: listener, catalog: catalog, maximumBlobSize: storeConfiguration.maximumBlobSize,
            eventLoopCount: configuration.eventLoopCount, heartbeatSeconds: configuration.heartbeatSeconds, accessLog: accessLog,
            allowedGroup: configuration.allowedGroup, log: log,
            pools: s3 ? DaemonS3Backend.workPools(for: DaemonS3Backend.transport(configuration)) : WorkPools())
        log.always(.info, activated == nil ? "listening on \(socketPath)" : "listening on the socket passed by systemd (fd 3)")

        shutdown.wait()
        server.stop(graceSeconds: configuration.shutdownGraceSeconds)
        // Unlink only our own socket: a newer daemon may have replaced the file.
        if let inode = socketInode, let now = try? FileSystem.linkStatus(socketPath), now.inode == inode {
            _ = try? FileSystem.unlinkIfExists(socketPath)
        }
        log(.info, "stopped")
    }
}
