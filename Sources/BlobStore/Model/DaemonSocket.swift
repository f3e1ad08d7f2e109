#if canImport(Glibc)
import Glibc
#endif

/// Where `blobd` listens by default, shared by the daemon, its client and the `blob` tool so that
/// they always agree.
public enum DaemonSocket {
    /// `$XDG_RUNTIME_DIR/blobstore/blobd.sock` when that variable is an absolute path (as the XDG
    /// spec requires), else `/tmp/blobstore-$UID/blobd.sock`.
    public static func defaultPath(environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return runtime + "/blobstore/blobd.sock"
        }
        return "/tmp/blobstore-\(getuid())/blobd.sock"
    }
}
