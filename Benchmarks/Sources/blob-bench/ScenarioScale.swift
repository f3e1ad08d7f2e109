import BlobStore
import Foundation
import Glibc
import Synchronization

/// `scale`: does the store stay fast when it is big? One store of 1,000,000 blobs of 1 KiB
/// (`--scale-count N`) against one of 10,000, in the same process and the same minutes:
///
/// - put and get rates at both sizes, measured interleaved (10k, 1M, 10k, 1M, …) so machine drift
///   hits both alike, reported as the median of the per-repetition ratios 1M/10k (target ≥ 0.8×).
///   Beside them, what explains them: the bytes each operation read from storage (page-cache
///   misses), a raw open/read/close baseline on the same files (what the file system loses with
///   size), and "warm" variants whose page cache is filled first (what the store itself loses);
/// - start-up: a fresh child process that opens the store and gets one blob, and a fresh daemon until
///   it answers a first GET (target ≤ 200 ms at either size);
/// - listing everything by pages of 1,000, in a child process (its peak RSS is the listing's) and
///   through the daemon (its peak RSS while serving the pages).
///
/// The stores are filled with relaxed durability by 2 writer threads that keep commits in flight
/// (see ``ScaleFill``). Needs about 5 GiB and 1.1M inodes free for 1M blobs; skipped with a reason
/// otherwise. Keep it last in the catalogue: freeing a million files takes minutes on this disk
/// (one TRIM per file) and slows file creation in the next minutes (see ``InodeSpreading``).
struct ScaleScenario: Scenario {
    var name: String { "scale" }
    var summary: String {
        "1M × 1 KiB blobs in one store (--scale-count N): put/get rate at 10k vs 1M, start-up (fresh process, daemon), list all by pages"
    }

    static let blobBytes = 1024
    /// The small store every rate is compared with.
    static let smallCount = 10_000
    static let defaultCount = 1_000_000
    static let quickCount = 30_000
    static let pageSize = 1000
    /// On-disk cost per blob assumed by the free-space check: one 4 KiB block for header + 1 KiB, with room to spare.
    static let bytesPerBlob: Int64 = 5 * 1024

    /// The large store's size: `--scale-count`, else 1M (30k with `--quick`). Read from the command line
    /// here because the harness's ``ScenarioContext`` carries only the settings every scenario shares.
    static func largeCount(quick: Bool) -> Int {
        if let arguments = try? Arguments.parse(Array(CommandLine.arguments.dropFirst())), let count = arguments.scaleCount {
            return count
        }
        return quick ? quickCount : defaultCount
    }

    /// `10k`, `1M`, `1.5M`, `250`.
    static func countLabel(_ count: Int) -> String {
        if count >= 1_000_000, count % 1_000_000 == 0 { return "\(count / 1_000_000)M" }
        if count >= 1000, count % 1000 == 0 { return "\(count / 1000)k" }
        return Report.compact(Double(count))
    }

    /// Fills, measures, lists, and frees the blocks of both stores; one result with every figure.
    func run(_ context: ScenarioContext) async throws -> [CaseResult] {
        let count = Self.largeCount(quick: context.quick)
        let large = Self.countLabel(count)
        let label = "1 KiB ×\(large)"
        let additions = 2 * context.repetitions * Self.putsPerRun(context)
        let blobs = Int64(count + Self.smallCount + additions)
        if let space = DiskSpace(path: context.root),
            let missing = space.shortfall(bytes: blobs * Self.bytesPerBlob + (1 << 30), inodes: blobs + blobs / 10 + 10_000)
        {
            Console.progress("[scale] skipped: \(blobs) blobs \(missing)")
            return [
                CaseResult(
                    scenario: name, label: label, blobBytes: Self.blobBytes, variants: [], comparisons: [],
                    figures: [Figure(name: "skipped: \(blobs) blobs \(missing)", value: 0, unit: "-")])
            ]
        }
        let root = try context.folder("stores")
        InodeSpreading.mark(root)
        let small = Subject(root: root, label: Self.countLabel(Self.smallCount), filled: Self.smallCount)
        let big = Subject(root: root, label: large, filled: count)

        var (result, figures) = try await inProcess(context, small: small, big: big)
        // The child processes and daemons below need the stores' locks, which this process held.
        for subject in [small, big] { try await Self.waitUntilClosed(subject) }
        figures += try await startUp(context, subjects: [small, big])
        figures += try await listing(subjects: [small, big])
        figures += try await daemonListing(big)

        let clock = ContinuousClock()
        let started = clock.now
        let files = try await Self.releaseInParallel(root)
        let elapsed = ChildRun.milliseconds(started.duration(to: clock.now)) / 1000
        Console.progress("[scale] cleanup: truncated \(files) files in \(Report.fixed(elapsed)) s")
        figures.append(Figure(name: "cleanup: truncate \(Self.countLabel(files)) files, 4 threads (each frees a block: a TRIM here)", value: elapsed, unit: "s"))
        result.label = label
        result.figures = figures
        return [result]
    }

