import BlobSystem
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Connection storms sized for a 2-core CI machine: 500 held connections (silent, then
/// slowloris) while a normal client is served promptly, then 2,000 connections opened and closed.
@Suite(.enabled(if: Hostile.suiteEnabled, "blobd binary not found in .build/debug; run `swift build` first"))
struct HostileStormTests {
    static let heldConnections = 500
    static let rapidConnections = 2000
    static let normalRequests = 50
    /// Generous: a loaded 2-core machine runs other test daemons meanwhile.
    static let latencyBound = 2.0

    /// Tells a background sender to stop.
    final class StopFlag: @unchecked Sendable {
        private let lock = NSLock()
        private var stopped = false
        func stop() { lock.withLock { stopped = true } }
        var isStopped: Bool { lock.withLock { stopped } }
    }

    /// Opens `count` raw connections, optionally sending `prefix` on each.
    static func openMany(_ daemon: DaemonProcess, count: Int, prefix: String? = nil) throws -> [FileDescriptor] {
        var sockets: [FileDescriptor] = []
        sockets.reserveCapacity(count)
        for _ in 0..<count {
            let fd = try UnixSocket.connect(path: daemon.socketPath)
            if let prefix { _ = prefix.utf8CString.withUnsafeBytes { Glibc.send(fd.rawValue, $0.baseAddress, $0.count - 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) } }
            sockets.append(fd)
        }
        return sockets
    }

    /// A normal client's `normalRequests` requests (health, put, get, on kept-alive and fresh
    /// connections); returns the slowest latency, recording any failure.
    static func normalTraffic(_ daemon: DaemonProcess, phase: String) -> Double {
        var slowest = 0.0
        var client: WireClient?
        for index in 0..<normalRequests {
            let started = Date()
            do {
                if client == nil || index % 10 == 0 { client = try WireClient(path: daemon.socketPath, timeout: 10) }
                let request: String
                let expected: Int
                switch index % 3 {
                case 0: (request, expected) = (Hostile.get("/v1/health"), 200)
                case 1: (request, expected) = (Hostile.put("/v1/stores/storm/blobs/\(phase)-\(index)", body: "payload \(index)"), 201)
                default: (request, expected) = (Hostile.get("/v1/stores/storm/blobs/\(phase)-\(index - 1)"), 200)
                }
                client!.send(request)
                let response = try client!.readResponse()
                #expect(response.status == expected, "[\(phase)] request \(index): \(response.status) \(response.text)")
            } catch {
                Issue.record("[\(phase)] request \(index) failed: \(error)")
                client = nil
            }
            let latency = Date().timeIntervalSince(started)
            slowest = max(slowest, latency)
            #expect(latency < latencyBound, "[\(phase)] request \(index) took \(latency) s")
        }
        return slowest
    }

    @Test func connectionStorms() throws {
        let needed = rlim_t(Self.heldConnections * 2 + 1024)
        if let reason = Hostile.ensureOpenFileLimit(needed) {
            print("HostileStormTests skipped: \(reason)")
            return
        }
        let daemon = try Hostile.startDaemon()
        defer { daemon.terminate() }

        // 1. 500 silent connections, held while a normal client is served.
        var held = try Self.openMany(daemon, count: Self.heldConnections)
        let silentSlowest = Self.normalTraffic(daemon, phase: "silent")
        #expect(daemon.process.isRunning)
        let openWhileHeld = Hostile.metric(daemon, "blobd_open_connections") ?? 0
        #expect(openWhileHeld >= Double(Self.heldConnections), "the daemon dropped held connections: \(openWhileHeld) open")
        for fd in held { try? fd.close() }
        held.removeAll()

        // 2. 500 slowloris connections: a partial head, then a byte per second for ~4 s.
        let slow = try Self.openMany(daemon, count: Self.heldConnections, prefix: "GET /v1/health HTTP/1.1\r\nX-Slow: ")
        let raw = slow.map(\.rawValue)
        let stop = StopFlag()
        let done = DispatchSemaphore(value: 0)
        let sender = Thread {
            var round = 0
            while !stop.isStopped && round < 8 {
                for fd in raw { _ = withUnsafeBytes(of: UInt8(ascii: "a")) { Glibc.send(fd, $0.baseAddress, 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) } }
                round += 1
                for _ in 0..<10 where !stop.isStopped { usleep(50_000) }
            }
            done.signal()
        }
        sender.start()
        let slowStarted = Date()
        let slowlorisSlowest = Self.normalTraffic(daemon, phase: "slowloris")
        // Keep the trickle going for a few seconds in all, then stop it.
        while Date().timeIntervalSince(slowStarted) < 3 { usleep(100_000) }
        stop.stop()
        done.wait()
        #expect(daemon.process.isRunning)
        for fd in slow { try? fd.close() }

        // 3. 2,000 connections opened and closed rapidly (half send a partial request first).
        let rapidStarted = Date()
        for index in 0..<Self.rapidConnections {
            let fd = try UnixSocket.connect(path: daemon.socketPath)
            if index % 2 == 1 {
                _ = "GET /v1/he".utf8CString.withUnsafeBytes { Glibc.send(fd.rawValue, $0.baseAddress, $0.count - 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            }
            try? fd.close()
        }
        let rapidSeconds = Date().timeIntervalSince(rapidStarted)
        #expect(daemon.process.isRunning)
        let afterRapid = Self.normalTraffic(daemon, phase: "after-rapid")

        // Every storm connection is gone from the daemon, and all were accepted.
        let open = Hostile.waitForOpenConnections(daemon, atMost: 1)
        #expect(open == 1, "storm connections still open in the daemon: \(open.map { String($0) } ?? "unknown")")
        let accepted = Hostile.metric(daemon, "blobd_accepted_connections_total") ?? 0
        #expect(accepted >= Double(2 * Self.heldConnections + Self.rapidConnections), "accepted only \(accepted)")
        print("HostileStormTests: slowest normal request \(silentSlowest) s (500 silent), \(slowlorisSlowest) s (500 slowloris), \(afterRapid) s (after 2,000 rapid connections in \(rapidSeconds) s)")
        Hostile.checkSurvived(daemon, group: "connection storms")
    }
}
