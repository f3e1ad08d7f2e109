#!/usr/bin/env python3
"""A FUSE file system that models a disk with weak persistence, for power-cut tests.

Everything lives in memory, in two layers:

- the *volatile* layer is what processes see: inodes (files with their bytes, folders with their
  entries name -> inode) and link counts, changed by every write, create, mkdir, rename, link,
  unlink and truncate;
- the *persisted* layer is what survives a power cut. Only two calls add to it:
  `fsync`/`fdatasync` of a file copies that file's current bytes (and so its size), and `fsync` of a
  folder copies that folder's current entries (names -> inodes). Nothing else persists: not a
  created file's name, not a rename, not a new folder's entry in its parent. `syncfs(2)` is not
  forwarded to FUSE servers by the kernel, so it persists nothing either, as on a real disk whose
  file system ignored it.

A power cut is: unmount (after killing the processes that use the mount). On exit the persisted
layer is written to the state file (`--state`), and the next mount presents exactly that state: the
folders reachable from the root through persisted entries, each file with its persisted bytes (a
file whose name was persisted but whose bytes never were is empty). A fresh mount also gives the
kernel a fresh view, so no page or dentry cache can hide what was dropped.

`--writeback P` models the kernel's background writeback having run, in any order, before the power
went: at the cut each file whose bytes differ from its persisted bytes is persisted with probability
P (half of those only up to a random 4 KiB boundary, a torn write), and each folder whose entries
differ is persisted with probability P. With P = 0 (the default) nothing unsynced survives.

Renames accept `RENAME_NOREPLACE`; `--refuse-rename-flags` answers EINVAL to any rename flag, as
FUSE servers that predate renameat2 do. `O_TMPFILE` is not offered (the kernel answers EOPNOTSUPP).
syncfs aside, these are the two calls the store must fall back from on such file systems.

Usage: powercut_fs.py --state FILE [--writeback P] [--seed N] [--refuse-rename-flags] MOUNTPOINT
(runs in the foreground until unmounted: `fusermount3 -u MOUNTPOINT`). Needs mfusepy and libfuse3.
`powercut_fs.py --dump FILE` prints the persisted tree a state file holds.
"""

import argparse
import errno
import json
import os
import pickle
import random
import stat
import sys
import threading
import time

RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
ROOT_INO = 1
HIDDEN_PREFIX = ".fuse_hidden"


class Node:
    """One volatile inode: a file (`data`) or a folder (`entries`)."""

    __slots__ = ("ino", "is_dir", "mode", "uid", "gid", "data", "entries", "mtime")

    def __init__(self, ino, is_dir, mode, uid=0, gid=0):
        self.ino = ino
        self.is_dir = is_dir
        self.mode = mode & 0o7777
        self.uid = uid
        self.gid = gid
        self.data = None if is_dir else bytearray()
        self.entries = {} if is_dir else None
        self.mtime = time.time_ns()

    def meta(self):
        return (self.is_dir, self.mode, self.uid, self.gid)


def fail(code):
    raise OSError(code, os.strerror(code))


