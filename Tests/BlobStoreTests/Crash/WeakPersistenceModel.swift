import BlobSystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A file system that keeps, across a power cut, only what the program asked it to keep — the
/// weakest behaviour POSIX allows, in the spirit of ALICE (OSDI '14) and CrashMonkey:
///
/// - a file's data is durable only as of its last `fsync`/`fdatasync`; anything written since may
///   be lost, or kept in part (a prefix: the persisted size never covers data that did not reach the
///   disk, as with ext4 `data=ordered`, XFS or btrfs);
/// - a name created, replaced or removed in a folder (`open(O_CREAT)`, `mkdir`, `rename`, `link`,
///   `unlink`) is durable only once that folder is `fsync`ed; until then each name may come back as
///   any binding it had since the folder's last sync, independently of every other name (so a
///   `rename` between folders may persist at neither end, or at both);
/// - `fsync` of a folder does not make the folder's own name durable;
/// - `syncfs` keeps nothing (FUSE passes it to virtiofs only).
///
/// Fed the calls a ``MutationRecorder`` kept, in order; ``crashStates(limit:random:)`` lists file
/// trees a power cut at this point could leave.
struct WeakPersistenceModel {
    private enum Kind { case file, folder }

    private struct Inode {
        var kind: Kind
        /// Files: the content now, and as of the last sync.
        var data: [UInt8] = []
        var synced: [UInt8] = []
        /// Folders: the entries now, as of the last sync, and every binding each name had since.
        var entries: [String: Int] = [:]
        var persisted: [String: Int] = [:]
        var history: [String: [Int?]] = [:]
    }

    private struct OpenFile {
        var inode: Int
        var offset: Int64
    }

    private let root: String
    private var inodes: [Inode] = [Inode(kind: .folder)]
    private var descriptors: [Int32: OpenFile] = [:]
    /// Calls the model could not follow (a path it does not know): the recording is incomplete.
    private(set) var problems: [String] = []

    init(root: String) { self.root = root.hasSuffix("/") ? root : root + "/" }

    // MARK: - Following calls

    private func components(_ path: String) -> [String]? {
        if path + "/" == root { return [] }
        guard path.hasPrefix(root) else { return nil }
        return path.dropFirst(root.count).split(separator: "/").map(String.init)
    }

    /// The folder that holds `path` and the last component.
    private func parent(_ path: String) -> (folder: Int, name: String)? {
        guard var parts = components(path), let name = parts.popLast() else { return nil }
        var folder = 0
        for part in parts {
            guard let next = inodes[folder].entries[part], inodes[next].kind == .folder else { return nil }
            folder = next
        }
        return (folder, name)
    }

    private func lookup(_ path: String) -> Int? {
        if path + "/" == root { return 0 }
        guard let (folder, name) = parent(path) else { return nil }
        return inodes[folder].entries[name]
    }

    private mutating func bind(_ folder: Int, _ name: String, _ inode: Int?) {
        inodes[folder].entries[name] = inode
        inodes[folder].history[name, default: []].append(inode)
    }

    private mutating func newInode(_ kind: Kind) -> Int {
        inodes.append(Inode(kind: kind))
        return inodes.count - 1
    }

    mutating func apply(_ call: FileSystemCall) {
        switch call {
        case .open(let path, let flags, let descriptor):
            var inode = lookup(path)
            if inode == nil, flags & O_CREAT != 0, let (folder, name) = parent(path) {
                inode = newInode(.file)
                bind(folder, name, inode)
            }
            guard let inode else { return problems.append("open of unknown \(path)") }
            if flags & O_TRUNC != 0 { inodes[inode].data = [] }
            descriptors[descriptor] = OpenFile(inode: inode, offset: 0)
        case .close(let descriptor):
            descriptors[descriptor] = nil
        case .write(let descriptor, let offset, let bytes):
            guard var file = descriptors[descriptor] else { return problems.append("write to unknown descriptor") }
            let start = Int(offset ?? file.offset)
            var data = inodes[file.inode].data
            if data.count < start + bytes.count { data += [UInt8](repeating: 0, count: start + bytes.count - data.count) }
            data.replaceSubrange(start..<(start + bytes.count), with: bytes)
            inodes[file.inode].data = data
            if offset == nil {
                file.offset += Int64(bytes.count)
                descriptors[descriptor] = file
            }
        case .seek(let descriptor, let offset):
            descriptors[descriptor]?.offset = offset
        case .resize(let descriptor, let size):
            guard let file = descriptors[descriptor] else { return }
            var data = inodes[file.inode].data
            if data.count > Int(size) { data.removeLast(data.count - Int(size)) } else { data += [UInt8](repeating: 0, count: Int(size) - data.count) }
            inodes[file.inode].data = data
        case .dataSync(let descriptor), .sync(let descriptor):
            guard let file = descriptors[descriptor] else { return }
            if inodes[file.inode].kind == .file {
                inodes[file.inode].synced = inodes[file.inode].data
            } else {
                inodes[file.inode].persisted = inodes[file.inode].entries
                inodes[file.inode].history = [:]
            }
        case .syncFileSystem:
            break  // keeps nothing
        case .read:
            break  // changes nothing (the recorder never keeps reads)
        case .makeDirectory(let path):
            guard let (folder, name) = parent(path) else { return problems.append("mkdir in unknown \(path)") }
            bind(folder, name, newInode(.folder))
        case .removeDirectory(let path), .unlink(let path):
            guard let (folder, name) = parent(path) else { return problems.append("removal in unknown \(path)") }
            bind(folder, name, nil)
        case .rename(let from, let to):
            guard let (source, sourceName) = parent(from), let inode = inodes[source].entries[sourceName],
                let (target, targetName) = parent(to)
            else { return problems.append("rename of unknown \(from)") }
            if inodes[target].entries[targetName] == inode { return }  // two names of one file: rename does nothing
            bind(source, sourceName, nil)
            bind(target, targetName, inode)
        }
    }

