#!/usr/bin/env python3
"""Power-cut test: blobd on a file system that forgets everything not synced (powercut_fs.py).

Each round mounts powercut_fs, runs blobd on it and drives PUTs over 8 connections, kills blobd
with SIGKILL at a random moment, cuts the power (unmount: whatever was not fsync-ed is dropped,
optionally after random background writeback), remounts the persisted state, restarts blobd and
checks every identifier:

- durable rounds (`blobd --durability durable`): every acknowledged PUT (2xx read in full) is
  there with exactly its content, unless a later PUT of the same identifier may have replaced it;
  an identifier never holds a body nobody sent, nor an unreadable (torn) version;
- relaxed rounds (`--durability relaxed`): blobs stored durably before are overwritten; after the
  cut each is its old version or one of the new ones, whole, never empty, torn or gone. With
  `--relaxed-creates` they also create new blobs, which must be absent, whole, or — where the cut
  kept a name but not all of its data — refused as `500 corrupt`, never served (docs/STORAGE.md).

Every round ends with `GET /v1/stores/S/verify`, which must find nothing corrupt, and the run ends
with `blob verify` on the stopped store. Prints per round what was acknowledged and found, then a
summary; exits 1 on any loss, torn or corrupt blob, 0 when clean, and 0 with a printed reason when
FUSE cannot be used here (not root, no /dev/fuse, no fusermount3, no mfusepy).

Usage: power_cut_test.py --bin-dir DIR [--seconds S] [--seed N] [--workers N] [--relaxed-creates] [--keep]
"""

import argparse
import hashlib
import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
FS_SCRIPT = os.path.join(HERE, "powercut_fs.py")
STORE = "powercut"


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP/1.1 over blobd's Unix socket."""

    def __init__(self, path, timeout=60):
        super().__init__("blobd", timeout=timeout)
        self.socket_path = path

    def connect(self):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self.socket_path)
        self.sock = sock


def blob_path(identifier):
    return f"/v1/stores/{STORE}/blobs/" + urllib.parse.quote(identifier, safe="/")


def request(conn, method, path, body=None):
    conn.request(method, path, body=body)
    response = conn.getresponse()
    return response.status, response.getheader("ETag"), response.read()


class Versions:
    """Every body ever sent, by identifier: what the checks accept and what they report."""

    def __init__(self):
        self.mutex = threading.Lock()
        self.known = {}  # identifier -> the version the store holds for sure (sha256 hex, or None: absent)
        self.sent = {}  # identifier -> set of every sha256 sent for it
        self.sizes = {}  # sha256 -> size
        self.acked = {}  # identifier -> sha256 acknowledged this round (durable rounds)
        self.pending = {}  # identifier -> shas sent this round after its last acknowledgement
        self.round_sent = {}  # identifier -> shas sent this round (relaxed rounds: any may be found)
        self.retired = set()  # identifiers left out after a broken blob could not be deleted

    def start_round(self):
        with self.mutex:
            self.acked = {}
            self.pending = {}
            self.round_sent = {}

    def sending(self, identifier, sha, size):
        with self.mutex:
            self.sent.setdefault(identifier, set()).add(sha)
            self.pending.setdefault(identifier, []).append(sha)
            self.round_sent.setdefault(identifier, []).append(sha)
            self.sizes[sha] = size

    def acknowledged(self, identifier, sha):
        with self.mutex:
            self.acked[identifier] = sha
            self.pending[identifier] = []


