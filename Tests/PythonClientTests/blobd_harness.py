"""Test support: starts blobd on a temporary root and socket, and speaks raw HTTP where the client
would hide the daemon's behaviour (pipelining, framing, malformed requests)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "Examples", "PythonClient"))

import blobd_client  # noqa: E402  (after the path insert)

_BINARY: Optional[str] = None


def blobd_binary() -> str:
    """``$BLOBD``, else ``$(swift build --show-bin-path)/blobd`` (built by .ci/python-tests)."""
    global _BINARY
    if _BINARY is None:
        path = os.environ.get("BLOBD")
        if not path:
            out = subprocess.run(["swift", "build", "--show-bin-path"], cwd=REPO, check=True,
                                 capture_output=True, text=True).stdout.strip()
            path = os.path.join(out, "blobd")
        if not os.access(path, os.X_OK):
            raise RuntimeError(f"no blobd at {path}: run `swift build --product blobd` or set BLOBD")
        _BINARY = path
    return _BINARY


class Daemon:
    """One blobd process on its own temporary root and socket (or given ones)."""

    def __init__(self, *args: str, root: Optional[str] = None, socket_path: Optional[str] = None,
                 env: Optional[Mapping[str, str]] = None, wait: bool = True,
                 pass_fds: Sequence[int] = (), preexec_fn: Optional[Callable[[], None]] = None,
                 default_paths: bool = False) -> None:
        self.tmp = tempfile.mkdtemp(prefix="blobd-py-")
        os.chmod(self.tmp, 0o711)
        self.root = root or os.path.join(self.tmp, "root")
        self.socket_path = socket_path or os.path.join(self.tmp, "run", "blobd.sock")
        argv = [blobd_binary()]
        if not default_paths:
            argv += ["--root", self.root, "--socket", self.socket_path]
        argv += list(args)
        full_env = dict(os.environ)
        full_env.update(env or {})
        self.stderr_lines: List[str] = []
        self._listening = threading.Event()
        self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, env=full_env, pass_fds=pass_fds,
                                        preexec_fn=preexec_fn)
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()
        if wait:
            self.wait_listening()

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for raw in self.process.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.stderr_lines.append(line)
            if "listening on" in line:
                self._listening.set()
        self._listening.set()

    def wait_listening(self, timeout: float = 30) -> None:
        """Waits for `blobd: listening on PATH` (fails if the daemon exits first)."""
        if not self._listening.wait(timeout) or self.process.poll() is not None:
            self.stop()
            raise RuntimeError("blobd did not start:\n" + self.stderr)

    def wait_exit(self, timeout: float = 30) -> int:
        """The exit status once the process ends."""
        status = self.process.wait(timeout)
        self._reader.join(5)
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()
        return status

    @property
    def stderr(self) -> str:
        """Everything printed on stderr so far."""
        return "\n".join(self.stderr_lines)

    def client(self, timeout: Optional[float] = 30) -> blobd_client.BlobdClient:
        """A client on this daemon's socket."""
        return blobd_client.BlobdClient(self.socket_path, timeout=timeout)

    def raw(self, timeout: float = 20) -> "RawConnection":
        """A raw connection on this daemon's socket."""
        return RawConnection(self.socket_path, timeout)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Signals the daemon, waits for it, removes the temporary folder; the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._reader.join(5)
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()
        shutil.rmtree(self.tmp, ignore_errors=True)
        return self.process.returncode