    // MARK: - One store under test

    /// A store of the scenario and what the bench knows about it.
    final class Subject: Sendable {
        let root: String
        /// `10k`, `1M`.
        let label: String
        /// The store's name (`blobs-10k`).
        let name: String
        /// Blobs `0..<filled` were put by the fill; later puts take fresh indices from `next`.
        let filled: Int
        let next: Atomic<Int>

        /// A store named after `label` under `root`, to be filled with blobs `0..<filled`.
        init(root: String, label: String, filled: Int) {
            self.root = root
            self.label = label
            self.name = "blobs-" + label.lowercased()
            self.filled = filled
            next = Atomic(filled)
        }

        /// How many blobs the store holds now.
        var count: Int { next.load(ordering: .relaxed) }

        /// Takes `count` fresh indices for new blobs.
        func take(_ count: Int) -> Range<Int> {
            let first = next.add(count, ordering: .relaxed).oldValue
            return first..<(first + count)
        }

        /// An identifier that exists, picked at random among the filled ones.
        func randomExisting() -> String { ScaleIdentifiers.make(Int.random(in: 0..<filled)) }

        /// Opens the store (relaxed durability: the scenario measures scale, not syncs).
        func open() throws -> PersistentDataStore {
            try PersistentDataStore(name: name, root: URL(fileURLWithPath: root), configuration: .init(durability: .relaxed))
        }
    }

    /// New blobs put per timed run (in each store). The small store grows by this times the
    /// repetitions (10k → 30k in a full run), so "10k" means "tens of thousands"; what matters is
    /// the two orders of magnitude to the big store.
    static func putsPerRun(_ context: ScenarioContext) -> Int { context.count(4000, quick: 2000) }
    /// Random gets per timed run.
    static func getsPerRun(_ context: ScenarioContext) -> Int { context.count(20_000, quick: 10_000) }

    // MARK: - Rates, in this process

