"""PROTOCOL.md "Listing", "GET /v1/stores", verify, health, metrics, and the server-side error
codes (the checklist is in test_protocol.py)."""

from __future__ import annotations

import fcntl
import glob
import os
import subprocess
import tempfile
import time
import unittest

from support import DaemonTestCase  # first: puts Examples/PythonClient on sys.path
import blobd_client as bc  # noqa: E402
from blobd_harness import Daemon  # noqa: E402


class ListingTests(DaemonTestCase):

    def fill(self, store: str) -> None:
        for identifier, content_type in [("b/2", "text/plain"), ("a/1", "image/png"),
                                         ("a/3", "image/jpeg"), ("c", "text/html"),
                                         ("a b", "text/plain"), ("a+b", "text/plain")]:
            self.client.put(store, identifier, identifier.encode(), content_type=content_type)
            time.sleep(0.002)  # distinct modification times

    def test_list_by_identifier_with_prefix_and_type(self) -> None:
        store = self.store()
        self.fill(store)
        page = self.client.list(store)
        self.assertEqual([m.identifier for m in page.items], ["a b", "a+b", "a/1", "a/3", "b/2", "c"])
        self.assertIsNone(page.next_cursor)
        self.assertEqual([m.identifier for m in self.client.list(store, prefix="a/").items],
                         ["a/1", "a/3"])
        self.assertEqual([m.identifier for m in self.client.list(store, type="image/").items],
                         ["a/1", "a/3"])
        self.assertEqual([m.identifier for m in self.client.list(store, prefix="a/",
                                                                  type="image/j").items], ["a/3"])
        self.assertEqual([m.identifier for m in self.client.list(store, prefix="a b").items],
                         ["a b"])
        response = self.request("GET", f"/v1/stores/{store}/blobs?prefix=a%2F&limit=1")
        obj = response.json()
        self.assertEqual(set(obj), {"items", "nextCursor"})
        self.assertEqual(obj["items"][0]["identifier"], "a/1")
        self.assertIsInstance(obj["nextCursor"], str)
        item = obj["items"][0]
        self.assertEqual(set(item) - {"image"}, {"identifier", "size", "contentType", "etag",
                                                  "created", "modified", "metadata"})

    def test_plus_in_a_query_is_a_plus(self) -> None:
        store = self.store()
        self.fill(store)
        response = self.request("GET", f"/v1/stores/{store}/blobs?prefix=a+b")
        self.assertEqual([i["identifier"] for i in response.json()["items"]], ["a+b"])

    def test_sort_by_modified(self) -> None:
        store = self.store()
        self.fill(store)
        items = self.client.list(store, sort="modified").items
        self.assertEqual([m.identifier for m in items], ["b/2", "a/1", "a/3", "c", "a b", "a+b"])
        self.assertEqual(items, sorted(items, key=lambda m: (m.modified, m.identifier)))
        self.assertEqual([m.identifier for m in self.client.list(store, sort="identifier").items],
                         ["a b", "a+b", "a/1", "a/3", "b/2", "c"])

    def test_identifier_order_is_utf8_byte_order(self) -> None:
        store = self.store()
        for identifier in ("é", "z", "Z", "\U0001F600", "\uff21", "a"):
            self.client.put(store, identifier, b"1")
        listed = [m.identifier for m in self.client.list(store).items]
        self.assertEqual(listed, sorted(listed, key=lambda s: s.encode("utf-8")))

    def test_pages_and_cursors(self) -> None:
        store = self.store()
        for i in range(25):
            self.client.put(store, f"k{i:02}", b"x")
        for sort in ("identifier", "modified"):
            with self.subTest(sort=sort):
                seen, cursor, pages = [], None, 0
                while True:
                    page = self.client.list(store, sort=sort, limit=10, cursor=cursor)
                    pages += 1
                    seen += [m.identifier for m in page.items]
                    if page.next_cursor is None:
                        break
                    cursor = page.next_cursor
                self.assertEqual(pages, 3)
                self.assertEqual(sorted(seen), [f"k{i:02}" for i in range(25)])
                self.assertEqual(len(seen), 25)
        self.assertEqual(len(list(self.client.list_all(store, page_size=7))), 25)

    def test_limit_bounds_and_bad_queries_are_invalid_query(self) -> None:
        store = self.store()
        self.client.put(store, "x", b"1")
        self.assertEqual(len(self.client.list(store, limit=1).items), 1)
        self.assertEqual(len(self.client.list(store, limit=10000).items), 1)
        for query in ("limit=0", "limit=10001", "limit=abc", "limit=-1", "limit=", "sort=size",
                      "sort=", "cursor=%FF%FE", "cursor=garbage"):
            with self.subTest(query=query):
                response = self.request("GET", f"/v1/stores/{store}/blobs?{query}")
                self.assertError(response, 400, "invalid_query")
        with self.assertRaises(bc.InvalidQuery):
            self.client.list(store, limit=0)

    def test_a_cursor_is_tied_to_its_sort_order(self) -> None:
        store = self.store()
        for i in range(3):
            self.client.put(store, f"k{i}", b"1")
        cursor = self.client.list(store, limit=1).next_cursor
        response = self.request("GET", f"/v1/stores/{store}/blobs?sort=modified&cursor={cursor}")
        self.assertError(response, 400, "invalid_query")

    def test_unknown_parameters_are_ignored_and_unwritten_stores_are_404(self) -> None:
        store = self.store()
        self.client.put(store, "x", b"1")
        response = self.request("GET", f"/v1/stores/{store}/blobs?color=blue&x")
        self.assertEqual(response.status, 200)
        response = self.request("GET", f"/v1/stores/{self.store('never')}/blobs")
        self.assertError(response, 404, "not_found")

    def test_stores_lists_every_store_sorted(self) -> None:
        first, second = self.store("zz"), self.store("aa")
        self.client.put(first, "x", b"12345")
        self.client.put(second, "x", b"1")
        self.client.put(second, "y", b"22")
        response = self.request("GET", "/v1/stores")
        self.assertEqual(response.header("content-type"), "application/json")
        stores = response.json()["stores"]
        names = [s["name"] for s in stores]
        self.assertEqual(names, sorted(names))
        by_name = {s["name"]: s for s in stores}
        # Further members (issue 15: protocol-a adds `open` and `heldBy`) are allowed.
        self.assertEqual((by_name[first]["count"], by_name[first]["bytes"]), (1, 5))
        self.assertEqual((by_name[second]["count"], by_name[second]["bytes"]), (2, 3))
        totals = {s.name: (s.count, s.bytes) for s in self.client.stores()}
        self.assertEqual(totals[first], (1, 5))
        # Every store folder under the root, also one no daemon wrote; not other entries.
        manual = self.store("manual")
        os.mkdir(os.path.join(self.daemon.root, manual))
        os.mkdir(os.path.join(self.daemon.root, "Not-A-Store"))
        open(os.path.join(self.daemon.root, "a-file"), "w").close()
        names = [s.name for s in self.client.stores()]
        self.assertIn(manual, names)
        self.assertNotIn("Not-A-Store", names)
        self.assertNotIn("a-file", names)

    def test_health(self) -> None:
        response = self.request("GET", "/v1/health")
        self.assertEqual(response.header("content-type"), "application/json")
        self.assertEqual(response.json(), {"status": "ok"})
        self.assertEqual(self.request("HEAD", "/v1/health").status, 200)
        self.assertTrue(self.client.health())


