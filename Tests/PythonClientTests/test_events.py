"""PROTOCOL.md "Change events" (the checklist is in test_protocol.py)."""

from __future__ import annotations

import json
import socket
import time
import unittest
from typing import List, Optional, Tuple

from support import DaemonTestCase  # first: puts Examples/PythonClient on sys.path
import blobd_client as bc  # noqa: E402
from blobd_harness import Daemon, RawConnection  # noqa: E402

Frame = Tuple[Optional[str], str, str]


def open_stream(daemon: Daemon, query: str = "", headers: str = "") -> RawConnection:
    """A raw connection whose events response head has been read (kept in ``conn.head``)."""
    conn = daemon.raw(timeout=20)
    conn.send(f"GET /v1/events{query} HTTP/1.1\r\n{headers}\r\n".encode())
    conn.head = conn.read_head()  # type: ignore[attr-defined]
    return conn


def read_frames(conn: RawConnection, count: int, timeout: float = 20) -> Tuple[List[Frame], int]:
    """Reads until ``count`` events arrived or the stream ends; (frames, heartbeat comments)."""
    parser = bc.SSEParser()
    frames: List[Frame] = list(parser.feed(conn.buffer))
    conn.buffer = b""
    deadline = time.monotonic() + timeout
    while len(frames) < count and time.monotonic() < deadline:
        conn.sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = conn.sock.recv(1 << 16)
        except socket.timeout:
            break
        except ConnectionResetError:
            break
        if not chunk:
            break
        frames += parser.feed(chunk)
    return frames, parser.comments


