"""PROTOCOL.md "Running the daemon": flags, start-up rules, socket activation, peer check and
shutdown (the checklist is in test_protocol.py)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
import unittest

from blobd_harness import Daemon, RawConnection, blobd_binary, run_blobd, wait_until  # path first
import blobd_client as bc  # noqa: E402


def temp_dir(test: unittest.TestCase) -> str:
    path = tempfile.mkdtemp(prefix="blobd-py-")
    os.chmod(path, 0o711)
    test.addCleanup(shutil.rmtree, path, True)
    return path


class CommandLineTests(unittest.TestCase):

    def test_usage_errors_exit_64_with_a_one_line_hint(self) -> None:
        tmp = temp_dir(self)
        base = ["--root", os.path.join(tmp, "r"), "--socket", os.path.join(tmp, "s", "b.sock")]
        for args in (["--bogus"], ["--event-loops", "0"], ["--event-loops", "65"],
                     ["--event-loops", "x"], ["--heartbeat", "0.01"], ["--heartbeat", "3601"],
                     ["--durability", "sometimes"], ["--log-level", "loud"], ["--root"],
                     ["--allow-group", "abc"], ["positional"]):
            with self.subTest(args=args):
                done = run_blobd(*base, *args)
                self.assertEqual(done.returncode, 64, done.stderr)
                lines = done.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, done.stderr)
                self.assertTrue(lines[0].startswith("blobd: "), lines[0])
        self.assertFalse(os.path.exists(os.path.join(tmp, "r")))

    def test_help_prints_usage_and_exits_0(self) -> None:
        done = run_blobd("--help")
        self.assertEqual(done.returncode, 0)
        text = done.stdout + done.stderr
        for flag in ("--root", "--socket", "--durability", "--event-loops", "--allow-group",
                     "--log-level", "--heartbeat"):
            self.assertIn(flag, text)

    def test_settings_then_listening_line(self) -> None:
        daemon = Daemon("--durability=relaxed", "--event-loops=3", "--log-level=debug",
                        "--heartbeat=2.5")
        try:
            lines = daemon.stderr_lines
            listening = [i for i, line in enumerate(lines) if "listening on" in line]
            self.assertEqual(lines[listening[0]], f"blobd: listening on {daemon.socket_path}")
            before = "\n".join(lines[:listening[0]])
            self.assertIn(daemon.root, before)
            self.assertIn(daemon.socket_path, before)
            self.assertIn("relaxed", before)
            self.assertRegex(before, r"event loops 3\b")
            self.assertIn("debug", before)
            self.assertRegex(before, r"2\.5")
            with daemon.client() as client:
                self.assertTrue(client.health())
        finally:
            daemon.stop()

    def test_event_loop_bounds_and_durability_modes_serve(self) -> None:
        for args in (("--event-loops", "1", "--durability", "durable"),
                     ("--event-loops", "64", "--durability", "relaxed")):
            with self.subTest(args=args):
                daemon = Daemon(*args)
                try:
                    with daemon.client() as client:
                        client.put("s", "x", b"1")
                        self.assertEqual(client.get("s", "x"), b"1")
                finally:
                    daemon.stop()

    def test_log_levels(self) -> None:
        debug = Daemon("--log-level", "debug")
        try:
            with debug.client() as client:
                client.health()
                client.health()
                with self.assertRaises(bc.NotFound):
                    client.get("s", "nope-xyz")
            self.assertTrue(wait_until(lambda: any("nope-xyz" in l for l in debug.stderr_lines)))
            self.assertGreaterEqual(sum("/v1/health" in l for l in debug.stderr_lines), 2)
        finally:
            debug.stop()
        quiet = Daemon("--log-level", "error")
        try:
            with quiet.client() as client:
                client.health()
            time.sleep(0.2)
            self.assertFalse(any("/v1/health" in l for l in quiet.stderr_lines))
            # `error` leaves out the settings lines but still says where it listens.
            self.assertEqual(quiet.stderr_lines[-1], f"blobd: listening on {quiet.socket_path}")
        finally:
            quiet.stop()

    def test_a_relative_xdg_runtime_dir_is_ignored(self) -> None:
        fallback = f"/tmp/blobstore-{os.getuid()}/blobd.sock"
        if os.path.exists(fallback):
            self.skipTest(f"{fallback} exists (a daemon of this user may be running)")
        tmp = temp_dir(self)
        env = dict(os.environ)
        env.update({"XDG_DATA_HOME": os.path.join(tmp, "data"), "XDG_RUNTIME_DIR": "relative/run"})
        proc = subprocess.Popen([blobd_binary()], env=env, cwd=tmp, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL)
        try:
            self.assertTrue(wait_until(lambda: os.path.exists(fallback), 20))
            self.assertFalse(os.path.exists(os.path.join(tmp, "relative")))
            with bc.BlobdClient(fallback) as client:
                self.assertTrue(client.health())
        finally:
            proc.terminate()
            proc.wait(20)
            if proc.stderr:
                proc.stderr.close()

    def test_default_root_and_socket_come_from_xdg_variables(self) -> None:
        tmp = temp_dir(self)
        env = {"XDG_DATA_HOME": os.path.join(tmp, "data"), "XDG_RUNTIME_DIR": os.path.join(tmp, "run"),
               "HOME": os.path.join(tmp, "home")}
        os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700)
        daemon = Daemon(env=env, default_paths=True,
                        socket_path=os.path.join(tmp, "run", "blobstore", "blobd.sock"))
        try:
            with daemon.client() as client:
                client.put("s", "x", b"1")
            root = os.path.join(tmp, "data", "blobstore")
            self.assertTrue(os.path.isdir(os.path.join(root, "s")))
            self.assertEqual(stat.S_IMODE(os.stat(root).st_mode), 0o700)
            self.assertEqual(stat.S_IMODE(os.stat(os.path.dirname(daemon.socket_path)).st_mode),
                             0o700)
            old = os.environ.get("XDG_RUNTIME_DIR")
            os.environ["XDG_RUNTIME_DIR"] = env["XDG_RUNTIME_DIR"]
            try:
                self.assertEqual(bc.default_socket_path(), daemon.socket_path)
                with bc.BlobdClient() as client:
                    self.assertTrue(client.health())
            finally:
                if old is None:
                    del os.environ["XDG_RUNTIME_DIR"]
                else:
                    os.environ["XDG_RUNTIME_DIR"] = old
        finally:
            daemon.stop()
        # Without XDG_DATA_HOME: ~/.local/share/blobstore.
        env2 = {"XDG_RUNTIME_DIR": os.path.join(tmp, "run2"), "HOME": os.path.join(tmp, "home")}
        env2_clean = dict(os.environ)
        env2_clean.pop("XDG_DATA_HOME", None)
        env2_clean.update(env2)
        os.makedirs(env2["XDG_RUNTIME_DIR"], mode=0o700)
        proc = subprocess.Popen([blobd_binary()], env=env2_clean, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL)
        try:
            sock = os.path.join(env2["XDG_RUNTIME_DIR"], "blobstore", "blobd.sock")
            self.assertTrue(wait_until(lambda: os.path.exists(sock), 20))
            with bc.BlobdClient(sock) as client:
                client.put("s", "x", b"1")
            self.assertTrue(os.path.isdir(os.path.join(tmp, "home", ".local", "share",
                                                       "blobstore", "s")))
        finally:
            proc.terminate()
            proc.wait(10)
            assert proc.stderr is not None
            proc.stderr.close()

    def test_client_default_socket_without_xdg_runtime_dir(self) -> None:
        old = os.environ.pop("XDG_RUNTIME_DIR", None)
        try:
            self.assertEqual(bc.default_socket_path(), f"/tmp/blobstore-{os.getuid()}/blobd.sock")
        finally:
            if old is not None:
                os.environ["XDG_RUNTIME_DIR"] = old

    def test_a_socket_path_over_107_bytes_exits_64_creating_nothing(self) -> None:
        tmp = temp_dir(self)
        folder = os.path.join(tmp, "sockets")
        path = os.path.join(folder, "s" * (108 - len(folder) - 1))
        self.assertEqual(len(path.encode()), 108)
        done = run_blobd("--root", os.path.join(tmp, "root"), "--socket", path)
        self.assertEqual(done.returncode, 64, done.stderr)
        self.assertEqual(os.listdir(tmp), [])

    def test_a_socket_path_of_107_bytes_is_fine(self) -> None:
        tmp = temp_dir(self)
        folder = os.path.join(tmp, "s")
        path = os.path.join(folder, "s" * (107 - len(folder) - 1))
        self.assertEqual(len(path.encode()), 107)
        daemon = Daemon(socket_path=path)
        try:
            with daemon.client() as client:
                self.assertTrue(client.health())
        finally:
            daemon.stop()


class StartupRuleTests(unittest.TestCase):

    def test_one_daemon_per_root(self) -> None:
        first = Daemon()
        try:
            with open(os.path.join(first.root, ".blobd.lock")) as f:
                self.assertEqual(f.read(), f"pid {first.process.pid}\nsocket {first.socket_path}\n")
            second = run_blobd("--root", first.root, "--socket",
                               os.path.join(first.tmp, "other", "b.sock"))
            self.assertEqual(second.returncode, 1)
            self.assertIn(f"another blobd (pid {first.process.pid}) is already serving "
                          f"{first.root}", second.stderr)
        finally:
            first.stop()

    def test_the_lock_of_a_killed_daemon_is_released(self) -> None:
        tmp = temp_dir(self)
        root = os.path.join(tmp, "root")
        first = Daemon(root=root, socket_path=os.path.join(tmp, "a", "b.sock"))
        first.process.kill()
        first.wait_exit()
        second = Daemon(root=root, socket_path=os.path.join(tmp, "c", "b.sock"))
        try:
            with second.client() as client:
                self.assertTrue(client.health())
        finally:
            second.stop()
            first.stop()

    def test_socket_folder_rules(self) -> None:
        tmp = temp_dir(self)
        created = Daemon(socket_path=os.path.join(tmp, "new", "deeper", "b.sock"))
        try:
            self.assertEqual(stat.S_IMODE(os.stat(os.path.join(tmp, "new", "deeper")).st_mode),
                             0o700)
            self.assertEqual(stat.S_IMODE(os.stat(created.socket_path).st_mode), 0o600)
            self.assertTrue(stat.S_ISSOCK(os.stat(created.socket_path).st_mode))
        finally:
            created.stop()
        writable = os.path.join(tmp, "writable")
        os.mkdir(writable)
        os.chmod(writable, 0o777)
        done = run_blobd("--root", os.path.join(tmp, "r"), "--socket",
                         os.path.join(writable, "b.sock"))
        self.assertEqual(done.returncode, 1, done.stderr)
        self.assertIn(writable, done.stderr)
        os.chmod(writable, 0o770)
        done = run_blobd("--root", os.path.join(tmp, "r"), "--socket",
                         os.path.join(writable, "b.sock"))
        self.assertEqual(done.returncode, 1, done.stderr)
        if os.geteuid() == 0:
            foreign = os.path.join(tmp, "foreign")
            os.mkdir(foreign, 0o700)
            os.chown(foreign, 65534, 65534)
            done = run_blobd("--root", os.path.join(tmp, "r"), "--socket",
                             os.path.join(foreign, "b.sock"))
            self.assertEqual(done.returncode, 1, done.stderr)
            self.assertIn(foreign, done.stderr)
        not_a_dir = os.path.join(tmp, "file")
        open(not_a_dir, "w").close()
        done = run_blobd("--root", os.path.join(tmp, "r"), "--socket",
                         os.path.join(not_a_dir, "b.sock"))
        self.assertEqual(done.returncode, 1, done.stderr)

    def test_existing_socket_files(self) -> None:
        live = Daemon()
        try:
            done = run_blobd("--root", os.path.join(live.tmp, "root2"), "--socket",
                             live.socket_path)
            self.assertEqual(done.returncode, 1)
            self.assertIn(f"another daemon is already listening on {live.socket_path}",
                          done.stderr)
            with live.client() as client:
                self.assertTrue(client.health())  # never taken over
        finally:
            live.stop()
        tmp = temp_dir(self)
        folder = os.path.join(tmp, "s")
        os.mkdir(folder, 0o700)
        leftover = os.path.join(folder, "b.sock")
        stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stale.bind(leftover)
        stale.close()  # a socket file nobody listens on: ECONNREFUSED
        replacing = Daemon(socket_path=leftover)
        try:
            with replacing.client() as client:
                self.assertTrue(client.health())
        finally:
            replacing.stop()
        not_socket = os.path.join(folder, "plain")
        with open(not_socket, "w") as f:
            f.write("keep me")
        done = run_blobd("--root", os.path.join(tmp, "r"), "--socket", not_socket)
        self.assertEqual(done.returncode, 1)
        with open(not_socket) as f:
            self.assertEqual(f.read(), "keep me")

    def test_a_root_of_a_newer_layout_is_500_unsupported_format(self) -> None:
        # The daemon starts; opening a store of the root refuses the layout it does not know.
        tmp = temp_dir(self)
        root = os.path.join(tmp, "root")
        os.mkdir(root)
        with open(os.path.join(root, ".blobstore-format"), "w") as f:
            f.write("blobstore 99\n")
        daemon = Daemon(root=root, socket_path=os.path.join(tmp, "s", "b.sock"))
        try:
            with daemon.client() as client:
                with self.assertRaises(bc.UnsupportedFormat) as ctx:
                    client.put("s", "x", b"1")
            self.assertEqual((ctx.exception.status, ctx.exception.code),
                             (500, "unsupported_format"))
        finally:
            daemon.stop()


class SocketActivationTests(unittest.TestCase):

    def test_the_socket_passed_as_fd_3_is_served_and_kept(self) -> None:
        tmp = temp_dir(self)
        path = os.path.join(tmp, "activated.sock")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.listen(16)
        fd = listener.fileno()

        def to_fd3() -> None:
            os.dup2(fd, 3)
            os.set_inheritable(3, True)
        # LISTEN_PID must be the daemon's own pid: a shell sets it, then becomes blobd.
        script = f'LISTEN_PID=$$ LISTEN_FDS=1 exec "{blobd_binary()}" "$@"'
        proc = subprocess.Popen(
            ["/bin/sh", "-c", script, "sh", "--root", os.path.join(tmp, "root"), "--socket",
             os.path.join(tmp, "unused", "b.sock")],
            stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, pass_fds=(fd,), preexec_fn=to_fd3)
        listener.close()
        try:
            with bc.BlobdClient(path) as client:
                self.assertTrue(wait_until(lambda: _healthy(client), 20))
                client.put("s", "x", b"activated")
                self.assertEqual(client.get("s", "x"), b"activated")
            self.assertFalse(os.path.exists(os.path.join(tmp, "unused", "b.sock")))
        finally:
            proc.send_signal(signal.SIGTERM)
            self.assertEqual(proc.wait(15), 0)
            assert proc.stderr is not None
            proc.stderr.close()
        self.assertTrue(os.path.exists(path))  # systemd owns it


def _wait_accepted(test: unittest.TestCase, daemon: Daemon) -> None:
    """Waits until the daemon has accepted the test's connection (the metrics' own connection is
    the second), then lets its event loop read what was sent: the request is then in progress."""
    def accepted() -> bool:
        with daemon.client() as client:
            samples = bc.parse_metrics(client.metrics())
        return samples[("blobd_accepted_connections_total", ())] >= 2
    test.assertTrue(wait_until(accepted))
    time.sleep(0.3)


def _healthy(client: bc.BlobdClient) -> bool:
    try:
        return client.health()
    except OSError:
        client.close()
        return False


@unittest.skipUnless(os.geteuid() == 0, "the peer check needs other uids (root only)")
class PeerCheckTests(unittest.TestCase):
    """Children that switch to other uids/gids connect; SO_PEERCRED decides."""

    GROUP = 54321

    @classmethod
    def setUpClass(cls) -> None:
        cls.daemon = Daemon("--allow-group", str(cls.GROUP))
        os.chmod(os.path.dirname(cls.daemon.socket_path), 0o711)  # others may reach the socket

    @classmethod
    def tearDownClass(cls) -> None:
        cls.daemon.stop()

    def as_user(self, uid: int, gid: int, groups: list) -> tuple:  # type: ignore[type-arg]
        """Runs one GET /v1/health from a child with these ids: (status, code, closed)."""
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: switch ids, connect, report
            try:
                os.close(read_end)
                os.setgroups(groups)
                os.setgid(gid)
                os.setuid(uid)
                conn = RawConnection(self.daemon.socket_path, 10)
                response = conn.request("GET", "/v1/health")
                closed = conn.is_closed(2)
                os.write(write_end, f"{response.status} {response.error_code} {closed}".encode())
            except BaseException as error:  # noqa: BLE001 (reported to the parent)
                os.write(write_end, f"error {error!r}".encode())
            finally:
                os._exit(0)
        os.close(write_end)
        with os.fdopen(read_end) as pipe:
            answer = pipe.read()
        os.waitpid(pid, 0)
        return tuple(answer.split(" ", 2))

    def test_socket_mode_and_group_with_allow_group(self) -> None:
        info = os.stat(self.daemon.socket_path)
        self.assertEqual(stat.S_IMODE(info.st_mode), 0o660)
        self.assertEqual(info.st_gid, self.GROUP)

    def test_the_allowed_group_is_served(self) -> None:
        self.assertEqual(self.as_user(54000, self.GROUP, [self.GROUP]), ("200", "None", "False"))

    def test_other_peers_get_403_forbidden_and_a_close(self) -> None:
        with self.daemon.client() as client:
            refused = bc.parse_metrics(client.metrics())[("blobd_refused_connections_total", ())]
        # In the group only as a supplementary group: the effective gid decides.
        self.assertEqual(self.as_user(54000, 54001, [self.GROUP]), ("403", "forbidden", "True"))
        with self.daemon.client() as client:
            after = bc.parse_metrics(client.metrics())[("blobd_refused_connections_total", ())]
        self.assertEqual(after - refused, 1)
        self.assertTrue(wait_until(lambda: any("54000" in l for l in self.daemon.stderr_lines)))


@unittest.skipUnless(os.geteuid() == 0, "running the daemon as another user needs root")
class RootPeerTests(unittest.TestCase):

    def test_uid_0_is_served_by_a_daemon_of_another_user(self) -> None:
        tmp = temp_dir(self)
        os.chown(tmp, 65534, 65534)

        def become_nobody() -> None:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
        daemon = Daemon(root=os.path.join(tmp, "root"), socket_path=os.path.join(tmp, "s", "b.sock"),
                        preexec_fn=become_nobody)
        try:
            self.assertEqual(os.stat(daemon.socket_path).st_uid, 65534)
            with daemon.client() as client:  # this process is root
                self.assertTrue(client.health())
                client.put("s", "x", b"1")
        finally:
            daemon.stop()


class ShutdownTests(unittest.TestCase):

    def test_sigterm_and_sigint_stop_cleanly_and_remove_the_socket(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            with self.subTest(signal=sig):
                daemon = Daemon()
                idle = daemon.raw()
                idle.request("GET", "/v1/health")
                events = daemon.raw()
                events.send(b"GET /v1/events HTTP/1.1\r\n\r\n")
                self.assertEqual(events.read_head().status, 200)
                started = time.monotonic()
                daemon.process.send_signal(sig)
                self.assertEqual(daemon.wait_exit(), 0)
                self.assertLess(time.monotonic() - started, 5)  # nothing was in progress
                self.assertTrue(idle.is_closed(1))
                self.assertTrue(events.is_closed(1))
                self.assertFalse(os.path.exists(daemon.socket_path))
                idle.close()
                events.close()
                daemon.stop()

    def test_a_request_in_progress_finishes_with_connection_close(self) -> None:
        daemon = Daemon()
        try:
            conn = daemon.raw()
            conn.send(b"PUT /v1/stores/s/blobs/x HTTP/1.1\r\nContent-Length: 10\r\n\r\n12345")
            _wait_accepted(self, daemon)
            daemon.process.send_signal(signal.SIGTERM)
            time.sleep(0.3)
            conn.send(b"67890")
            response = conn.read_response()
            self.assertEqual(response.status, 201)
            self.assertEqual(response.header("connection"), "close")
            self.assertTrue(conn.is_closed())
            self.assertEqual(daemon.wait_exit(), 0)
            conn.close()
        finally:
            daemon.stop()

    def test_a_stuck_request_is_closed_after_5_seconds(self) -> None:
        daemon = Daemon()
        try:
            conn = daemon.raw()
            conn.send(b"PUT /v1/stores/s/blobs/x HTTP/1.1\r\nContent-Length: 10\r\n\r\n123")
            _wait_accepted(self, daemon)
            started = time.monotonic()
            daemon.process.send_signal(signal.SIGTERM)
            self.assertEqual(daemon.wait_exit(), 0)
            self.assertLess(time.monotonic() - started, 15)
            self.assertTrue(conn.is_closed(1))
            conn.close()
        finally:
            daemon.stop()

    def test_a_replaced_socket_file_is_not_removed(self) -> None:
        daemon = Daemon()
        try:
            os.unlink(daemon.socket_path)
            with open(daemon.socket_path, "w") as f:
                f.write("someone else's")
            daemon.process.send_signal(signal.SIGTERM)
            self.assertEqual(daemon.wait_exit(), 0)
            with open(daemon.socket_path) as f:
                self.assertEqual(f.read(), "someone else's")
        finally:
            daemon.stop()


if __name__ == "__main__":
    unittest.main()
