import BlobSystem
import Foundation

/// The thread that blocks in `accept`, checks each peer's credentials, and deals the connections
/// round-robin to the event loops. Blocking here keeps `accept` off the loops' epoll sets entirely.
final class Acceptor: Sendable {
    private let listener: FileDescriptor
    private let loops: [EventLoop]
    private let policy: PeerPolicy
    private let log: Log
    private let finished = Locked(false)

    init(listener: FileDescriptor, loops: [EventLoop], policy: PeerPolicy, log: Log) {
        self.listener = listener
        self.loops = loops
        self.policy = policy
        self.log = log
    }

    /// Whether the accept thread has returned.
    var hasFinished: Bool { finished.withLock { $0 } }

    func start() {
        let thread = Thread { [self] in self.run() }
        thread.name = "blobd-accept"
        thread.start()
    }

    /// Wakes a blocked `accept` for good: on Linux, `shutdown` on a listening socket makes it fail with EINVAL.
    func stop() {
        _ = shutdown(listener.rawValue, Int32(SHUT_RDWR))
    }

    private func run() {
        var next = 0
        while true {
            let socket: FileDescriptor
            do {
                guard let accepted = try UnixSocket.accept(listener, nonBlocking: false) else { continue }
                socket = accepted
            } catch let error where error.rawValue == EMFILE || error.rawValue == ENFILE {
                log(.error, "accept: \(error); pausing")
                usleep(100_000)
                continue
            } catch {
                break  // shut down (EINVAL) or unusable
            }
            let peer = try? UnixSocket.peerCredentials(socket)
            guard let peer, policy.allows(peer) else {
                refuse(socket, loop: loops[next])
                next = (next + 1) % loops.count
                continue
            }
            do { try socket.setNonBlocking(true) } catch {
                try? socket.close()
                continue
            }
            loops[next].adopt(socket, peer: peer)
            next = (next + 1) % loops.count
        }
        finished.withLock { $0 = true }
    }

    /// Logs a refused peer and hands the socket to a loop that answers its first request with 403
    /// and closes. Answering right away, before the request arrives, would make clients that are
    /// still writing fail with EPIPE instead of reading the 403.
    private func refuse(_ socket: FileDescriptor, loop: EventLoop) {
        let peer = try? UnixSocket.peerCredentials(socket)
        log(.info, "refused connection from uid \(peer.map { String($0.userID) } ?? "?") gid \(peer.map { String($0.groupID) } ?? "?") pid \(peer.map { String($0.processID) } ?? "?")")
        do { try socket.setNonBlocking(true) } catch {
            try? socket.close()
            return
        }
        loop.adopt(socket, refused: true, peer: peer)
    }
}
