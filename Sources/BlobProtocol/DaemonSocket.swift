#if canImport(Glibc)
import Glibc
#endif

/// Where `blobd` listens by default, shared by the daemon, its client and the `blob` tool so that
/// they always agree (and their help texts say the same).
package enum DaemonSocket {
    /// The variable naming the socket for clients (`BlobClient`, `blob`).
    package static let clientEnvironmentVariable = "BLOB_SOCKET"
    /// The default under `$XDG_RUNTIME_DIR`, as help texts spell it.
    package static let runtimeTemplate = "$XDG_RUNTIME_DIR" + runtimeSubpath
    /// The default without `XDG_RUNTIME_DIR`, as help texts spell it.
    package static let fallbackTemplate = fallbackPath(user: "$UID")

    private static let runtimeSubpath = "/blobstore/blobd.sock"

    private static func fallbackPath(user: String) -> String { "/tmp/blobstore-\(user)/blobd.sock" }

    /// `$XDG_RUNTIME_DIR/blobstore/blobd.sock` when that variable is an absolute path (as the XDG
    /// spec requires), else `/tmp/blobstore-$UID/blobd.sock`.
    package static func defaultPath(environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return runtime + runtimeSubpath
        }
        return fallbackPath(user: "\(getuid())")
    }

    /// The socket a client connects to: `$BLOB_SOCKET` when set and not empty, else ``defaultPath(environment:)``.
    package static func clientPath(environment: [String: String]) -> String {
        if let socket = environment[clientEnvironmentVariable], !socket.isEmpty { return socket }
        return defaultPath(environment: environment)
    }
}
