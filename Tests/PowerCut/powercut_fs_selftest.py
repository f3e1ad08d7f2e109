#!/usr/bin/env python3
"""Checks powercut_fs's model before the power-cut test relies on it.

Mounts the file system, makes changes, cuts (unmounts) and remounts, and checks that exactly the
synced state came back: a file's bytes only after its fsync, a name only after its folder's fsync,
nothing from syncfs(2), hard links and rename-over as on a POSIX file system, RENAME_NOREPLACE
honoured (or refused with EINVAL when asked), and background writeback persisting unsynced state.
Exits 1 on the first difference; 0 with "skipped" where FUSE cannot be mounted.
"""

import ctypes
import errno
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FS_SCRIPT = os.path.join(HERE, "powercut_fs.py")
libc = ctypes.CDLL(None, use_errno=True)
checks = 0


def expect(condition, what):
    global checks
    if not condition:
        print(f"powercut_fs self-test: FAILED: {what}")
        sys.exit(1)
    checks += 1


class Mounted:
    def __init__(self, work, *options):
        self.mnt = os.path.join(work, "mnt")
        os.makedirs(self.mnt, exist_ok=True)
        self.log = open(os.path.join(work, "fs.log"), "ab")
        state = os.path.join(work, "state")
        self.process = subprocess.Popen([sys.executable, FS_SCRIPT, "--state", state, *options, self.mnt], stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + 20
        while not os.path.ismount(self.mnt):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.process.kill()
                self.process.wait()
                with open(os.path.join(work, "fs.log"), "rb") as f:
                    last = f.read().decode(errors="replace").strip().splitlines()[-1:]
                print(f"powercut_fs self-test: skipped: powercut_fs did not mount: {last}")
                sys.exit(0)
            time.sleep(0.05)

    def path(self, name):
        return os.path.join(self.mnt, name)

    def cut(self):
        subprocess.run(["fusermount3", "-u", self.mnt], check=True)
        expect(self.process.wait(timeout=60) == 0, "powercut_fs exits 0 after the unmount")
        self.log.close()


def write(path, data, sync=False):
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    os.write(fd, data)
    if sync:
        os.fsync(fd)
    os.close(fd)


def sync_folder(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(fd)
    os.close(fd)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def main():
    work = tempfile.mkdtemp(prefix="powercut-selftest-")
    try:
        run(work)
    finally:
        if os.path.ismount(os.path.join(work, "mnt")):
            subprocess.run(["fusermount3", "-u", "-z", os.path.join(work, "mnt")])
        shutil.rmtree(work, ignore_errors=True)
    print(f"powercut_fs self-test: all {checks} checks hold")


def run(work):
    fs = Mounted(work)
    d = fs.path("d")
    os.mkdir(d)
    sync_folder(fs.mnt)
    write(fs.path("d/synced"), b"synced", sync=True)  # bytes and name synced below
    write(fs.path("d/name-only"), b"never synced")  # name synced below, bytes never
    write(fs.path("d/old"), b"old", sync=True)
    write(fs.path("d/keep"), b"keep", sync=True)
    os.link(fs.path("d/keep"), fs.path("d/keep-link"))
    expect(os.stat(fs.path("d/keep")).st_nlink == 2, "a hard link counts 2 names")
    sync_folder(d)
    # After the folder's fsync: nothing below is persisted.
    write(fs.path("d/unsynced-name"), b"x", sync=True)  # bytes synced, name not
    os.rename(fs.path("d/old"), fs.path("d/renamed"))
    write(fs.path("d/synced"), b"changed later")
    fd = os.open(fs.path("d/synced"), os.O_RDONLY)
    libc.syncfs(fd)  # not forwarded to FUSE servers: persists nothing
    os.close(fd)
    os.mkdir(fs.path("d/newdir"))
    # Rename over an open file: the open descriptor keeps the old bytes.
    write(fs.path("d/over"), b"new", sync=True)
    fd = os.open(fs.path("d/keep"), os.O_RDONLY)
    os.rename(fs.path("d/over"), fs.path("d/keep"))
    expect(os.pread(fd, 10, 0) == b"keep", "an open file replaced by rename still reads its bytes")
    expect(os.stat(fs.path("d/keep-link")).st_nlink == 1, "the replaced file keeps its other name")
    os.close(fd)
    expect(read(fs.path("d/keep")) == b"new", "rename replaces the target")
    result = libc.renameat2(-100, fs.path("d/renamed").encode(), -100, fs.path("d/keep").encode(), 1)
    expect(result == -1 and ctypes.get_errno() == errno.EEXIST, "RENAME_NOREPLACE refuses an existing target")
    try:
        os.close(os.open(d, os.O_TMPFILE | os.O_WRONLY, 0o600))
        tmpfile = "accepted"
    except OSError as error:
        tmpfile = errno.errorcode.get(error.errno, str(error.errno))
    fs.cut()

    fs = Mounted(work, "--refuse-rename-flags")
    names = sorted(os.listdir(fs.path("d")))
    expect(names == ["keep", "keep-link", "name-only", "old", "synced"], f"only synced names survive: {names}")
    expect(read(fs.path("d/synced")) == b"synced", "synced bytes survive; later unsynced writes (and syncfs) do not")
    expect(read(fs.path("d/name-only")) == b"", "a synced name whose bytes were never synced is empty")
    expect(read(fs.path("d/old")) == b"old", "an unsynced rename is undone")
    expect(read(fs.path("d/keep")) == b"keep" and read(fs.path("d/keep-link")) == b"keep", "unsynced rename-over is undone")
    expect(os.stat(fs.path("d/keep")).st_ino == os.stat(fs.path("d/keep-link")).st_ino, "hard links survive as one inode")
    expect(os.stat(fs.path("d/keep")).st_nlink == 2, "hard link count survives")
    result = libc.renameat2(-100, fs.path("d/old").encode(), -100, fs.path("d/new").encode(), 1)
    expect(result == -1 and ctypes.get_errno() == errno.EINVAL, "--refuse-rename-flags answers EINVAL")
    os.rename(fs.path("d/old"), fs.path("d/new"))
    sync_folder(fs.path("d"))
    fs.cut()

    fs = Mounted(work, "--writeback", "1")
    expect(sorted(os.listdir(fs.path("d")))[:3] == ["keep", "keep-link", "name-only"], "names survive a remount")
    expect(read(fs.path("d/new")) == b"old", "a synced rename survives")
    write(fs.path("d/late"), b"written back")
    fs.cut()

    fs = Mounted(work)
    expect(read(fs.path("d/late")) == b"written back", "writeback 1 persists unsynced names and bytes")
    fs.cut()
    print(f"powercut_fs self-test: O_TMPFILE: {tmpfile}")


if __name__ == "__main__":
    main()
