import BlobClient
import Foundation

/// A `blobd` (``DaemonProcess``) that can be stopped and started again on the same root and socket,
/// with clients of it: for tests of the Swift client.
package final class DaemonFixture: @unchecked Sendable {
    /// The built `blobd`'s path, or nil (with the reason printed) when it was not built.
    package static let binary: String? = {
        if let url = BlobdBinary.url { return url.path }
        print("BlobClient integration tests skipped: \(BuiltTool.skipReason("blobd"))")
        return nil
    }()

    /// The folder holding the root and the socket (removed when the fixture goes).
    package let folder = TempFolder()
    /// The folder's path.
    package var directory: String { folder.path }
    /// The store root.
    package var root: String { folder.path + "/root" }
    /// The daemon's socket.
    package var socketPath: String { folder.path + "/s/d.sock" }
    // Only the test that owns the fixture starts and stops it.
    private var daemon: DaemonProcess?

    /// Starts the daemon.
    package init() throws {
        try FileManager.default.createDirectory(atPath: folder.path + "/s", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try start()
    }

    deinit { stop() }

    /// Starts the daemon and waits until its socket answers.
    package func start() throws {
        guard Self.binary != nil else { throw CancellationError() }
        daemon = try DaemonProcess(folder: folder, root: root, socket: socketPath, logLevel: "error")
    }

    /// Stops the daemon (SIGTERM) and waits for it.
    package func stop() {
        daemon?.terminate()
        daemon = nil
    }

    /// A client of this daemon.
    package func client(_ configuration: BlobClient.Configuration = .init()) -> BlobClient {
        BlobClient(socketPath: socketPath, configuration: configuration)
    }
}