    /// Fills both stores and measures put and get rates on each, interleaved. Everything that holds
    /// a store lives in this function, so both are closed when it returns.
    private func inProcess(_ context: ScenarioContext, small: Subject, big: Subject) async throws -> (CaseResult, [Figure]) {
        let content = Workload(blobBytes: Self.blobBytes, count: 0).data
        let smallStore = try small.open()
        let bigStore = try big.open()
        var figures: [Figure] = []
        for (subject, store) in [(small, smallStore), (big, bigStore)] {
            let elapsed = try await ScaleFill.fill(store, name: subject.name, indices: 0..<subject.filled, content: content)
            let seconds = ChildRun.milliseconds(elapsed) / 1000
            Console.progress("[scale] filled \(subject.name) in \(Report.fixed(seconds)) s")
            if subject === big {
                figures.append(
                    Figure(name: "fill \(big.label) (relaxed; 2 writer threads, ≤ 64 commits in flight each)", value: Double(big.filled) / seconds, unit: "puts/s"))
            }
        }
        // Writeback of the fill (GiBs) must not land in the first timed run.
        try await DedicatedThread.run { sync() }

        let puts = Self.putsPerRun(context)
        let gets = Self.getsPerRun(context)
        let pairs = [(small, smallStore), (big, bigStore)]
        let reads = StorageReads()
        let variants =
            pairs.map { Self.putVariant($0.0, $0.1, content: content, operations: puts, reads: reads) }
            + pairs.map { Self.getVariant($0.0, $0.1, operations: gets, reads: reads) }
            + pairs.map { Self.blockingGetVariant($0.0, $0.1, operations: gets, warm: false, reads: reads) }
            + pairs.map { Self.blockingGetVariant($0.0, $0.1, operations: gets, warm: true, reads: reads) }
            + pairs.map { Self.rawGetVariant($0.0, operations: gets, reads: reads) }
        let bucketsBefore = try pairs.map { try StoreLayout(storeFolder: $0.0.root + "/" + $0.0.name).buckets.count }
        let result = try await context.measure(scenario: name, label: "1 KiB", blobBytes: Self.blobBytes, variants: variants, comparisons: [])
        // Bucket splits explain put rates: each one renames half a bucket (~4k files) inside the store's barrier.
        for ((subject, _), before) in zip(pairs, bucketsBefore) {
            let after = try StoreLayout(storeFolder: subject.root + "/" + subject.name).buckets.count
            figures.append(
                Figure(
                    name: "bucket splits during the put runs at \(subject.label) (\(before) → \(after) buckets; the store grew "
                        + "\(ScaleScenario.countLabel(subject.filled)) → \(ScaleScenario.countLabel(subject.count)))",
                    value: Double(after - before), unit: "splits"))
        }

        let kinds = [
            ("put", "async put of new ids, 2 writers, \(puts) per run", true),
            ("get", "async get of random ids, 2 readers, \(gets) per run", true),
            ("blocking-get", "openForReading + read of random ids, 2 threads, \(gets) per run", true),
            ("blocking-get-warm", "the same ids read once untimed first: all in the page cache", true),
            ("raw-get", "baseline: open/read/close of the same kind of random blob files, no store, 2 threads", false),
        ]
        for (kind, how, hasTarget) in kinds {
            guard let low = result.variants.first(where: { $0.name == "\(kind)@\(small.label)" }),
                let high = result.variants.first(where: { $0.name == "\(kind)@\(big.label)" })
            else { continue }
            let ratios = Stats.summary(zip(high.samples, low.samples).map { $0 / max($1, 1e-12) })
            let range = "[\(Report.fixed(ratios.low))–\(Report.fixed(ratios.high))]"
            figures += [
                Figure(name: "\(kind) rate at \(small.label) blobs (\(how))", value: low.opsPerSecond, unit: "ops/s"),
                Figure(name: "\(kind) rate at \(big.label) blobs", value: high.opsPerSecond, unit: "ops/s"),
                hasTarget
                    ? Figure(name: "\(kind) rate \(big.label)/\(small.label) \(range)", value: ratios.median, unit: "×", target: "≥ 0.8×", met: ratios.median >= 0.8)
                    : Figure(name: "\(kind) rate \(big.label)/\(small.label) \(range) (what the machine loses, not the store)", value: ratios.median, unit: "×"),
                Figure(
                    name: "  \(kind): bytes read from storage per op (page-cache misses, /proc/self/io) at \(small.label): "
                        + "\(Report.compact(reads.median(low.name))); at \(big.label):",
                    value: reads.median(high.name), unit: "B/op"),
            ]
        }
        // The store's own cost against the file system's at each size: does it grow with the store?
        for kind in ["blocking-get", "get"] {
            for subject in [small, big] {
                guard let store = result.variants.first(where: { $0.name == "\(kind)@\(subject.label)" }),
                    let raw = result.variants.first(where: { $0.name == "raw-get@\(subject.label)" })
                else { continue }
                let ratios = Stats.summary(zip(store.samples, raw.samples).map { $0 / max($1, 1e-12) })
                figures.append(
                    Figure(
                        name: "\(kind)/raw-get at \(subject.label) [\(Report.fixed(ratios.low))–\(Report.fixed(ratios.high))]", value: ratios.median,
                        unit: "×"))
            }
        }
        return (result, figures)
    }

