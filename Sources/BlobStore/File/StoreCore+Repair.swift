internal import BlobSystem
import Foundation

extension StoreCore {
    /// ``verify()`` that also moves every corrupt and orphaned entry into `quarantine/`.
    ///
    /// Each part is checked in a read first; a part with findings is checked again and repaired in
    /// a barrier (no read or commit meanwhile), so what is moved is what is wrong at that moment —
    /// a put that replaced a damaged file between the two is not moved away.
    func repair() async throws -> VerificationReport {
        try refuseIfReadOnly("repair")
        var report = VerificationReport(healthy: 0, corrupt: [], orphaned: [], quarantined: [])
        let strays = try await read { () throws -> [VerificationReport.Finding] in try self.strayEntries() }
        if !strays.isEmpty {
            let (found, moved) = try await barrier { () throws -> ([VerificationReport.Finding], [QuarantinedEntry]) in
                let found = try self.strayEntries()
                return (found, try self.quarantine(found.map(\.path)))
            }
            report.orphaned += found
            report.quarantined? += moved
        }
        var index = 0
        while true {
            let position = index
            let checked = try await read { () throws -> VerificationReport? in
                guard position < self.confined.map.buckets.count else { return nil }
                return try self.verifyBucket(at: position)
            }
            guard var part = checked else { break }
            if !part.isClean {
                part = try await barrier { () throws -> VerificationReport in
                    var part = try self.verifyBucket(at: position)
                    part.quarantined = try self.quarantine((part.corrupt + part.orphaned).map(\.path))
                    self.forgetCounts(ofBucketAt: position)
                    return part
                }
            }
            report.healthy += part.healthy
            report.corrupt += part.corrupt
            report.orphaned += part.orphaned
            report.quarantined? += part.quarantined ?? []
            index += 1
        }
        return report
    }

    /// Runs `body` on `queue` alone (no read or commit meanwhile).
    private func barrier<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async(flags: .barrier) { continuation.resume(with: Result { try body() }) }
        }
    }

    /// The bucket's cached count, the totals and the listing cache described the files just moved
    /// away: dropped, to be learnt again from the folders. Inside a barrier.
    private func forgetCounts(ofBucketAt index: Int) {
        let number = confined.map.buckets[index].number
        confined.counts[number] = nil
        confined.bucketChanged(number)
        listingCache.withLock { $0 = nil }
        statistics.withLock { $0 = nil }
    }

    /// Moves each of `paths` (inside the store folder) into `quarantine/`, under a name that keeps its
    /// path relative to the store folder (escaped) after a time stamp and a counter, then syncs the
    /// folders touched. Inside a barrier.
    private func quarantine(_ paths: [String]) throws -> [QuarantinedEntry] {
        guard !paths.isEmpty else { return [] }
        let folder = storePath + "/quarantine"
        var paths = paths
        // Something other than a folder (a file, a link, which could lead out of the store) under the
        // name `quarantine` is itself a finding: set aside first, then moved in like the others.
        var aside: String?
        if try io("check folder", folder, { try StoreCore.exists(folder) }),
            try io("check folder", folder, { try FileSystem.linkStatus(folder) }).kind != .directory
        {
            let name = storePath + "/" + StoreCore.uniqueName(".quarantine-")
            try io("move aside", folder) { try FileSystem.rename(folder, to: name) }
            paths = paths.map { $0 == folder ? name : $0 }
            aside = name
        }
        if try io("create folder", folder, { try FileSystem.makeDirectory(folder) }) {
            try io("sync folder", storePath) { try FileSystem.syncDirectory(storePath) }
        }
        let stamp = StoreCore.quarantineStamp()
        var moved: [QuarantinedEntry] = []
        var sources: Set<String> = []
        var counter = 0
        for path in paths {
            let original = path == aside ? folder : path
            let relative = original.hasPrefix(storePath + "/") ? String(original.dropFirst(storePath.count + 1)) : original
            var target: String
            repeat {
                counter += 1
                target = folder + "/" + stamp + "-\(counter)-" + StoreCore.escapedForQuarantine(relative)
            } while try io("check quarantine name", target, { try StoreCore.exists(target) })
            try io("move to quarantine", path) { try FileSystem.rename(path, to: target) }
            moved.append(QuarantinedEntry(from: original, to: target))
            sources.insert(StoreCore.parent(of: path))
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
    private static func quarantineStamp() -> String {
        var time = time_t(Date().timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }

    /// `relative` as one file name: bytes other than letters, digits, `.`, `_` and `-` as `%XX`
    /// (so `/` is `%2F`), cut to 200 bytes so that the name stays within the 255-byte limit.
    static func escapedForQuarantine(_ relative: String) -> String {
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