def run_blobd(*args: str, env: Optional[Mapping[str, str]] = None,
              timeout: float = 20) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
    """Runs blobd expecting it to exit by itself (usage errors, refused start-ups)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([blobd_binary(), *args], stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, env=full_env, timeout=timeout)


@dataclass
class RawResponse:
    """A response parsed from raw bytes; header names lowercased, in order."""
    version: str
    status: int
    reason: str
    headers: List[Tuple[str, str]]
    body: bytes = b""

    def header(self, name: str) -> Optional[str]:
        """The first value of header ``name`` (case-insensitive)."""
        for key, value in self.headers:
            if key == name.lower():
                return value
        return None

    def json(self) -> Dict[str, Any]:
        """The body as JSON."""
        obj: Dict[str, Any] = json.loads(self.body)
        return obj

    @property
    def error_code(self) -> Optional[str]:
        """``error.code`` of a JSON error body."""
        try:
            return str(self.json()["error"]["code"])
        except (ValueError, KeyError, TypeError):
            return None


class RawConnection:
    """A Unix socket speaking bytes, with a response reader that follows HTTP/1.1 framing."""

    def __init__(self, path: str, timeout: float = 20) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buffer = b""

    def __enter__(self) -> "RawConnection":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the socket."""
        self.sock.close()

    def send(self, data: bytes) -> None:
        """Sends all of ``data``."""
        self.sock.sendall(data)

    def _fill(self) -> bool:
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            return False
        self.buffer += chunk
        return True

    def read_head(self) -> RawResponse:
        """Reads one response head (status line and fields)."""
        while b"\r\n\r\n" not in self.buffer:
            if not self._fill():
                raise ConnectionError(f"closed before a response head; got {self.buffer!r}")
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        version, status, reason = (lines[0].split(" ", 2) + [""])[:3]
        headers = []
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers.append((name.strip().lower(), value.strip()))
        return RawResponse(version, int(status), reason, headers)

    def read_exact(self, count: int) -> bytes:
        """Reads exactly ``count`` body bytes."""
        while len(self.buffer) < count:
            if not self._fill():
                raise ConnectionError(f"closed after {len(self.buffer)} of {count} body bytes")
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def read_response(self, head_request: bool = False, skip_continue: bool = True) -> RawResponse:
        """Reads one final response (skipping ``100 Continue`` unless told not to); the body by
        Content-Length, or to the end of the stream when there is none."""
        while True:
            response = self.read_head()
            if response.status == 100 and skip_continue:
                continue
            break
        if head_request or response.status in (100, 204, 304):
            return response
        length = response.header("content-length")
        if length is not None:
            response.body = self.read_exact(int(length))
        else:
            response.body = self.read_to_end()
        return response

    def read_to_end(self) -> bytes:
        """Everything until the daemon closes."""
        while self._fill():
            pass
        data, self.buffer = self.buffer, b""
        return data

    def is_closed(self, wait: float = 2.0) -> bool:
        """True when the daemon has closed the connection (EOF or reset within ``wait`` s) with
        nothing more to read."""
        old = self.sock.gettimeout()
        self.sock.settimeout(wait)
        try:
            if self.buffer:
                return False
            chunk = self.sock.recv(1 << 16)
            self.buffer += chunk
            return chunk == b""
        except socket.timeout:
            return False
        except (ConnectionResetError, BrokenPipeError):
            return True
        finally:
            self.sock.settimeout(old)

    def request(self, method: str, path: str, headers: Sequence[Tuple[str, str]] = (),
                body: Optional[bytes] = None, version: str = "HTTP/1.1") -> RawResponse:
        """Sends one request (Content-Length added for a body) and reads its response."""
        lines = [f"{method} {path} {version}", "Host: blobd"]
        lines += [f"{k}: {v}" for k, v in headers]
        if body is not None and not any(k.lower() in ("content-length", "transfer-encoding")
                                        for k, _ in headers):
            lines.append(f"Content-Length: {len(body)}")
        self.send(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b""))
        return self.read_response(head_request=(method == "HEAD"))


def raw_request(daemon: Daemon, method: str, path: str,
                headers: Sequence[Tuple[str, str]] = (), body: Optional[bytes] = None,
                version: str = "HTTP/1.1") -> RawResponse:
    """One request on a fresh raw connection."""
    with daemon.raw() as conn:
        return conn.request(method, path, headers, body, version)


def wait_until(predicate, timeout: float = 10.0, interval: float = 0.02) -> bool:  # type: ignore[no-untyped-def]
    """Polls ``predicate`` until true (True) or ``timeout`` passes (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())