class Mount:
    """One mount of powercut_fs; unmounting it is the power cut."""

    def __init__(self, work, writeback, seed, refuse_rename_flags, log):
        self.mountpoint = os.path.join(work, "mnt")
        self.state = os.path.join(work, "fs-state.pickle")
        self.stats_path = os.path.join(work, "fs-stats.json")
        self.stats = {}
        self.log = log
        os.makedirs(self.mountpoint, exist_ok=True)
        command = [sys.executable, FS_SCRIPT, "--state", self.state, "--stats", self.stats_path]
        command += ["--writeback", f"{writeback}", "--seed", f"{seed}"]
        if refuse_rename_flags:
            command.append("--refuse-rename-flags")
        self.process = subprocess.Popen(command + [self.mountpoint], stdout=log, stderr=log)
        deadline = time.monotonic() + 20
        while not os.path.ismount(self.mountpoint):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.process.kill()
                self.process.wait()
                raise MountError(f"powercut_fs did not mount on {self.mountpoint} (exit {self.process.returncode})")
            time.sleep(0.05)

    def cut(self):
        """Unmounts (the power cut) and waits for the file system to save what was persisted."""
        for attempt in range(50):
            result = subprocess.run(["fusermount3", "-u", self.mountpoint], capture_output=True, text=True)
            if result.returncode == 0:
                break
            time.sleep(0.1)
        else:
            subprocess.run(["fusermount3", "-u", "-z", self.mountpoint])
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise MountError("powercut_fs did not exit after the unmount")
        if self.process.returncode != 0:
            raise MountError(f"powercut_fs exited {self.process.returncode} after the unmount")
        with open(self.stats_path) as f:
            self.stats = json.load(f)


class MountError(Exception):
    pass


