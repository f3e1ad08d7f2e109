import Foundation

/// What a root's `.blobd.lock` says about the blobd serving it: `pid N` on the first line, then
/// `socket PATH` once the daemon listens (docs/PROTOCOL.md, "Running the daemon").
struct DaemonRecord: Equatable {
    /// The first line, `pid N`, as the store lock files spell a holder.
    var pid: String
    /// The absolute path of the socket the daemon listens on, when it says.
    var socket: String?

    /// The record in `root`'s `.blobd.lock`, or nil when there is none (no daemon ever served the
    /// root) or it cannot be read. Says nothing about whether that daemon still runs. Blocking.
    static func read(root: String) -> DaemonRecord? {
        guard let text = try? String(contentsOfFile: root + "/.blobd.lock", encoding: .utf8) else { return nil }
        return parse(text)
    }

    /// The record in the text of a `.blobd.lock`.
    static func parse(_ text: String) -> DaemonRecord? {
        let lines = text.split(separator: "\n")
        guard let first = lines.first?.trimmingCharacters(in: .whitespaces), first.hasPrefix("pid ") else { return nil }
        // The path as written, spaces included.
        let socket = lines.dropFirst().first { $0.hasPrefix("socket /") }.map { String($0.dropFirst("socket ".count)) }
        return DaemonRecord(pid: first, socket: socket)
    }
}