    // MARK: - Crash states

    /// A file tree a power cut could leave: relative path → content (`nil` for a folder).
    typealias Tree = [String: [UInt8]?]

    /// Builds one crash state, asking `choose(n)` for an index below `n` at every point where the model allows several outcomes.
    private func build(_ choose: (Int) -> Int) -> Tree {
        var tree: Tree = [:]
        var contents: [Int: [UInt8]] = [:]
        func content(of inode: Int) -> [UInt8] {
            if let known = contents[inode] { return known }
            let node = inodes[inode]
            var options = [node.synced]
            if node.data != node.synced {
                let torn = Array(node.data.prefix(max(node.synced.count, node.data.count / 2)))
                if torn != node.synced && torn != node.data { options.append(torn) }
                options.append(node.data)
            }
            let chosen = options[options.count == 1 ? 0 : choose(options.count)]
            contents[inode] = chosen
            return chosen
        }
        func walk(_ folder: Int, _ prefix: String) {
            let node = inodes[folder]
            for name in Set(node.persisted.keys).union(node.history.keys).sorted() {
                var options: [Int?] = [node.persisted[name]]
                for binding in node.history[name] ?? [] where !options.contains(binding) { options.append(binding) }
                guard let inode = options[options.count == 1 ? 0 : choose(options.count)] else { continue }
                let path = prefix + name
                if inodes[inode].kind == .folder {
                    tree[path] = .some(nil)
                    walk(inode, path + "/")
                } else {
                    tree[path] = content(of: inode)
                }
            }
        }
        walk(0, "")
        return tree
    }

    /// Up to `limit` distinct crash states: all of them when there are no more than `limit`, else
    /// the two extremes (everything unsynced lost; everything kept) and random picks from `random`.
    func crashStates(limit: Int, random: inout SplitMix64) -> (states: [Tree], total: Int?) {
        // Depth-first over the choices, stopping past `limit`.
        var states: [Tree] = []
        var prefix: [(choice: Int, count: Int)] = []
        while true {
            var step = 0
            var taken: [(choice: Int, count: Int)] = []
            let tree = build { count in
                let choice = step < prefix.count ? prefix[step].choice : 0
                taken.append((choice, count))
                step += 1
                return choice
            }
            states.append(tree)
            if states.count > limit { break }
            guard let last = taken.lastIndex(where: { $0.choice + 1 < $0.count }) else { return (states, states.count) }
            prefix = Array(taken[..<last]) + [(taken[last].choice + 1, taken[last].count)]
        }
        var sampled = [build { _ in 0 }, build { $0 - 1 }]
        var seen = Set(sampled.map(Self.fingerprint))
        var attempts = 0
        while sampled.count < limit && attempts < limit * 4 {
            attempts += 1
            let tree = build { Int(random.next() % UInt64($0)) }
            if seen.insert(Self.fingerprint(tree)).inserted { sampled.append(tree) }
        }
        return (sampled, nil)
    }

    private static func fingerprint(_ tree: Tree) -> String {
        tree.keys.sorted().map { key in "\(key)=\(tree[key]!.map { "\($0.count):\(CrashContent.hash($0))" } ?? "dir")" }.joined(separator: ";")
    }

    /// Writes `tree` under `folder` (which exists).
    static func materialise(_ tree: Tree, in folder: String) throws {
        for path in tree.keys.sorted() {
            let full = folder + "/" + path
            if let content = tree[path]! {
                guard FileManager.default.createFile(atPath: full, contents: Data(content)) else {
                    throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: full])
                }
            } else {
                try FileManager.default.createDirectory(atPath: full, withIntermediateDirectories: false)
            }
        }
    }
}