    /// `operations` puts of new identifiers through the async API, 2 writer tasks.
    private static func putVariant(_ subject: Subject, _ store: PersistentDataStore, content: Data, operations: Int, reads: StorageReads) -> Variant {
        let name = "put@\(subject.label)"
        return Variant(.store, concurrency: 2, operations: operations, name: name) { _ in
            let identifiers = subject.take(operations).map(ScaleIdentifiers.make)
            let options = PutOptions()
            return try await reads.count(name, operations: operations) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for writer in 0..<2 {
                        group.addTask {
                            for index in stride(from: writer, to: identifiers.count, by: 2) {
                                try await store.put(content, identifier: identifiers[index], options: options)
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
    }

    /// `operations` gets of random existing identifiers through the async API, 2 reader tasks.
    private static func getVariant(_ subject: Subject, _ store: PersistentDataStore, operations: Int, reads: StorageReads) -> Variant {
        let name = "get@\(subject.label)"
        return Variant(.store, concurrency: 2, operations: operations, name: name) { _ in
            let identifiers = (0..<operations).map { _ in subject.randomExisting() }
            return try await reads.count(name, operations: operations) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for reader in 0..<2 {
                        group.addTask {
                            for index in stride(from: reader, to: identifiers.count, by: 2) {
                                guard try await store.get(identifiers[index]).count == blobBytes else { throw BaselineFailure(count: 1) }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
    }

    /// The same gets through the blocking API (what the daemon's loops call) on 2 threads: without the
    /// async API's thread hand-offs, a slowdown of the lookup itself would show more clearly. `warm`
    /// reads the same blobs once, untimed, first: then nothing is left to the disk, and the figure is
    /// the store's own cost at that size.
    private static func blockingGetVariant(
        _ subject: Subject, _ store: PersistentDataStore, operations: Int, warm: Bool, reads: StorageReads
    ) -> Variant {
        let name = (warm ? "blocking-get-warm@" : "blocking-get@") + subject.label
        return Variant(.store, concurrency: 2, operations: operations, name: name) { _ in
            let identifiers = (0..<operations).map { _ in subject.randomExisting() }
            /// Reads every blob of `identifiers` on 2 threads.
            @Sendable func readAll() async throws {
                try await Workers.run(2) { reader in
                    for index in stride(from: reader, to: identifiers.count, by: 2) {
                        let handle = try store.openForReading(identifiers[index])
                        defer { handle.close() }
                        guard try handle.read(0..<Int64(blobBytes)).count == blobBytes else { throw BaselineFailure(count: 1) }
                    }
                }
            }
            if warm { try await readAll() }
            return try await reads.count(name, operations: operations) { try await readAll() }
        }
    }

    /// The baseline for gets: open/read/close of the blob files of random identifiers, found through the
    /// store's manifest (docs/STORAGE.md) but read without the store, on 2 threads with reused buffers.
    /// Whatever this loses between 10k and 1M blobs is lost by the file system and the page cache, not
    /// by the store.
    private static func rawGetVariant(_ subject: Subject, operations: Int, reads: StorageReads) -> Variant {
        let name = "raw-get@\(subject.label)"
        return Variant(.raw, concurrency: 2, operations: operations, name: name) { _ in
            let layout = try StoreLayout(storeFolder: subject.root + "/" + subject.name)
            let paths = (0..<operations).map { _ in layout.path(of: subject.randomExisting()) }
            // Every blob file of the scenario has the same size: header (same fields, same lengths) + 1 KiB.
            guard let size = try? Files.size(paths[0]) else { throw BenchFailure("no blob file at \(paths[0])") }
            return try await reads.count(name, operations: operations) {
                try await Workers.run(2) { reader in
                    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(size), alignment: 4096)
                    defer { buffer.deallocate() }
                    try RawPOSIX.get(buffer, paths: paths, size: Int(size), operations: stride(from: reader, to: operations, by: 2))
                }
            }
        }
    }

    /// Where a store keeps its blob files: its bucket map, read from `manifest` (the on-disk layout of
    /// docs/STORAGE.md; the scenario's identifiers are plain hex, so a file's name is its identifier).
    struct StoreLayout {
        let bucketsFolder: String
        /// (lower bound, folder number) in identifier order.
        let buckets: [(bound: [UInt8], number: Int)]

        /// Reads the manifest of the store in `storeFolder`.
        init(storeFolder: String) throws {
            bucketsFolder = storeFolder + "/b"
            let text = try String(contentsOfFile: storeFolder + "/manifest", encoding: .utf8)
            var buckets: [(bound: [UInt8], number: Int)] = []
            for line in text.split(separator: "\n") {
                let fields = line.split(separator: " ")
                guard fields.count == 3, fields[0] == "bucket", let number = Int(fields[1]) else { continue }
                buckets.append((fields[2] == "-" ? [] : Self.hexBytes(fields[2]), number))
            }
            guard !buckets.isEmpty else { throw BenchFailure("no buckets in \(storeFolder)/manifest") }
            self.buckets = buckets
        }

        /// The blob file of `identifier`: the last bucket whose lower bound is ≤ the identifier.
        func path(of identifier: String) -> String {
            let key = Array(identifier.utf8)
            var low = 0
            var high = buckets.count - 1
            while low < high {
                let middle = (low + high + 1) / 2
                if !key.lexicographicallyPrecedes(buckets[middle].bound) { low = middle } else { high = middle - 1 }
            }
            return bucketsFolder + "/\(buckets[low].number)/" + identifier
        }

        /// The bytes of a hex-encoded bucket bound.
        private static func hexBytes(_ text: Substring) -> [UInt8] {
            var bytes: [UInt8] = []
            var index = text.startIndex
            while index < text.endIndex, let next = text.index(index, offsetBy: 2, limitedBy: text.endIndex) {
                bytes.append(UInt8(text[index..<next], radix: 16) ?? 0)
                index = next
            }
            return bytes
        }
    }

    /// Waits until nothing in this process holds `subject`'s store any more (its `.lock` can be taken),
    /// at most 10 s. Releasing the last reference closes the store, but work items finishing on its
    /// queues may hold it a moment longer.
    private static func waitUntilClosed(_ subject: Subject) async throws {
        let path = subject.root + "/" + subject.name + "/.lock"
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let fd = open(path, O_RDWR | O_CLOEXEC)
            guard fd >= 0 else { return }
            // A second open file description conflicts with the store's own even within one process.
            let free = flock(fd, LOCK_EX | LOCK_NB) == 0
            if free { flock(fd, LOCK_UN) }
            close(fd)
            if free { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw BenchFailure("store \(subject.name) is still open in the bench 10 s after its last use")
    }

    /// Bytes this process read from storage (`read_bytes` of `/proc/self/io`: reads the page cache
    /// could not serve) per operation, per variant and repetition. It tells a store that slows down
    /// by itself from a data set that no longer stays in memory.
    final class StorageReads: Sendable {
        private let samples = Locked<[String: [Double]]>([:])

        /// Times `body` with ``Timing/measure(_:)`` and records the storage reads it caused under `name`.
        func count(_ name: String, operations: Int, _ body: () async throws -> Void) async throws -> Duration {
            let before = Self.readBytes()
            let elapsed = try await Timing.measure(body)
            let after = Self.readBytes()
            samples.withLock { $0[name, default: []].append(Double(after - before) / Double(max(operations, 1))) }
            return elapsed
        }

        /// The median over repetitions for `name` (bytes per operation).
        func median(_ name: String) -> Double { Stats.median(samples.withLock { $0[name] ?? [] }) }

        /// `read_bytes` of this process so far.
        static func readBytes() -> Int {
            guard let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) else { return 0 }
            for line in text.split(separator: "\n") where line.hasPrefix("read_bytes:") {
                return Int(line.dropFirst("read_bytes:".count).trimmingCharacters(in: .whitespaces)) ?? 0
            }
            return 0
        }
    }

    // MARK: - Start-up

    /// Embedded open + first get in a fresh process, and a fresh daemon until its first GET is
    /// answered, at both sizes, interleaved.
    private func startUp(_ context: ScenarioContext, subjects: [Subject]) async throws -> [Figure] {
        let repetitions = context.count(5, quick: 3)
        /// One repetition's timings of one store, in milliseconds.
        struct Sample: Sendable {
            var open: Double
            var get: Double
            var wall: Double
            var peakKiB: Double
            var daemonAccepting: Double
            var daemonAnswered: Double
        }
        let samples = try await DedicatedThread.run { () throws -> [[Sample]] in
            var samples = Array(repeating: [Sample](), count: subjects.count)
            for repetition in 0..<repetitions {
                var line = "[scale start-up] \(repetition + 1)/\(repetitions):"
                for (index, subject) in subjects.enumerated() {
                    let outcome = try ChildRun.run(
                        ScaleChild.openArguments(root: subject.root, store: subject.name, identifier: subject.randomExisting()))
                    let fields = outcome.fields
                    guard outcome.status == 0, let open = fields["open_ms"].flatMap(Double.init), let get = fields["get_ms"].flatMap(Double.init),
                        fields["bytes"] == String(Self.blobBytes)
                    else { throw BenchFailure("the start-up child failed on \(subject.name) (status \(outcome.status)): \(outcome.output)") }
                    let (accepting, answered) = try Self.daemonStart(subject)
                    samples[index].append(
                        Sample(
                            open: open, get: get, wall: ChildRun.milliseconds(outcome.wallTime),
                            peakKiB: fields["hwm_kib"].flatMap(Double.init) ?? 0, daemonAccepting: accepting, daemonAnswered: answered))
                    line += " \(subject.label): open+get \(Report.compact(open + get)) ms, daemon \(Report.compact(answered)) ms;"
                }
                Console.progress(line)
            }
            return samples
        }
        var figures: [Figure] = []
        for (index, subject) in subjects.enumerated() {
            let rows = samples[index]
            let embedded = Stats.median(rows.map { $0.open + $0.get })
            let daemon = Stats.median(rows.map(\.daemonAnswered))
            figures += [
                Figure(
                    name: "embedded start-up at \(subject.label): fresh process, open \(Report.compact(Stats.median(rows.map(\.open)))) ms "
                        + "+ first get \(Report.compact(Stats.median(rows.map(\.get)))) ms (median of \(rows.count))",
                    value: embedded, unit: "ms", target: "≤ 200 ms", met: embedded <= 200),
                Figure(
                    name: "  same, whole child process (spawn → exit, incl. Swift runtime start), peak RSS \(Report.compact(Stats.median(rows.map(\.peakKiB)) / 1024)) MiB",
                    value: Stats.median(rows.map(\.wall)), unit: "ms"),
                Figure(
                    name: "daemon start-up at \(subject.label): spawn → first GET answered (accepting after \(Report.compact(Stats.median(rows.map(\.daemonAccepting)))) ms; median of \(rows.count))",
                    value: daemon, unit: "ms", target: "≤ 200 ms", met: daemon <= 200),
            ]
        }
        return figures
    }

    /// Starts a daemon on the subject's root and GETs one blob: milliseconds until it accepted a
    /// connection and until the GET was answered, both from just before the spawn. Blocking.
    private static func daemonStart(_ subject: Subject) throws -> (accepting: Double, answered: Double) {
        let socketFolder = "/tmp/bbs-\(getpid())-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        defer { Self.removeSocketFolder(socketFolder) }
        let identifier = subject.randomExisting()
        let clock = ContinuousClock()
        let started = clock.now
        let daemon = try BenchDaemon(root: subject.root, socketPath: socketFolder + "/d.sock", arguments: ["--durability", "relaxed"])
        defer { daemon.stop() }
        let accepting = clock.now
        let client = try ProbeClient(path: daemon.socketPath)
        defer { client.close() }
        let (head, body) = try client.exchange(.get, "/v1/stores/\(subject.name)/blobs/\(identifier)")
        let answered = clock.now
        guard head.status == 200, body.count == blobBytes else {
            throw BenchFailure("daemon GET of \(subject.name)/\(identifier): status \(head.status), \(body.count) bytes")
        }
        return (ChildRun.milliseconds(started.duration(to: accepting)), ChildRun.milliseconds(started.duration(to: answered)))
    }

    /// Removes a daemon's socket folder (the daemon removes its socket file when it stops).
    static func removeSocketFolder(_ folder: String) {
        _ = unlink(folder + "/d.sock")
        _ = rmdir(folder)
    }

    // MARK: - Listing

    /// Lists each store completely by pages of 1,000 in a child process: time, rate, and the child's peak RSS.
    private func listing(subjects: [Subject]) async throws -> [Figure] {
        var figures: [Figure] = []
        for subject in subjects {
            let outcome = try await DedicatedThread.run {
                try ChildRun.run(ScaleChild.listArguments(root: subject.root, store: subject.name, limit: Self.pageSize))
            }
            let fields = outcome.fields
            guard outcome.status == 0, let listed = fields["count"].flatMap(Int.init), let seconds = fields["seconds"].flatMap(Double.init),
                let peak = fields["hwm_kib"].flatMap(Double.init)
            else { throw BenchFailure("the listing child failed on \(subject.name) (status \(outcome.status)): \(outcome.output)") }
            guard listed == subject.count, fields["order_errors"] == "0" else {
                throw BenchFailure(
                    "listing \(subject.name) returned \(listed) blobs (expected \(subject.count)), \(fields["order_errors"] ?? "?") out of order")
            }
            let pages = fields["pages"] ?? "?"
            let readBytes = fields["read_bytes"].flatMap(Double.init) ?? 0
            let writeBytes = fields["write_bytes"].flatMap(Double.init) ?? 0
            Console.progress("[scale] listed \(subject.name): \(listed) blobs in \(pages) pages, \(Report.fixed(seconds)) s, child peak RSS \(Report.compact(peak / 1024)) MiB")
            figures.append(
                Figure(name: "list all \(subject.label) by pages of \(Self.pageSize), embedded, fresh process (\(pages) pages)", value: seconds, unit: "s"))
            figures.append(Figure(name: "  same, blobs listed per second", value: Double(listed) / max(seconds, 1e-9), unit: "blobs/s"))
            figures.append(Figure(name: "  same, child's peak RSS (VmHWM)", value: peak / 1024, unit: "MiB"))
            figures.append(
                Figure(
                    name: "  same, read from storage (page-cache misses; \(Report.compact(writeBytes / 1_048_576)) MiB written: atime updates)",
                    value: readBytes / 1_048_576, unit: "MiB"))
        }
        return figures
    }

    /// Pages listed through the daemon: enough for its memory and page rate to settle. The whole
    /// store is listed once already (in a child); a second full pass would add minutes, not insight.
    static let daemonPages = 100

    /// Lists the first ``daemonPages`` pages of the big store through a fresh daemon
    /// (`GET …/blobs?limit=1000&cursor=…`): time, and the daemon's RSS before and at its peak.
    private func daemonListing(_ subject: Subject) async throws -> [Figure] {
        /// What the listing thread measured.
        struct Outcome: Sendable {
            var seconds: Double
            var listed: Int
            var pages: Int
            var complete: Bool
            var before: Int
            var sampledPeak: Int
            var peak: Int
        }
        let outcome = try await DedicatedThread.run { () throws -> Outcome in
            let socketFolder = "/tmp/bbs-\(getpid())-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
            defer { Self.removeSocketFolder(socketFolder) }
            let daemon = try BenchDaemon(root: subject.root, socketPath: socketFolder + "/d.sock", arguments: ["--durability", "relaxed"])
            defer { daemon.stop() }
            let client = try ProbeClient(path: daemon.socketPath)
            defer { client.close() }
            guard try client.exchange(.get, "/v1/health").head.status == 200 else { throw BenchFailure("the daemon's health check failed") }
            let before = ProcMemory(pid: daemon.pid)?.residentBytes ?? 0
            let sampler = RSSSampler(pid: daemon.pid)
            let clock = ContinuousClock()
            let started = clock.now
            var cursor: String?
            var listed = 0
            var pages = 0
            repeat {
                var target = "/v1/stores/\(subject.name)/blobs?limit=\(Self.pageSize)"
                if let cursor { target += "&cursor=" + PercentEncoding.encode(cursor) }
                let (head, body) = try client.exchange(.get, target)
                guard head.status == 200 else {
                    throw BenchFailure("listing \(subject.name) through the daemon: status \(head.status): \(String(decoding: body, as: UTF8.self))")
                }
                let page = DaemonPage(body)
                listed += page.items
                pages += 1
                cursor = page.nextCursor
            } while cursor != nil && pages < Self.daemonPages
            let elapsed = started.duration(to: clock.now)
            let sampled = sampler.stop().peakBytes
            let peak = ProcMemory(pid: daemon.pid)?.peakResidentBytes ?? 0
            return Outcome(
                seconds: ChildRun.milliseconds(elapsed) / 1000, listed: listed, pages: pages, complete: cursor == nil, before: before,
                sampledPeak: sampled, peak: peak)
        }
        let expected = outcome.complete ? subject.count : outcome.pages * Self.pageSize
        guard outcome.listed == expected else {
            throw BenchFailure("listing \(subject.name) through the daemon returned \(outcome.listed) blobs in \(outcome.pages) pages, expected \(expected)")
        }
        let what = outcome.complete ? "all \(subject.label)" : "the first \(ScaleScenario.countLabel(outcome.listed)) blobs of the \(subject.label) store"
        Console.progress(
            "[scale] listed \(subject.name) through the daemon: \(outcome.listed) blobs in \(outcome.pages) pages, "
                + "\(Report.fixed(outcome.seconds)) s, daemon RSS \(Report.compact(Double(outcome.before) / 1_048_576)) → peak \(Report.compact(Double(outcome.peak) / 1_048_576)) MiB")
        return [
            Figure(name: "list \(what) by pages of \(Self.pageSize) through the daemon (\(outcome.pages) pages)", value: outcome.seconds, unit: "s"),
            Figure(name: "  same, blobs listed per second", value: Double(outcome.listed) / max(outcome.seconds, 1e-9), unit: "blobs/s"),
            Figure(
                name: "  same, daemon peak RSS (VmHWM; \(Report.compact(Double(outcome.before) / 1_048_576)) MiB before, sampled max \(Report.compact(Double(outcome.sampledPeak) / 1_048_576)) MiB)",
                value: Double(outcome.peak) / 1_048_576, unit: "MiB"),
        ]
    }

    /// The item count and `nextCursor` of a listing page, found by scanning the JSON bytes (a
    /// thousand pages of a thousand items through `JSONSerialization` would cost the client more
    /// than the daemon spends serving them).
    struct DaemonPage {
        var items = 0
        var nextCursor: String?

        /// Scans one page's JSON body.
        init(_ body: [UInt8]) {
            let itemKey = Array(#"{"identifier":"#.utf8)
            let cursorKey = Array(#""nextCursor":"#.utf8)
            var index = 0
            while index + itemKey.count <= body.count {
                if body[index] == itemKey[0], body[index..<(index + itemKey.count)].elementsEqual(itemKey) {
                    items += 1
                    index += itemKey.count
                } else {
                    index += 1
                }
            }
            // The cursor is the last field of the object.
            var position = body.count - cursorKey.count
            while position >= 0, !body[position..<(position + cursorKey.count)].elementsEqual(cursorKey) { position -= 1 }
            guard position >= 0 else { return }
            let valueStart = position + cursorKey.count
            guard valueStart < body.count, body[valueStart] == UInt8(ascii: "\"") else { return }
            guard let close = body[(valueStart + 1)...].firstIndex(of: UInt8(ascii: "\"")) else { return }
            nextCursor = String(decoding: body[(valueStart + 1)..<close], as: UTF8.self)
        }
    }

    // MARK: - Cleanup

    /// Truncates every file under `root` to zero bytes from 4 threads, one folder at a time each, and
    /// returns how many files it truncated. Same as ``Cleanup/release(_:)`` (blocks freed now, inodes
    /// deleted at the end of the run), but each truncate waits for a TRIM on this disk, and a million
    /// of them one after another take minutes; the device overlaps TRIMs from several threads.
    static func releaseInParallel(_ root: String, threads: Int = 4) async throws -> Int {
        var folders: [String] = []
        var pending = [root]
        while let folder = pending.popLast() {
            folders.append(folder)
            for entry in (try? Files.entries(of: folder)) ?? [] where entry.kind == .directory {
                pending.append(folder + "/" + entry.name)
            }
        }
        let truncated = Locked(0)
        let shared = folders
        try await Workers.run(threads) { thread in
            var count = 0
            for index in stride(from: thread, to: shared.count, by: threads) {
                let folder = shared[index]
                for entry in (try? Files.entries(of: folder)) ?? [] where entry.kind == .regular {
                    if truncate(folder + "/" + entry.name, 0) == 0 { count += 1 }
                }
            }
            truncated.withLock { $0 += count }
        }
        return truncated.withLock { $0 }
    }
}