class VerifyTests(DaemonTestCase):

    def blob_files(self, store: str) -> list:  # type: ignore[type-arg]
        return sorted(glob.glob(os.path.join(self.daemon.root, store, "b", "*", "*")))

    def test_verify_reports_healthy_corrupt_and_orphaned(self) -> None:
        store = self.store()
        for i in range(3):
            self.client.put(store, f"cats/{i}.txt", f"content {i}".encode())
        report = self.client.verify(store)
        self.assertEqual((report.healthy, report.corrupt, report.orphaned), (3, [], []))
        files = self.blob_files(store)
        self.assertEqual(len(files), 3)
        with open(files[0], "r+b") as f:  # flip the last content byte
            f.seek(-1, os.SEEK_END)
            last = f.read(1)
            f.seek(-1, os.SEEK_END)
            f.write(bytes([last[0] ^ 0xFF]))
        bucket = os.path.dirname(files[0])
        with open(os.path.join(bucket, "stray"), "wb") as f:  # a blob name, but no header
            f.write(b"not a blob")
        with open(os.path.join(bucket, ".hidden"), "wb") as f:  # never a blob file name
            f.write(b"x")
        os.makedirs(os.path.join(self.daemon.root, store, "b", "999999"))  # not in the manifest
        response = self.request("GET", f"/v1/stores/{store}/verify")
        self.assertEqual(response.header("content-type"), "application/json")
        obj = response.json()
        self.assertEqual(set(obj), {"healthy", "corrupt", "orphaned"})
        self.assertEqual(obj["healthy"], 2)
        corrupt = {os.path.basename(c["path"]): c for c in obj["corrupt"]}
        self.assertEqual(set(corrupt), {"cats%2F0.txt", "stray"}, obj)
        self.assertEqual(corrupt["cats%2F0.txt"]["identifier"], "cats/0.txt")
        self.assertIn("checksum", corrupt["cats%2F0.txt"]["reason"])
        self.assertNotIn("identifier", corrupt["stray"])  # the file does not say
        orphaned = {os.path.basename(o["path"]): o for o in obj["orphaned"]}
        self.assertEqual(set(orphaned), {".hidden", "999999"}, obj)
        for problem in obj["corrupt"] + obj["orphaned"]:
            self.assertIsInstance(problem["reason"], str)
            self.assertTrue(problem["path"].startswith(os.path.join(self.daemon.root, store)))
        self.assertFalse(self.client.verify(store).ok)
        # Read-only: what it reports is left in place.
        self.assertTrue(os.path.exists(os.path.join(bucket, "stray")))
        self.assertTrue(os.path.exists(os.path.join(bucket, ".hidden")))
        self.assertEqual(len(self.blob_files(store)), 4)  # 3 blobs and the stray file
        self.assertTrue(os.path.isdir(os.path.join(self.daemon.root, store, "b", "999999")))
        # POST repairs: what it found is moved into quarantine/, and the store checks clean.
        response = self.request("POST", f"/v1/stores/{store}/verify")
        self.assertEqual(response.status, 200, response.body)
        obj = response.json()
        self.assertEqual(set(obj), {"healthy", "corrupt", "orphaned", "quarantined"})
        moved = {os.path.basename(q["from"]) for q in obj["quarantined"]}
        self.assertEqual(moved, {"cats%2F0.txt", "stray", ".hidden", "999999"}, obj)
        for entry in obj["quarantined"]:
            self.assertTrue(entry["to"].startswith(os.path.join(self.daemon.root, store, "quarantine") + "/"))
            self.assertTrue(os.path.exists(entry["to"]))
        self.assertTrue(self.client.verify(store).ok)
        self.assertEqual(self.client.get(store, "cats/1.txt"), b"content 1")
        self.assertEqual(self.request("POST", "/v1/stores/never-written/verify").status, 404)

    def test_verify_of_a_missing_store_is_404(self) -> None:
        self.assertError(self.request("GET", f"/v1/stores/{self.store('never')}/verify"), 404,
                         "not_found")

    def test_a_damaged_blob_header_is_500_corrupt(self) -> None:
        store = self.store()
        self.client.put(store, "x", b"some content")
        path = self.blob_files(store)[0]
        with open(path, "r+b") as f:
            f.seek(12)
            byte = f.read(1)
            f.seek(12)
            f.write(bytes([byte[0] ^ 0x55]))
        with self.daemon.client() as client, self.assertRaises(bc.Corrupt) as ctx:
            client.get(store, "x")
        self.assertEqual((ctx.exception.status, ctx.exception.code), (500, "corrupt"))

    def test_an_unreadable_blob_is_500_io_error(self) -> None:
        store = self.store()
        self.client.put(store, "x", b"some content")
        path = self.blob_files(store)[0]
        os.unlink(path)
        os.mkdir(path)  # reading a folder fails with EISDIR
        with self.daemon.client() as client, self.assertRaises(bc.BlobdError) as ctx:
            client.get(store, "x")
        self.assertEqual((ctx.exception.status, ctx.exception.code), (500, "io_error"))
        self.assertIsInstance(ctx.exception, bc.ServerIOError)