class WeakDisk:
    """The two layers and the FUSE operations on them (mfusepy's high-level, path-based API).

    Every operation holds `lock`: libfuse calls from several threads, and the model is small enough
    that serialising it costs little next to the Python call overhead.
    """

    use_ns = True
    flag_nopath = True
    flag_nullpath_ok = True

    def __init__(self, state_path, refuse_rename_flags):
        self.mutex = threading.Lock()
        self.state_path = state_path
        self.refuse_rename_flags = refuse_rename_flags
        self.nodes = {}  # ino -> Node (volatile)
        self.links = {}  # ino -> names referring to it (volatile)
        self.opens = {}  # ino -> open handles
        self.handles = {}  # fh -> ino
        self.hidden = {}  # path -> ino: files unlinked while open (libfuse's ".fuse_hidden" names)
        self.next_fh = 1
        self.next_ino = ROOT_INO + 1
        self.p_data = {}  # ino -> bytes (persisted file contents)
        self.p_entries = {}  # ino -> {name: ino} (persisted folder entries)
        self.p_meta = {}  # ino -> (is_dir, mode, uid, gid)
        self.stats = {"fsync": 0, "fsyncdir": 0, "rename_flags_refused": 0}
        self.load()

    # ----- persisted state -----

    def load(self):
        state = None
        if self.state_path and os.path.exists(self.state_path):
            with open(self.state_path, "rb") as f:
                state = pickle.load(f)
        if state is None:
            root = Node(ROOT_INO, True, 0o755)
            self.nodes[ROOT_INO] = root
            self.links[ROOT_INO] = 1
            self.p_meta[ROOT_INO] = root.meta()
            self.p_entries[ROOT_INO] = {}
            return
        self.next_ino = state["next_ino"]
        p_data, p_entries, p_meta = state["data"], state["entries"], state["meta"]
        # Rebuild the volatile layer from what is reachable through persisted entries. A folder
        # reached a second time (its move was persisted in the new parent but not out of the old
        # one) keeps its first name: folders cannot have two.
        seen_dirs = set()
        queue = [ROOT_INO]
        while queue:
            ino = queue.pop(0)
            is_dir, mode, uid, gid = p_meta[ino]
            node = Node(ino, is_dir, mode, uid, gid)
            self.nodes[ino] = node
            if not is_dir:
                node.data = bytearray(p_data.get(ino, b""))
                continue
            seen_dirs.add(ino)
            for name, child in sorted(p_entries.get(ino, {}).items()):
                if child not in p_meta:
                    continue
                if p_meta[child][0]:
                    if child in seen_dirs or child in queue:
                        continue
                    queue.append(child)
                elif child not in self.nodes and child not in queue:
                    queue.append(child)
                node.entries[name] = child
        for node in self.nodes.values():
            if node.is_dir:
                for child in node.entries.values():
                    self.links[child] = self.links.get(child, 0) + 1
        self.links[ROOT_INO] = 1
        # What is visible now is all on the disk: the persisted layer is the volatile one.
        for ino, node in self.nodes.items():
            self.p_meta[ino] = node.meta()
            if node.is_dir:
                self.p_entries[ino] = dict(node.entries)
            else:
                self.p_data[ino] = bytes(node.data)

    def writeback(self, probability, rng):
        """Persists unsynced state at random, as background writeback before the cut would have."""
        files = dirs = 0
        for ino, node in sorted(self.nodes.items()):
            if rng.random() >= probability:
                continue
            if node.is_dir:
                if self.p_entries.get(ino) != node.entries:
                    self.persist_entries(node)
                    dirs += 1
            elif self.p_data.get(ino) != bytes(node.data):
                data = bytes(node.data)
                if len(data) > 4096 and rng.random() < 0.5:
                    data = data[: 4096 * rng.randrange(len(data) // 4096)]
                self.p_data[ino] = data
                self.p_meta[ino] = node.meta()
                files += 1
        return files, dirs

    def save(self):
        reachable = set()
        stack = [ROOT_INO]
        while stack:
            ino = stack.pop()
            if ino in reachable:
                continue
            reachable.add(ino)
            stack.extend(self.p_entries.get(ino, {}).values())
        state = {
            "next_ino": self.next_ino,
            "data": {i: d for i, d in self.p_data.items() if i in reachable},
            "entries": {i: e for i, e in self.p_entries.items() if i in reachable},
            "meta": {i: m for i, m in self.p_meta.items() if i in reachable},
        }
        tmp = self.state_path + ".tmp"
        with open(tmp, "wb") as f:
            pickle.dump(state, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, self.state_path)
        return len(reachable)

    def persist_entries(self, node):
        self.p_entries[node.ino] = dict(node.entries)
        self.p_meta[node.ino] = node.meta()
        for child in node.entries.values():
            if child not in self.p_meta:
                self.p_meta[child] = self.nodes[child].meta()

    # ----- volatile helpers -----

    def resolve(self, path):
        if path in self.hidden:
            return self.nodes[self.hidden[path]]
        ino = ROOT_INO
        for part in path.split("/"):
            if not part:
                continue
            node = self.nodes[ino]
            if not node.is_dir:
                fail(errno.ENOTDIR)
            ino = node.entries.get(part)
            if ino is None:
                fail(errno.ENOENT)
        return self.nodes[ino]

    def parent_of(self, path):
        head, _, name = path.rstrip("/").rpartition("/")
        parent = self.resolve(head or "/")
        if not parent.is_dir:
            fail(errno.ENOTDIR)
        if not name or len(name.encode("utf-8", "surrogateescape")) > 255:
            fail(errno.ENAMETOOLONG if name else errno.EINVAL)
        return parent, name

    def node_of(self, path, fh):
        if fh is not None and fh in self.handles:
            return self.nodes[self.handles[fh]]
        if path is None:
            fail(errno.EBADF)
        return self.resolve(path)

    def new_node(self, is_dir, mode):
        ino = self.next_ino
        self.next_ino += 1
        node = Node(ino, is_dir, mode)
        self.nodes[ino] = node
        self.links[ino] = 0
        return node

    def add_link(self, parent, name, ino):
        parent.entries[name] = ino
        parent.mtime = time.time_ns()
        self.links[ino] = self.links.get(ino, 0) + 1

    def drop_link(self, parent, name):
        ino = parent.entries.pop(name)
        parent.mtime = time.time_ns()
        self.links[ino] -= 1
        self.forget_if_unused(ino)

    def forget_if_unused(self, ino):
        if self.links.get(ino, 0) == 0 and self.opens.get(ino, 0) == 0 and ino != ROOT_INO:
            self.nodes.pop(ino, None)
            self.links.pop(ino, None)
            self.opens.pop(ino, None)

    def new_handle(self, node):
        fh = self.next_fh
        self.next_fh += 1
        self.handles[fh] = node.ino
        self.opens[node.ino] = self.opens.get(node.ino, 0) + 1
        return fh

    def close_handle(self, fh):
        ino = self.handles.pop(fh, None)
        if ino is not None:
            self.opens[ino] -= 1
            self.forget_if_unused(ino)

    # ----- FUSE operations -----

    def init_with_config(self, conn, config):
        if config is not None:
            # No kernel caching of data, attributes or names: every call reaches the model.
            config.direct_io = 1
            config.use_ino = 1
            config.entry_timeout = 0.0
            config.attr_timeout = 0.0
            config.negative_timeout = 0.0
            config.nullpath_ok = 1

    def getattr(self, path, fh=None):
        with self.mutex:
            node = self.node_of(path, fh)
            if node.is_dir:
                subdirs = sum(1 for i in node.entries.values() if self.nodes[i].is_dir)
                mode, nlink, size = stat.S_IFDIR | node.mode, 2 + subdirs, 4096
            else:
                mode, nlink, size = stat.S_IFREG | node.mode, self.links.get(node.ino, 0), len(node.data)
            return {
                "st_mode": mode,
                "st_ino": node.ino,
                "st_nlink": nlink,
                "st_size": size,
                "st_blocks": (size + 511) // 512,
                "st_blksize": 4096,
                "st_uid": node.uid,
                "st_gid": node.gid,
                "st_atime": node.mtime,
                "st_mtime": node.mtime,
                "st_ctime": node.mtime,
            }

    def access(self, path, amode):
        with self.mutex:
            self.resolve(path)
            return 0

    def statfs(self, path):
        return {
            "f_bsize": 4096,
            "f_frsize": 4096,
            "f_blocks": 1 << 24,
            "f_bfree": 1 << 23,
            "f_bavail": 1 << 23,
            "f_files": 1 << 22,
            "f_ffree": 1 << 21,
            "f_favail": 1 << 21,
            "f_namemax": 255,
        }

    def chmod(self, path, mode, fh=None):
        with self.mutex:
            self.node_of(path, fh).mode = mode & 0o7777
            return 0

    def chown(self, path, uid, gid):
        with self.mutex:
            node = self.node_of(path, None)
            if uid != -1:
                node.uid = uid
            if gid != -1:
                node.gid = gid
            return 0

    def utimens(self, path, times=None):
        with self.mutex:
            node = self.node_of(path, None)
            node.mtime = times[1] if times else time.time_ns()
            return 0

    def mkdir(self, path, mode):
        with self.mutex:
            parent, name = self.parent_of(path)
            if name in parent.entries:
                fail(errno.EEXIST)
            node = self.new_node(True, mode)
            self.add_link(parent, name, node.ino)
            return 0

    def rmdir(self, path):
        with self.mutex:
            parent, name = self.parent_of(path)
            ino = parent.entries.get(name)
            if ino is None:
                fail(errno.ENOENT)
            node = self.nodes[ino]
            if not node.is_dir:
                fail(errno.ENOTDIR)
            if node.entries:
                fail(errno.ENOTEMPTY)
            self.drop_link(parent, name)
            return 0

    def unlink(self, path):
        with self.mutex:
            if path in self.hidden:
                self.forget_if_unused(self.hidden.pop(path))
                return 0
            parent, name = self.parent_of(path)
            ino = parent.entries.get(name)
            if ino is None:
                fail(errno.ENOENT)
            if self.nodes[ino].is_dir:
                fail(errno.EISDIR)
            self.drop_link(parent, name)
            return 0

    def link(self, target, source):
        """Makes `target` a new name of the file `source` (mfusepy's argument order)."""
        with self.mutex:
            node = self.resolve(source)
            if node.is_dir:
                fail(errno.EPERM)
            parent, name = self.parent_of(target)
            if name in parent.entries:
                fail(errno.EEXIST)
            self.add_link(parent, name, node.ino)
            return 0

    def rename(self, old, new, flags=0):
        with self.mutex:
            if flags and self.refuse_rename_flags:
                self.stats["rename_flags_refused"] += 1
                fail(errno.EINVAL)
            if flags & ~RENAME_NOREPLACE:
                fail(errno.EINVAL)
            old_parent, old_name = self.parent_of(old)
            new_parent, new_name = self.parent_of(new)
            ino = old_parent.entries.get(old_name)
            if ino is None:
                fail(errno.ENOENT)
            if new_name.startswith(HIDDEN_PREFIX):
                # libfuse keeps a file unlinked while open under a hidden name: to the model it is
                # an unlink, and the name stays outside every folder so no listing or fsync sees it.
                self.hidden[new] = ino
                self.opens[ino] = self.opens.get(ino, 0) + 1
                self.drop_link(old_parent, old_name)
                self.opens[ino] -= 1
                return 0
            node = self.nodes[ino]
            if node.is_dir and (new + "/").startswith(old.rstrip("/") + "/"):
                fail(errno.EINVAL)
            target = new_parent.entries.get(new_name)
            if target is not None:
                if flags & RENAME_NOREPLACE:
                    fail(errno.EEXIST)
                if target == ino:
                    return 0  # two names of one file: rename(2) does nothing
                target_node = self.nodes[target]
                if target_node.is_dir and not node.is_dir:
                    fail(errno.EISDIR)
                if node.is_dir and not target_node.is_dir:
                    fail(errno.ENOTDIR)
                if target_node.is_dir and target_node.entries:
                    fail(errno.ENOTEMPTY)
                self.drop_link(new_parent, new_name)
            old_parent.entries.pop(old_name)
            old_parent.mtime = time.time_ns()
            new_parent.entries[new_name] = ino
            new_parent.mtime = time.time_ns()
            return 0

    def create(self, path, mode, flags=0):
        with self.mutex:
            parent, name = self.parent_of(path)
            ino = parent.entries.get(name)
            if ino is not None:
                if flags & os.O_EXCL:
                    fail(errno.EEXIST)
                node = self.nodes[ino]
                if node.is_dir:
                    fail(errno.EISDIR)
                if flags & os.O_TRUNC:
                    del node.data[:]
            else:
                node = self.new_node(False, mode)
                self.add_link(parent, name, node.ino)
            return self.new_handle(node)

    def open(self, path, flags):
        with self.mutex:
            node = self.resolve(path)
            if flags & os.O_TRUNC and not node.is_dir:
                del node.data[:]
            return self.new_handle(node)

    def opendir(self, path):
        with self.mutex:
            node = self.resolve(path)
            if not node.is_dir:
                fail(errno.ENOTDIR)
            return self.new_handle(node)

    def readdir(self, path, fh):
        with self.mutex:
            node = self.node_of(path, fh)
            items = [(".", {"st_mode": stat.S_IFDIR, "st_ino": node.ino}, 0), ("..", {"st_mode": stat.S_IFDIR}, 0)]
            for name, ino in node.entries.items():
                kind = stat.S_IFDIR if self.nodes[ino].is_dir else stat.S_IFREG
                items.append((name, {"st_mode": kind, "st_ino": ino}, 0))
            return items

    def read(self, path, size, offset, fh):
        with self.mutex:
            return bytes(self.node_of(path, fh).data[offset : offset + size])

    def write(self, path, data, offset, fh):
        with self.mutex:
            node = self.node_of(path, fh)
            buffer = node.data
            if offset > len(buffer):
                buffer.extend(bytes(offset - len(buffer)))
            buffer[offset : offset + len(data)] = data
            node.mtime = time.time_ns()
            return len(data)

    def truncate(self, path, length, fh=None):
        with self.mutex:
            node = self.node_of(path, fh)
            if node.is_dir:
                fail(errno.EISDIR)
            if length < len(node.data):
                del node.data[length:]
            else:
                node.data.extend(bytes(length - len(node.data)))
            node.mtime = time.time_ns()
            return 0

    def fallocate(self, path, mode, offset, size, fh):
        with self.mutex:
            node = self.node_of(path, fh)
            if mode != 0:
                fail(errno.EOPNOTSUPP)
            if offset + size > len(node.data):
                node.data.extend(bytes(offset + size - len(node.data)))
            return 0

    def flush(self, path, fh):
        return 0

    def release(self, path, fh):
        with self.mutex:
            self.close_handle(fh)
            return 0

    def releasedir(self, path, fh):
        return self.release(path, fh)

    def fsync(self, path, datasync, fh):
        with self.mutex:
            node = self.node_of(path, fh)
            self.stats["fsync"] += 1
            if node.is_dir:
                self.persist_entries(node)
            else:
                self.p_data[node.ino] = bytes(node.data)
                self.p_meta[node.ino] = node.meta()
            return 0

    def fsyncdir(self, path, datasync, fh):
        with self.mutex:
            node = self.node_of(path, fh)
            self.stats["fsyncdir"] += 1
            self.persist_entries(node)
            return 0


def dump(state_path):
    """Prints the persisted tree of a state file: what the next mount will show."""
    with open(state_path, "rb") as f:
        state = pickle.load(f)
    entries, data, meta = state["entries"], state["data"], state["meta"]

    def walk(ino, prefix):
        for name, child in sorted(entries.get(ino, {}).items()):
            if meta[child][0]:
                print(f"{prefix}{name}/  (inode {child})")
                walk(child, prefix + "  ")
            else:
                print(f"{prefix}{name}  (inode {child}, {len(data.get(child, b''))} B)")

    print("/")
    walk(ROOT_INO, "  ")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--dump":
        dump(sys.argv[2])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mountpoint")
    parser.add_argument("--state", required=True, help="file holding the persisted layer between mounts")
    parser.add_argument("--writeback", type=float, default=0.0, help="chance that unsynced state persists at the cut")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--refuse-rename-flags", action="store_true")
    parser.add_argument("--stats", help="file to write this mount's counts to (JSON) at the cut")
    args = parser.parse_args()

    import mfusepy

    class Fuse(mfusepy.FUSE):
        # mfusepy drops renameat2's flags (it would turn RENAME_NOREPLACE into a plain rename that
        # replaces): hand them to the model, which honours or refuses them.
        def rename_fuse_3(self, old, new, flags):
            return self.operations.rename(
                old.decode(self.encoding, self.errors), new.decode(self.encoding, self.errors), flags
            )

        # mfusepy drops the file handle of ftruncate and fchmod; with `nullpath_ok` the path is
        # missing then, so pass the handle.
        def truncate_fuse_3(self, path, length, fip):
            return self.operations.truncate(self._path(path), length, fip.contents.fh if fip else None)

        def chmod_fuse_3(self, path, mode, fip):
            return self.operations.chmod(self._path(path), mode, fip.contents.fh if fip else None)

        def _path(self, path):
            return None if path is None else path.decode(self.encoding, self.errors)

    disk = WeakDisk(args.state, args.refuse_rename_flags)
    Fuse(disk, args.mountpoint, foreground=True, fsname="powercut", subtype="powercut")
    files = dirs = 0
    if args.writeback > 0:
        files, dirs = disk.writeback(args.writeback, random.Random(args.seed))
    kept = disk.save()
    if args.stats:
        with open(args.stats, "w") as f:
            json.dump({**disk.stats, "writeback_files": files, "writeback_folders": dirs, "inodes_kept": kept}, f)
    print(
        f"powercut_fs: cut: {disk.stats['fsync']} fsync, {disk.stats['fsyncdir']} fsyncdir, "
        f"{disk.stats['rename_flags_refused']} renames with flags refused; writeback {args.writeback:.2f} "
        f"persisted {files} more files and {dirs} more folders; {kept} inodes kept",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