class Daemon:
    def __init__(self, blobd, root, socket_path, durability, log):
        self.socket_path = socket_path
        self.process = subprocess.Popen(
            [blobd, "--root", root, "--socket", socket_path, "--durability", durability, "--log-level", "error"],
            stdout=log,
            stderr=log,
        )
        deadline = time.monotonic() + 30
        while True:
            if self.process.poll() is not None:
                raise DaemonError(f"blobd --durability {durability} exited {self.process.returncode} at start")
            try:
                conn = UnixHTTPConnection(socket_path, timeout=5)
                status, _, _ = request(conn, "GET", "/v1/health")
                conn.close()
                if status == 200:
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.kill()
                raise DaemonError("blobd did not answer /v1/health within 30 s")
            time.sleep(0.05)

    def kill(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()
            return None


class DaemonError(Exception):
    pass


def random_size(rng):
    roll = rng.random()
    if roll < 0.6:
        return rng.randint(1, 4096)
    if roll < 0.95:
        return rng.randint(4097, 64 * 1024)
    return rng.randint(64 * 1024 + 1, 512 * 1024)


def writer(index, socket_path, identifiers, fresh_prefix, versions, stop, seed, counters):
    """Sends PUTs of its own identifiers (so one identifier has one PUT in flight at most); with a
    `fresh_prefix`, one PUT in four creates a new blob under it instead."""
    rng = random.Random(seed)
    conn = UnixHTTPConnection(socket_path)
    created = 0
    try:
        while not stop.is_set() and (identifiers or fresh_prefix):
            if fresh_prefix and (not identifiers or rng.random() < 0.25):
                identifier = f"{fresh_prefix}/{created:04d}"
                created += 1
            else:
                identifier = rng.choice(identifiers)
            body = rng.randbytes(random_size(rng))
            sha = hashlib.sha256(body).hexdigest()
            versions.sending(identifier, sha, len(body))
            try:
                status, _, answer = request(conn, "PUT", blob_path(identifier), body)
            except (OSError, http.client.HTTPException):
                return  # the daemon was killed: this PUT's fate is unknown
            if status in (200, 201):
                versions.acknowledged(identifier, sha)
                counters[index] += 1
            else:
                counters["unexpected"].append(f"PUT {identifier}: {status} {answer[:200]!r}")
                return
    finally:
        conn.close()


class Findings:
    """What one round's checks found."""

    def __init__(self):
        self.promised = 0  # identifiers that must hold a known version (acknowledged, or found before)
        self.lost = 0  # ... and do not: absent, an older version, or broken
        self.broken = 0  # identifiers holding a version that is not whole (unreadable, or a wrong body)
        self.served_wrong = 0  # ... of which GET answered 200 with a body nobody sent
        # Relaxed puts of new blobs that the cut left damaged and the store refuses to serve
        # (500 corrupt): what STORAGE.md allows relaxed mode, as long as it is never served.
        self.refused_damaged = 0
        self.messages = []


def check(socket_path, versions, relaxed):
    """GETs every identifier ever written and judges what it holds against what was sent."""
    found = Findings()
    broken_ids = []
    conn = UnixHTTPConnection(socket_path)
    for identifier in sorted(versions.sent):
        known = versions.known.get(identifier)
        if relaxed:
            # Relaxed acknowledgements promise nothing: the old version or any new one, whole.
            must_have = known
            allowed = {known} | set(versions.round_sent.get(identifier, []))
        else:
            must_have = versions.acked[identifier] if identifier in versions.acked else known
            allowed = {must_have} | set(versions.pending.get(identifier, []))
        if must_have is not None:
            found.promised += 1
        try:
            status, etag, body = request(conn, "GET", blob_path(identifier))
        except (OSError, http.client.HTTPException) as error:
            conn.close()
            conn = UnixHTTPConnection(socket_path)
            status, etag, body = None, None, f"{type(error).__name__}: {error}".encode()
        state = None
        if status == 200:
            state = hashlib.sha256(body).hexdigest()
            if state not in versions.sent[identifier]:
                found.served_wrong += 1
                broken_ids.append(identifier)
                what = f"GET 200 with a body nobody sent ({len(body)} B, ETag {etag})"
            elif state in allowed:
                versions.known[identifier] = state
                continue
            else:
                what = f"an older version ({len(body)} B)"
        elif status == 404:
            if None in allowed:
                versions.known[identifier] = None
                continue
            what = "404"
        else:
            broken_ids.append(identifier)
            what = f"unreadable: {status} {body[:240]!r}"
            if relaxed and known is None and status == 500 and b'"corrupt"' in body:
                found.refused_damaged += 1
                continue
        if must_have is not None:
            found.lost += 1
        if identifier in broken_ids:
            found.broken += 1
        versions.known[identifier] = state
        found.messages.append(f"{identifier}: {what}; expected {describe(must_have, versions)}")
    # Broken blobs are deleted so that later rounds start from whole ones.
    for identifier in broken_ids:
        try:
            status, _, body = request(conn, "DELETE", blob_path(identifier))
        except (OSError, http.client.HTTPException) as error:
            conn.close()
            conn = UnixHTTPConnection(socket_path)
            status, body = None, str(error).encode()
        if status in (204, 404):
            versions.known[identifier] = None
        else:
            found.messages.append(f"{identifier}: DELETE of the broken blob answered {status} {body[:200]!r}")
            versions.retired.add(identifier)
            versions.sent.pop(identifier, None)
    conn.close()
    return found


def describe(sha, versions):
    return "absent" if sha is None else f"a version of {versions.sizes.get(sha, '?')} B"


def verify(socket_path):
    conn = UnixHTTPConnection(socket_path, timeout=300)
    try:
        status, _, body = request(conn, "GET", f"/v1/stores/{STORE}/verify")
    except (OSError, http.client.HTTPException) as error:
        status, body = None, f"{type(error).__name__}: {error}".encode()
    conn.close()
    if status == 404:
        return {"healthy": 0, "corrupt": [], "orphaned": []}
    if status != 200:
        return {"healthy": 0, "corrupt": [{"reason": f"verify answered {status}: {body[:300]!r}"}], "orphaned": []}
    return json.loads(body)


def skip(reason):
    print(f"power-cut: skipped: {reason}")
    sys.exit(0)


def preflight():
    if os.geteuid() != 0:
        skip("not root (mounting FUSE and running blobd on it needs root here)")
    if not os.path.exists("/dev/fuse"):
        skip("no /dev/fuse")
    if shutil.which("fusermount3") is None:
        skip("no fusermount3 (Debian package fuse3)")
    probe = subprocess.run([sys.executable, "-c", "import mfusepy"], capture_output=True, text=True)
    if probe.returncode != 0:
        skip(f"mfusepy cannot be imported: {probe.stderr.strip().splitlines()[-1:]}")


def main():
    parser = argparse.ArgumentParser(description="blobd power-cut test on powercut_fs")
    parser.add_argument("--bin-dir", required=True, help="folder holding blobd and blob")
    parser.add_argument("--seconds", type=float, default=60, help="rounds start until this much time has passed")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--workers", type=int, default=8, help="concurrent connections sending PUTs")
    parser.add_argument("--ids-per-worker", type=int, default=40)
    parser.add_argument("--relaxed-every", type=int, default=4, help="every Nth round is a relaxed overwrite round")
    parser.add_argument(
        "--relaxed-creates",
        action="store_true",
        help="relaxed rounds also create new blobs (one PUT in four): each must then be absent or whole",
    )
    parser.add_argument("--keep", action="store_true", help="keep the work folder (kept anyway on failure)")
    args = parser.parse_args()

    preflight()
    seed = args.seed if args.seed is not None else random.randrange(1 << 32)
    rng = random.Random(seed)
    blobd = os.path.join(args.bin_dir, "blobd")
    blob = os.path.join(args.bin_dir, "blob")
    for binary in (blobd, blob):
        if not os.access(binary, os.X_OK):
            print(f"power-cut: {binary} is missing (swift build --product blobd; swift build --product blob)")
            sys.exit(1)

    work = tempfile.mkdtemp(prefix="powercut-")
    log_path = os.path.join(work, "log.txt")
    log = open(log_path, "ab", buffering=0)
    socket_path = os.path.join(work, "blobd.sock")
    print(f"power-cut: seed {seed}, work folder {work}, {args.workers} connections, {args.seconds:.0f} s")

    def plan(number):
        """The cut of round `number` is fixed when its mount starts: writeback chance, rename flags."""
        if number % args.relaxed_every == 0:
            writeback = round(rng.uniform(0.3, 1.0), 2)
        else:
            writeback = 0.0 if number % 2 == 1 else round(rng.uniform(0.2, 1.0), 2)
        return writeback, rng.random() < 0.5

    writeback, refuse_flags = plan(1)
    try:
        mount = Mount(work, writeback, rng.randrange(1 << 32), refuse_flags, log)
    except MountError as error:
        log.close()
        skip(f"{error} (FUSE cannot be mounted here; log: {log_path})")
    root = os.path.join(mount.mountpoint, "root")
    os.mkdir(root, 0o700)
    folder = os.open(mount.mountpoint, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(folder)  # the root folder itself is on the disk before the test starts
    os.close(folder)

    versions = Versions()
    owned = {i: [f"w{i}/{k:03d}{' x' if k % 7 == 0 else ''}" for k in range(args.ids_per_worker)] for i in range(args.workers)}
    totals = dict.fromkeys(
        ["rounds", "durable", "relaxed", "acked", "promised", "lost", "broken", "served_wrong", "refused_damaged", "verify_corrupt", "relaxed_sent"], 0
    )
    failures = []
    daemon = None
    started = time.monotonic()
    round_number = 0
    try:
        daemon = Daemon(blobd, root, socket_path, "durable", log)
        while time.monotonic() - started < args.seconds:
            round_number += 1
            relaxed = round_number % args.relaxed_every == 0 and any(v is not None for v in versions.known.values())
            if relaxed:
                # Blobs stored durably before are overwritten by a relaxed daemon.
                if daemon.stop() != 0:
                    failures.append(f"round {round_number}: blobd did not exit 0 on SIGTERM")
                daemon = Daemon(blobd, root, socket_path, "relaxed", log)
            versions.start_round()
            stop = threading.Event()
            counters = {i: 0 for i in range(args.workers)}
            counters["unexpected"] = []
            threads = []
            for i in range(args.workers):
                ids = [x for x in owned[i] if x not in versions.retired and (not relaxed or versions.known.get(x) is not None)]
                fresh = f"r{round_number}/w{i}" if relaxed and args.relaxed_creates else None
                worker_seed = rng.randrange(1 << 32)
                threads.append(threading.Thread(target=writer, args=(i, socket_path, ids, fresh, versions, stop, worker_seed, counters)))
            for thread in threads:
                thread.start()
            delay = rng.uniform(0.3, 2.5)
            time.sleep(delay)
            daemon.kill()  # the power goes: the daemon stops at once ...
            daemon = None
            stop.set()
            for thread in threads:
                thread.join()
            in_flight = sum(len(p) for p in versions.pending.values())
            # ... and so does the disk: all that was not persisted is dropped (after random writeback).
            mount.cut()
            syncs = f"{mount.stats['fsync']} fsync, {mount.stats['fsyncdir']} folder fsync"
            cut_writeback, cut_refused = writeback, refuse_flags
            writeback, refuse_flags = plan(round_number + 1)
            mount = Mount(work, writeback, rng.randrange(1 << 32), refuse_flags, log)
            try:
                daemon = Daemon(blobd, root, socket_path, "durable", log)
            except DaemonError as error:
                failures.append(f"round {round_number}: after the cut: {error} (log: {log_path})")
                break
            acked = sum(counters[i] for i in range(args.workers))
            report = verify(socket_path)  # before the checks delete broken blobs: what recovery left
            found = check(socket_path, versions, relaxed)
            if found.refused_damaged:
                # Those damaged new blobs are verify's corrupt files too; once removed, it must find none.
                report = verify(socket_path)
            kind = "relaxed" if relaxed else "durable"
            totals["rounds"] += 1
            totals[kind] += 1
            if relaxed:
                totals["relaxed_sent"] += sum(len(p) for p in versions.round_sent.values())
            else:
                totals["acked"] += acked
                totals["promised"] += found.promised
            totals["lost"] += found.lost
            totals["broken"] += found.broken
            totals["served_wrong"] += found.served_wrong
            totals["refused_damaged"] += found.refused_damaged
            totals["verify_corrupt"] += len(report.get("corrupt", []))
            failures.extend(f"round {round_number}: {u}" for u in counters["unexpected"])
            cut = f"writeback {cut_writeback:.2f}{', rename flags refused' if cut_refused else ''}"
            promise = "held a version before" if relaxed else "acknowledged or held a version before"
            print(
                f"round {round_number:3d} {kind}, cut at {delay:4.2f} s ({cut}): {acked} PUTs acknowledged, {in_flight} in flight, {syncs}; "
                f"after restart: {found.lost} of {found.promised} identifiers that {promise} lost, {found.broken} broken "
                f"({found.served_wrong} served as 200 with a wrong body), {found.refused_damaged} new relaxed blobs left damaged and refused; "
                f"verify: {report.get('healthy', 0)} healthy, "
                f"{len(report.get('corrupt', []))} corrupt, {len(report.get('orphaned', []))} orphaned",
                flush=True,
            )
            for message in found.messages[:12]:
                print(f"    {message}")
            if len(found.messages) > 12:
                print(f"    ... and {len(found.messages) - 12} more")
            for entry in report.get("corrupt", [])[:5]:
                print(f"    verify: corrupt: {entry.get('path')}: {entry.get('reason')}")
            for entry in report.get("orphaned", [])[:5]:
                print(f"    verify: orphaned: {entry.get('path')}: {entry.get('reason')}")
        if daemon is not None:
            status = daemon.stop()
            daemon = None
            if status != 0:
                failures.append(f"blobd exited {status} on SIGTERM at the end")
            result = subprocess.run([blob, "--root", root, "verify", STORE], capture_output=True, text=True)
            summary = (result.stdout.strip().splitlines() or [""])[0]
            print(f"blob verify {STORE}: exit {result.returncode}: {summary} {result.stderr.strip()[:300]}")
            if result.returncode != 0 and any(v is not None for v in versions.known.values()):
                failures.append(f"blob verify exited {result.returncode}")
    except (MountError, DaemonError) as error:
        failures.append(str(error))
    finally:
        if daemon is not None:
            daemon.kill()
        try:
            mount.cut()
        except MountError as error:
            failures.append(str(error))
        log.close()

    elapsed = time.monotonic() - started
    print(
        f"power-cut: {totals['rounds']} rounds ({totals['durable']} durable, {totals['relaxed']} relaxed) in {elapsed:.0f} s: "
        f"{totals['acked']} durable PUTs acknowledged; {totals['lost']} of {totals['promised']} promised versions lost "
        f"(summed over rounds), {totals['broken']} broken blobs ({totals['served_wrong']} served as 200 with a wrong body); "
        f"{totals['relaxed_sent']} relaxed PUTs ({totals['refused_damaged']} new blobs left damaged, refused as corrupt, never served); verify found {totals['verify_corrupt']} corrupt files"
    )
    if totals["lost"] or totals["broken"] or totals["verify_corrupt"] or failures:
        for failure in failures[:20]:
            print(f"power-cut: {failure}")
        print(f"power-cut: FAILED (replay with --seed {seed}; work folder kept: {work})")
        sys.exit(1)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    print("power-cut: passed")

if __name__ == "__main__":
    main()