class LockedStoreTests(DaemonTestCase):

    def lock_store(self, store: str) -> int:
        """Creates the store folder and holds its .lock as another process would."""
        folder = os.path.join(self.daemon.root, store)
        os.makedirs(folder)
        fd = os.open(os.path.join(folder, ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, b"pid 1\n")
        self.addCleanup(os.close, fd)
        return fd

    def test_a_store_held_by_another_process_is_503_store_locked(self) -> None:
        self.client.put(self.store("other"), "x", b"1")  # the root exists
        store = self.store()
        self.lock_store(store)
        for method, path in [("GET", f"/v1/stores/{store}/blobs"),
                             ("GET", f"/v1/stores/{store}/blobs/x"),
                             ("PUT", f"/v1/stores/{store}/blobs/x")]:
            with self.subTest(method=method, path=path):
                response = self.request(method, path, body=b"1" if method == "PUT" else None)
                self.assertError(response, 503, "store_locked")
        with self.assertRaises(bc.StoreLocked):
            self.client.list(store)

    def test_stores_lists_a_store_held_by_another_process(self) -> None:
        open_store = self.store("open")
        self.client.put(open_store, "x", b"1")
        store = self.store()
        self.lock_store(store)
        response = self.request("GET", "/v1/stores")
        self.assertEqual(response.status, 200, response.body)
        names = [s["name"] for s in response.json()["stores"]]
        self.assertIn(store, names)
        self.assertIn(open_store, names)


class MetricsTests(DaemonTestCase):

    METRICS = {
        "blobd_requests_total": "counter", "blobd_request_errors_total": "counter",
        "blobd_request_duration_seconds": "histogram", "blobd_received_bytes_total": "counter",
        "blobd_sent_bytes_total": "counter", "blobd_open_connections": "gauge",
        "blobd_accepted_connections_total": "counter",
        "blobd_refused_connections_total": "counter", "blobd_event_subscribers": "gauge",
        "blobstore_store_blobs": "gauge", "blobstore_store_bytes": "gauge",
    }
    OPERATIONS = ("get", "head", "put", "delete", "list", "delete_all", "stores", "events",
                  "health", "metrics", "verify", "other")

    def test_metrics_text_format_names_and_types(self) -> None:
        store = self.store()
        self.client.put(store, "x", b"12345")
        response = self.request("GET", "/metrics")
        self.assertEqual(response.status, 200)
        self.assertEqual(response.header("content-type"),
                         "text/plain; version=0.0.4; charset=utf-8")
        text = response.body.decode()
        for name, kind in self.METRICS.items():
            with self.subTest(metric=name):
                self.assertIn(f"# TYPE {name} {kind}\n", text)
        samples = bc.parse_metrics(text)
        self.assertEqual(samples[("blobstore_store_blobs", (("store", store),))], 1)
        self.assertEqual(samples[("blobstore_store_bytes", (("store", store),))], 5)
        operations = {dict(labels)["operation"] for name, labels in samples
                      if name == "blobd_requests_total"}
        self.assertLessEqual(operations, set(self.OPERATIONS))
        buckets = [dict(labels)["le"] for name, labels in samples
                   if name == "blobd_request_duration_seconds_bucket"]
        self.assertIn("0.0001", buckets)
        self.assertIn("10", [b.rstrip("0").rstrip(".") if "." in b else b for b in buckets])
        self.assertIn("+Inf", buckets)

    def test_counters_count_each_operation(self) -> None:
        store = self.store()

        def counts() -> dict:  # type: ignore[type-arg]
            samples = bc.parse_metrics(self.client.metrics())
            return {dict(labels).get("operation"): value for (name, labels), value
                    in samples.items() if name == "blobd_requests_total"}

        def errors() -> dict:  # type: ignore[type-arg]
            samples = bc.parse_metrics(self.client.metrics())
            return {dict(labels).get("operation"): value for (name, labels), value
                    in samples.items() if name == "blobd_request_errors_total"}
        before, errors_before = counts(), errors()
        sent = bc.parse_metrics(self.client.metrics())[("blobd_received_bytes_total", ())]
        self.client.put(store, "x", b"123456789")
        self.client.get(store, "x")
        self.client.stat(store, "x")
        self.client.list(store)
        self.client.stores()
        self.client.health()
        self.client.verify(store)
        self.client.remove(store, "x")
        self.client.remove_all(store)
        with self.assertRaises(bc.NotFound):
            self.client.get(store, "x")
        self.request("GET", "/nowhere")
        with self.client.watch() as stream:
            stream.open()
        after, errors_after = counts(), errors()
        expected = {"put": 1, "get": 2, "head": 1, "list": 1, "stores": 1, "health": 1,
                    "verify": 1, "delete": 1, "delete_all": 1, "other": 1, "events": 1,
                    "metrics": 3}
        for operation, count in expected.items():
            with self.subTest(operation=operation):
                self.assertEqual(after.get(operation, 0) - before.get(operation, 0), count)
        self.assertEqual(errors_after.get("get", 0) - errors_before.get("get", 0), 1)
        self.assertEqual(errors_after.get("other", 0) - errors_before.get("other", 0), 1)
        received = bc.parse_metrics(self.client.metrics())[("blobd_received_bytes_total", ())]
        self.assertGreaterEqual(received - sent, 9)

    def test_connection_gauges(self) -> None:
        def sample(name: str) -> float:
            return bc.parse_metrics(self.client.metrics())[(name, ())]
        accepted = sample("blobd_accepted_connections_total")
        open_now = sample("blobd_open_connections")
        conns = [self.raw() for _ in range(3)]
        for conn in conns:
            conn.request("GET", "/v1/health")
        self.assertEqual(sample("blobd_accepted_connections_total") - accepted, 3)
        self.assertEqual(sample("blobd_open_connections") - open_now, 3)
        subscribers = sample("blobd_event_subscribers")
        with self.client.watch() as stream:
            stream.open()
            self.assertEqual(sample("blobd_event_subscribers") - subscribers, 1)
        for conn in conns:
            conn.close()
        self.assertIsNotNone(sample("blobd_refused_connections_total"))
        sent = sample("blobd_sent_bytes_total")
        self.client.health()
        self.assertGreaterEqual(sample("blobd_sent_bytes_total") - sent, len(b'{"status":"ok"}'))


class FullDiskTests(unittest.TestCase):

    def test_a_full_disk_is_507_insufficient_storage(self) -> None:
        if os.geteuid() != 0:
            self.skipTest("mounting a small tmpfs needs root")
        mount_point = tempfile.mkdtemp(prefix="blobd-full-")
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mount_point],
                              capture_output=True, text=True)
        if done.returncode != 0:
            os.rmdir(mount_point)
            self.skipTest(f"cannot mount a tmpfs here: {done.stderr.strip()}")
        self.addCleanup(os.rmdir, mount_point)
        self.addCleanup(subprocess.run, ["umount", "-l", mount_point], capture_output=True)
        daemon = Daemon(root=os.path.join(mount_point, "root"))
        self.addCleanup(daemon.stop)
        client = daemon.client()
        with self.assertRaises(bc.InsufficientStorage) as ctx:
            client.put("full", "big", os.urandom(4 << 20))
        self.assertEqual((ctx.exception.status, ctx.exception.code), (507, "insufficient_storage"))
        client.close()


if __name__ == "__main__":
    unittest.main()