class EventTests(DaemonTestCase):
    daemon_args = ("--heartbeat", "0.05", "--durability", "relaxed")

    def test_stream_response_head(self) -> None:
        with open_stream(self.daemon) as conn:
            head = conn.head  # type: ignore[attr-defined]
            self.assertEqual(head.status, 200)
            self.assertEqual(head.header("content-type"), "text/event-stream")
            self.assertEqual(head.header("cache-control"), "no-cache")
            self.assertEqual(head.header("connection"), "close")
            self.assertIsNone(head.header("content-length"))
            self.assertIsNone(head.header("transfer-encoding"))

    def test_put_removed_and_removed_all_frames_in_commit_order(self) -> None:
        store = self.store()
        with open_stream(self.daemon, f"?store={store}") as conn:
            meta = self.client.put(store, "2024/cat.jpg", b"meow", metadata={"author": "ada"})
            self.client.remove(store, "2024/cat.jpg")
            self.client.remove_all(store)
            frames, _ = read_frames(conn, 3)
        self.assertEqual([f[1] for f in frames], ["put", "removed", "removed-all"])
        ids = [int(f[0] or 0) for f in frames]
        self.assertEqual(ids, [ids[0], ids[0] + 1, ids[0] + 2])
        put, removed, removed_all = (json.loads(f[2]) for f in frames)
        self.assertEqual(set(put), {"store", "blob", "date"})
        self.assertEqual(put["store"], store)
        self.assertEqual(bc.Metadata.from_json(put["blob"]), meta)
        self.assertEqual(removed, {"store": store, "identifier": "2024/cat.jpg",
                                   "date": removed["date"]})
        self.assertEqual(removed_all, {"store": store, "date": removed_all["date"]})
        for obj in (put, removed, removed_all):
            self.assertRegex(obj["date"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")

    def test_each_frame_is_id_event_data_and_a_blank_line(self) -> None:
        store = self.store()
        with open_stream(self.daemon, f"?store={store}") as conn:
            self.client.put(store, "x", b"1")
            while b"\n\n" not in conn.buffer.replace(b": heartbeat\n\n", b""):
                conn._fill()
            text = conn.buffer.decode().replace(": heartbeat\n\n", "")
        frame = text.split("\n\n")[0].split("\n")
        self.assertEqual(len(frame), 3)
        self.assertRegex(frame[0], r"^id: \d+$")
        self.assertEqual(frame[1], "event: put")
        self.assertTrue(frame[2].startswith("data: {"))
        json.loads(frame[2][len("data: "):])  # one line of JSON

    def test_all_stores_without_a_filter_and_one_store_with_it(self) -> None:
        first, second = self.store(), self.store()
        with open_stream(self.daemon) as everything, \
                open_stream(self.daemon, f"?store={second}") as filtered:
            self.client.put(first, "a", b"1")
            self.client.put(second, "b", b"1")
            all_frames, _ = read_frames(everything, 2)
            one, _ = read_frames(filtered, 1)
            more, _ = read_frames(filtered, 1, timeout=0.3)
        self.assertEqual([json.loads(f[2])["store"] for f in all_frames], [first, second])
        self.assertEqual([json.loads(f[2])["store"] for f in one], [second])
        self.assertEqual(more, [])

    def test_ids_start_at_the_daemons_start_time_in_microseconds(self) -> None:
        started = time.time()
        daemon = Daemon("--durability", "relaxed")
        try:
            with daemon.client() as client:
                with client.watch(last_event_id=0, timeout=20) as stream:
                    client.put("s", "x", b"1")
                    events = []
                    for event in stream:
                        events.append(event)
                        if isinstance(event, bc.PutEvent):
                            break
        finally:
            daemon.stop()
        put = events[-1]
        assert put.id is not None
        # The first id of a run is its start time in µs (the gap frame says which one it was).
        self.assertLess(abs(put.id / 1e6 - started), 30)
        self.assertIsInstance(events[0], bc.GapEvent)
        self.assertEqual(events[0].first_available_id, put.id)  # type: ignore[attr-defined]

    def test_heartbeats_on_idle_streams(self) -> None:
        with open_stream(self.daemon, f"?store={self.store()}") as conn:
            frames, heartbeats = read_frames(conn, 1, timeout=0.5)  # no event: only heartbeats
        self.assertEqual(frames, [])
        self.assertGreaterEqual(heartbeats, 2)  # every 0.05 s

    def test_resume_with_last_event_id(self) -> None:
        store = self.store()
        with self.client.watch(store, timeout=20) as stream:
            stream.open()
            for i in range(5):
                self.client.put(store, f"k{i}", b"1")
            events = [next(stream) for _ in range(5)]
        third = events[2].id
        with self.client.watch(store, last_event_id=third, timeout=20) as resumed:
            replay = [next(resumed) for _ in range(2)]
            self.client.put(store, "live", b"1")
            live = next(resumed)
        self.assertEqual([e.id for e in replay], [events[3].id, events[4].id])
        self.assertIsInstance(live, bc.PutEvent)
        self.assertEqual(live.blob.identifier, "live")  # type: ignore[union-attr]
        self.assertEqual(live.id, events[4].id + 1)  # type: ignore[operator]
        # Raw header form.
        with open_stream(self.daemon, f"?store={store}", f"Last-Event-ID: {third}\r\n") as conn:
            frames, _ = read_frames(conn, 3)
        self.assertEqual([int(f[0] or 0) for f in frames],
                         [events[3].id, events[4].id, live.id])

    def test_an_id_from_an_earlier_run_gets_a_gap_frame_first(self) -> None:
        store = self.store()
        self.client.put(store, "x", b"1")
        with open_stream(self.daemon, f"?store={store}", "Last-Event-ID: 5\r\n") as conn:
            frames, _ = read_frames(conn, 2)
        self.assertEqual(frames[0][1], "gap")
        gap = json.loads(frames[0][2])
        self.assertEqual(gap["lastEventId"], 5)
        self.assertEqual(int(frames[0][0] or 0), gap["firstAvailableId"] - 1)
        self.assertEqual(frames[1][1], "put")
        # Other stores' events may come first in the daemon's log.
        self.assertGreaterEqual(int(frames[1][0] or 0), gap["firstAvailableId"])
        with self.client.watch(store, last_event_id=5, timeout=20) as stream:
            event = next(stream)
        self.assertIsInstance(event, bc.GapEvent)
        self.assertEqual(event.last_event_id, 5)  # type: ignore[attr-defined]

    def test_event_errors(self) -> None:
        self.assertError(self.request("GET", "/v1/events?store=Bad"), 400, "invalid_store_name")
        self.assertError(self.request("GET", "/v1/events", [("Last-Event-ID", "abc")]), 400,
                         "bad_request")
        self.assertError(self.request("GET", "/v1/events", [("Last-Event-ID", "-1")]), 400,
                         "bad_request")
        self.assertError(self.request("GET", "/v1/events", body=b"x"), 400, "bad_request")
        with self.assertRaises(bc.InvalidStoreName):
            with self.client.watch("Bad") as stream:
                next(stream)

    def test_client_watch_reconnects_with_its_last_id(self) -> None:
        store = self.store()
        stream = self.client.watch(store, reconnect=True, retry_delay=0.05, timeout=20)
        try:
            stream.open()
            self.client.put(store, "a", b"1")
            first = next(stream)
            assert stream._sock is not None
            stream._sock.shutdown(socket.SHUT_RDWR)  # the connection drops
            self.client.put(store, "b", b"1")
            second = next(stream)
        finally:
            stream.close()
        self.assertEqual(second.id, first.id + 1)  # type: ignore[operator]
        self.assertEqual(second.blob.identifier, "b")  # type: ignore[attr-defined]


class SSEParserTests(unittest.TestCase):
    """The client's Server-Sent Events parser, fed the WHATWG grammar's corner cases."""

    def parse(self, data: bytes, step: int) -> Tuple[List[Frame], int]:
        parser = bc.SSEParser()
        frames: List[Frame] = []
        for at in range(0, len(data), step):
            frames += parser.feed(data[at:at + step])
        return frames, parser.comments

    def test_line_endings_comments_and_multi_line_data(self) -> None:
        data = (b": heartbeat\r\nid: 7\r\nevent: put\r\ndata: {\"a\":\r\ndata:1}\r\n\r\n"
                b"id: 8\rdata: x\r\r"
                b"data:no space\nretry: 10\nunknown: y\n\n"
                b"id: bad\x00id\nevent: e\n\n"  # no data: not dispatched; the NUL id is ignored
                b"data: last\n\n")
        for step in (1, 2, 3, 7, len(data)):
            with self.subTest(step=step):
                frames, comments = self.parse(data, step)
                self.assertEqual(frames, [("7", "put", '{"a":\n1}'), ("8", "message", "x"),
                                          ("8", "message", "no space"), ("8", "message", "last")])
                self.assertEqual(comments, 1)

    def test_typed_events(self) -> None:
        meta = ('{"identifier":"a","size":1,"contentType":"x/y","etag":"0123456789abcdef",'
                '"created":"2026-11-22T22:28:28.076Z","modified":"2026-11-22T22:28:28.076Z",'
                '"metadata":{}}')
        put = bc._typed_event(1, "put", '{"store":"s","blob":%s,"date":"2026-11-22T22:28:28.076Z"}'
                              % meta)
        self.assertIsInstance(put, bc.PutEvent)
        self.assertEqual(put.blob.identifier, "a")  # type: ignore[attr-defined]
        gap = bc._typed_event(9, "gap", '{"lastEventId":3,"firstAvailableId":10}')
        self.assertEqual((gap.last_event_id, gap.first_available_id), (3, 10))  # type: ignore
        other = bc._typed_event(None, "future-kind", "not json")
        self.assertEqual(type(other), bc.Event)


class BacklogTests(unittest.TestCase):
    """The 10,000-event retention, big replays and slow readers. One relaxed daemon gets
    ``EVENTS`` small events while a subscriber that never reads is connected: more than 10,000
    beyond what the socket buffers take before the daemon must hold them."""

    EVENTS = 11_500

    daemon: Daemon
    slow_frames: List[Frame]
    slow_closed: bool
    marker_id: int

    @classmethod
    def setUpClass(cls) -> None:
        cls.daemon = Daemon("--durability", "relaxed", "--heartbeat", "3600")
        with cls.daemon.client() as client:
            client.put("marker", "m", b"1")
        with open_stream(cls.daemon, "?store=marker", "Last-Event-ID: 0\r\n") as conn:
            frames, _ = read_frames(conn, 2)
        cls.marker_id = int(frames[1][0] or 0)
        slow = open_stream(cls.daemon, "?store=small")
        slow.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        try:
            put_many(cls.daemon, "small", cls.EVENTS)
            cls.slow_frames, _ = read_frames(slow, cls.EVENTS, timeout=30)
            cls.slow_closed = slow.is_closed(1)
        finally:
            slow.close()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.daemon.stop()

    # A reader is dropped once an event it is owed leaves the 10,000-event log.
    def test_a_reader_10000_events_behind_is_disconnected(self) -> None:
        self.assertLess(len(self.slow_frames), self.EVENTS)
        self.assertTrue(self.slow_closed)
        ids = [int(f[0] or 0) for f in self.slow_frames]
        self.assertEqual(ids, list(range(ids[0], ids[0] + len(ids))))  # no hole before the cut

    def test_only_the_last_10000_events_are_retained(self) -> None:
        with open_stream(self.daemon, "?store=marker",
                         f"Last-Event-ID: {self.marker_id}\r\n") as conn:
            frames, _ = read_frames(conn, 1)
        self.assertEqual(frames[0][1], "gap")
        gap = json.loads(frames[0][2])
        self.assertEqual(gap["lastEventId"], self.marker_id)
        self.assertEqual(gap["firstAvailableId"], self.marker_id + 1 + self.EVENTS - 10_000)
        self.assertEqual(int(frames[0][0] or 0), gap["firstAvailableId"] - 1)

    def test_a_backlog_of_10000_events_is_replayed(self) -> None:
        first = self.marker_id + 1 + self.EVENTS - 10_000  # the oldest retained event
        with open_stream(self.daemon, "?store=small", f"Last-Event-ID: {first - 1}\r\n") as conn:
            self.assertEqual(conn.head.status, 200)  # type: ignore[attr-defined]
            frames, _ = read_frames(conn, 10_000, timeout=60)
        ids = [int(f[0] or 0) for f in frames]
        self.assertEqual(ids, list(range(first, first + 10_000)))


class BigEventBacklogTests(unittest.TestCase):
    """More than 4 MiB of events (700 events with 8 KiB of metadata each): replayed in full, and
    kept for a reader that does not read while they are committed (it is not 10,000 events
    behind)."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.daemon = Daemon("--durability", "relaxed", "--heartbeat", "3600")
        with cls.daemon.client() as client:
            client.put("big", "start", b"1")
        with open_stream(cls.daemon, "?store=big", "Last-Event-ID: 0\r\n") as conn:
            frames, _ = read_frames(conn, 2)
        cls.start_id = int(frames[1][0] or 0)
        slow = open_stream(cls.daemon, "?store=big")
        slow.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        try:
            put_many(cls.daemon, "big", 700, meta_bytes=8000)
            cls.slow_frames, _ = read_frames(slow, 700, timeout=30)
        finally:
            slow.close()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.daemon.stop()

    def test_a_slow_reader_fewer_than_10000_events_behind_gets_every_event(self) -> None:
        ids = [int(f[0] or 0) for f in self.slow_frames]
        self.assertEqual(ids, list(range(self.start_id + 1, self.start_id + 701)))

    def test_a_replay_of_more_than_4_mib_gets_a_head_and_every_event(self) -> None:
        with open_stream(self.daemon, "?store=big",
                         f"Last-Event-ID: {self.start_id}\r\n") as conn:
            self.assertEqual(conn.head.status, 200)  # type: ignore[attr-defined]
            frames, _ = read_frames(conn, 700, timeout=60)
        ids = [int(f[0] or 0) for f in frames]
        self.assertEqual(ids, list(range(self.start_id + 1, self.start_id + 701)))


def put_many(daemon: Daemon, store: str, count: int, meta_bytes: int = 0) -> None:
    """Pipelined one-byte PUTs (with ``meta_bytes`` of user metadata each), in batches small
    enough that the responses fit the socket buffers: a client that sends without reading would
    otherwise stall the daemon's writes and so its reads."""
    meta = ""
    if meta_bytes:
        meta = "".join(f"Blob-Meta-m{i}: {'v' * 1000}\r\n" for i in range(meta_bytes // 1000))
    with daemon.raw(timeout=60) as conn:
        done = 0
        while done < count:
            batch = min(10 if meta_bytes else 200, count - done)
            conn.send(b"".join(
                f"PUT /v1/stores/{store}/blobs/k{done + i:06} HTTP/1.1\r\n{meta}"
                "Content-Length: 1\r\n\r\nx".encode() for i in range(batch)))
            for _ in range(batch):
                status = conn.read_response().status
                if status >= 300:
                    raise AssertionError(f"PUT answered {status}")
            done += batch


if __name__ == "__main__":
    unittest.main()
