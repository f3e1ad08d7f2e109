import BlobClient
import BlobStore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `BlobClientError.daemonUnreachable` carries the connect's errno as an `ErrorNumber` (docs/CLIENT.md).
@Suite struct UnreachableErrnoTests {
    func unreachable(_ socketPath: String) async -> (path: String, errno: ErrorNumber, text: String)? {
        do {
            _ = try await BlobClient(socketPath: socketPath).health()
        } catch let error as BlobClientError {
            if case .daemonUnreachable(let path, let errno) = error { return (path, errno, error.description) }
            Issue.record("\(error)")
        } catch {
            Issue.record("\(error)")
        }
        return nil
    }

    @Test func noSocketFileIsENOENT() async throws {
        let path = NSTemporaryDirectory() + "no-blobd-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        let failure = try #require(await unreachable(path))
        #expect(failure.path == path)
        #expect(failure.errno.rawValue == ENOENT && failure.errno.name == "ENOENT")
        #expect(failure.errno.message == String(cString: strerror(ENOENT)))
        #expect(failure.text.contains("ENOENT (\(failure.errno.message))"), "\(failure.text)")
    }

    @Test func aSocketNobodyListensOnIsECONNREFUSED() async throws {
        let path = NSTemporaryDirectory() + "mute-blobd-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        // Bound but never listening: a connect is refused.
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd); unlink(path) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8) + [0])
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0)
        let failure = try #require(await unreachable(path))
        #expect(failure.errno.name == "ECONNREFUSED", "\(failure.errno)")
    }

    @Test func aPathTooLongForASocketIsENAMETOOLONG() async throws {
        let path = "/tmp/" + String(repeating: "s", count: 200) + ".sock"
        let failure = try #require(await unreachable(path))
        #expect(failure.errno.name == "ENAMETOOLONG", "\(failure.errno)")
    }
}
