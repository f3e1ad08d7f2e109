import BlobStore
import Foundation
import Glibc

/// The hidden subcommands the `scale` scenario runs in child processes (see `main.swift`):
///
/// - `blob-bench __scale-open --root R --store S --id ID`: opens the store, gets one blob, and prints
///   how long each took. A fresh process is the honest measure of start-up: no store registry, no
///   engine and no bucket counts left over from the bench's own use of the store.
/// - `blob-bench __scale-list --root R --store S --limit N`: lists the whole store by pages of N and
///   prints the time and the process's own peak RSS (VmHWM), which then belongs to the listing alone.
///
/// Each prints one line of `key=value` pairs on standard output; errors go to standard error with
/// exit status 1.
enum ScaleChild {
    static let openCommand = "__scale-open"
    static let listCommand = "__scale-list"

    /// Runs the subcommand named by `arguments[1]` and returns its exit status; `nil` when
    /// `arguments` is not a child command line.
    static func runIfChild(_ arguments: [String]) async -> Int32? {
        guard arguments.count > 1, arguments[1] == openCommand || arguments[1] == listCommand else { return nil }
        let options = Dictionary(
            stride(from: 2, to: arguments.count - 1, by: 2).map { (arguments[$0], arguments[$0 + 1]) }, uniquingKeysWith: { $1 })
        guard let root = options["--root"], let name = options["--store"] else {
            Console.progress("blob-bench \(arguments[1]): needs --root and --store")
            return 64
        }
        do {
            if arguments[1] == openCommand {
                guard let identifier = options["--id"] else {
                    Console.progress("blob-bench \(arguments[1]): needs --id")
                    return 64
                }
                try await open(root: root, name: name, identifier: identifier)
            } else {
                try await list(root: root, name: name, limit: options["--limit"].flatMap { Int($0) } ?? 1000)
            }
            return 0
        } catch {
            Console.progress("blob-bench \(arguments[1]): \(error)")
            return 1
        }
    }

    /// The arguments (after the program) of an open child, for the parent.
    static func openArguments(root: String, store: String, identifier: String) -> [String] {
        [openCommand, "--root", root, "--store", store, "--id", identifier]
    }

    /// The arguments (after the program) of a listing child, for the parent.
    static func listArguments(root: String, store: String, limit: Int) -> [String] {
        [listCommand, "--root", root, "--store", store, "--limit", String(limit)]
    }

    /// Opens the store and gets one blob: `open_ms= get_ms= bytes= hwm_kib=`.
    private static func open(root: String, name: String, identifier: String) async throws {
        let clock = ContinuousClock()
        let started = clock.now
        let store = try PersistentDataStore(name: name, root: URL(fileURLWithPath: root), configuration: .init(durability: .relaxed))
        let opened = clock.now
        let data = try await store.get(identifier)
        let got = clock.now
        let peak = ProcMemory(pid: getpid())?.peakResidentBytes ?? 0
        emit(
            "open_ms=\(ChildRun.milliseconds(started.duration(to: opened))) get_ms=\(ChildRun.milliseconds(opened.duration(to: got))) "
                + "bytes=\(data.count) hwm_kib=\(peak / 1024)")
    }

    /// Lists every blob by pages of `limit`, checking that identifiers come strictly in order:
    /// `count= pages= seconds= first_page_ms= order_errors= rss_before_kib= hwm_kib= read_bytes= write_bytes=`
    /// (the last two from `/proc/self/io`: storage reads the page cache could not serve, and pages
    /// this process dirtied).
    private static func list(root: String, name: String, limit: Int) async throws {
        let store = try PersistentDataStore(name: name, root: URL(fileURLWithPath: root), configuration: .init(durability: .relaxed))
        let before = ProcMemory(pid: getpid())?.residentBytes ?? 0
        let clock = ContinuousClock()
        let started = clock.now
        var firstPage: Duration?
        var query = ListQuery(limit: limit)
        var count = 0
        var pages = 0
        var orderErrors = 0
        var previous: String?
        while true {
            let page = try await store.list(query)
            if firstPage == nil { firstPage = started.duration(to: clock.now) }
            pages += 1
            count += page.items.count
            for item in page.items {
                if let previous, !previous.utf8.lexicographicallyPrecedes(item.identifier.utf8) { orderErrors += 1 }
                previous = item.identifier
            }
            guard let next = page.nextCursor else { break }
            query.cursor = next
        }
        let elapsed = started.duration(to: clock.now)
        let peak = ProcMemory(pid: getpid())?.peakResidentBytes ?? 0
        emit(
            "count=\(count) pages=\(pages) seconds=\(ChildRun.milliseconds(elapsed) / 1000) "
                + "first_page_ms=\(ChildRun.milliseconds(firstPage ?? .zero)) order_errors=\(orderErrors) "
                + "rss_before_kib=\(before / 1024) hwm_kib=\(peak / 1024) " + ioCounters())
    }

    /// `read_bytes=N write_bytes=N` from `/proc/self/io`.
    private static func ioCounters() -> String {
        guard let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) else { return "" }
        return text.split(separator: "\n").filter { $0.hasPrefix("read_bytes:") || $0.hasPrefix("write_bytes:") }
            .map { $0.replacingOccurrences(of: ":", with: "=").replacingOccurrences(of: " ", with: "") }.joined(separator: " ")
    }

    /// Writes one line to standard output (file descriptor 1: the global `stdout` is off limits in
    /// nonisolated Swift 6 code, and the parent reads the pipe to its end).
    private static func emit(_ line: String) {
        var text = line + "\n"
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(1, bytes.baseAddress! + offset, bytes.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }
}
