internal import BlobSystem
import Dispatch
import Foundation

/// Repair: ``Verifier``'s check that also moves every corrupt and orphaned entry into `quarantine/`
/// (STORAGE.md, "Integrity").
///
/// Each part is checked in a read first; a part with findings is checked again and repaired in a
/// barrier on the store queue (no read or commit meanwhile), so what is moved is what is wrong at
/// that moment — a put that replaced a damaged file between the two is not moved away. Owned by a
/// writing engine; immutable.
struct Repair: Sendable {
    let paths: StorePaths
    let queue: DispatchQueue
    let index: BucketIndex
    let verifier: Verifier
    let reads: ReadPath
    /// Both describe files a repair may move away: dropped, to be learnt again.
    let listingCache: ListingCache
    let totals: StoreTotals
    /// A repair moves blob files away: the memory tier must not keep serving them.
    let tier: MemoryTier

    /// Verifies and repairs the whole store.
    func run() async throws -> VerificationReport {
        var report = VerificationReport(healthy: 0, corrupt: [], orphaned: [], quarantined: [])
        let strays = try await reads.read { () throws -> [VerificationReport.Finding] in try self.verifier.strayEntries() }
        if !strays.isEmpty {
            let (found, moved) = try await barrier { () throws -> ([VerificationReport.Finding], [QuarantinedEntry]) in
                let found = try self.verifier.strayEntries()
                return (found, try self.quarantine(found.map(\.path)))
            }
            report.orphaned += found
            report.quarantined? += moved
        }
        var position = 0
        while true {
            let bucket = position
            let checked = try await reads.read { () throws -> VerificationReport? in
                guard bucket < self.index.map.buckets.count else { return nil }
                return try self.verifier.verifyBucket(at: bucket)
            }
            guard var part = checked else { break }
            if !part.isClean {
                part = try await barrier { () throws -> VerificationReport in
                    var part = try self.verifier.verifyBucket(at: bucket)
                    part.quarantined = try self.quarantine((part.corrupt + part.orphaned).map(\.path))
                    self.index.forgetCount(ofBucketAt: bucket)
                    self.listingCache.forget()
                    self.totals.forget()
                    return part
                }
            }
            report.healthy += part.healthy
            report.corrupt += part.corrupt
            report.orphaned += part.orphaned
            report.quarantined? += part.quarantined ?? []
            position += 1
        }
        return report
    }

    /// Runs `body` on the queue alone (no read or commit meanwhile).
    private func barrier<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async(flags: .barrier) {
                tier.willChangeEverything()
                defer { tier.didChangeEverything() }
                continuation.resume(with: Result { try body() })
            }
        }
    }

    /// Moves each of `paths` (inside the store folder) into `quarantine/`, under a name that keeps its
    /// path relative to the store folder (escaped) after a time stamp and a counter, then syncs the
    /// folders touched. In a barrier.
    private func quarantine(_ moving: [String]) throws -> [QuarantinedEntry] {
        guard !moving.isEmpty else { return [] }
        dispatchPrecondition(condition: .onQueueAsBarrier(queue))
        let folder = paths.quarantine
        var moving = moving
        // Something other than a folder (a file, a link, which could lead out of the store) under the
        // name `quarantine` is itself a finding: set aside first, then moved in like the others.
        var aside: String?
        if try io("check folder", folder, { try Repair.exists(folder) }),
            try io("check folder", folder, { try FileSystem.linkStatus(folder) }).kind != .directory
        {
            let name = paths.store + "/" + StorePaths.uniqueName(".quarantine-")
            try io("move aside", folder) { try FileSystem.rename(folder, to: name) }
            moving = moving.map { $0 == folder ? name : $0 }
            aside = name
        }
        if try io("create folder", folder, { try FileSystem.makeDirectory(folder) }) {
            try io("sync folder", paths.store) { try FileSystem.syncDirectory(paths.store) }
        }
        let stamp = Repair.stamp()
        var moved: [QuarantinedEntry] = []
        var sources: Set<String> = []
        var counter = 0
        for path in moving {
            let original = path == aside ? folder : path
            let relative = original.hasPrefix(paths.store + "/") ? String(original.dropFirst(paths.store.count + 1)) : original
            var target: String
            repeat {
                counter += 1
                target = folder + "/" + stamp + "-\(counter)-" + Repair.escaped(relative)
            } while try io("check quarantine name", target, { try Repair.exists(target) })
            try io("move to quarantine", path) { try FileSystem.rename(path, to: target) }
            moved.append(QuarantinedEntry(from: original, to: target))
            sources.insert(StorePaths.parent(of: path))
        }
        for touched in sources.sorted() + [folder] {
            try io("sync folder", touched) { try FileSystem.syncDirectory(touched) }
        }
        return moved
    }

    /// Whether anything (a dangling link too) is at `path`.
    private static func exists(_ path: String) throws(Errno) -> Bool {
        do {
            _ = try FileSystem.linkStatus(path)
            return true
        } catch .noSuchFileOrDirectory { return false }
    }

    /// The time of a repair in quarantine names, UTC to the second: `20260102T030405Z`.
    private static func stamp() -> String {
        var time = time_t(Date().timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }

    /// `relative` as one file name: bytes other than letters, digits, `.`, `_` and `-` as `%XX`
    /// (so `/` is `%2F`), cut to 200 bytes so that the name stays within the 255-byte limit.
    static func escaped(_ relative: String) -> String {
        var result = ""
        for byte in relative.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                result += byte < 16 ? "%0" + hex : "%" + hex
            }
        }
        return String(result.prefix(200))
    }
}
