"""PROTOCOL.md "HTTP basics", over raw sockets (the checklist is in test_protocol.py)."""

from __future__ import annotations

import os
import time
import unittest

from support import DaemonTestCase


class HTTPBasicsTests(DaemonTestCase):

    def test_http11_and_http10_are_served(self) -> None:
        self.assertEqual(self.request("GET", "/v1/health").status, 200)
        response = self.request("GET", "/v1/health", version="HTTP/1.0")
        self.assertEqual(response.status, 200)
        self.assertEqual(response.json(), {"status": "ok"})

    def test_other_versions_get_505_bad_request_and_close(self) -> None:
        for version in ("HTTP/2.0", "HTTP/1.2", "HTTP/0.9"):
            with self.subTest(version=version), self.raw() as conn:
                conn.send(f"GET /v1/health {version}\r\nHost: blobd\r\n\r\n".encode())
                response = conn.read_response()
                self.assertError(response, 505, "bad_request")
                self.assertTrue(conn.is_closed())

    def test_a_malformed_version_is_400(self) -> None:
        for version in ("HTTP/3", "HTTP/1", "HTTP/1.1.1"):
            with self.subTest(version=version), self.raw() as conn:
                conn.send(f"GET /v1/health {version}\r\nHost: blobd\r\n\r\n".encode())
                self.assertError(conn.read_response(), 400, "bad_request")

    def test_host_is_not_required(self) -> None:
        with self.raw() as conn:
            conn.send(b"GET /v1/health HTTP/1.1\r\n\r\n")
            self.assertEqual(conn.read_response().status, 200)

    def test_keep_alive_is_the_default_for_http11(self) -> None:
        with self.raw() as conn:
            for _ in range(3):
                self.assertEqual(conn.request("GET", "/v1/health").status, 200)
            self.assertFalse(conn.is_closed(0.2))

    def test_connection_close_closes_after_the_response(self) -> None:
        with self.raw() as conn:
            response = conn.request("GET", "/v1/health", [("Connection", "close")])
            self.assertEqual(response.status, 200)
            self.assertTrue(conn.is_closed())

    def test_http10_closes_unless_keep_alive(self) -> None:
        with self.raw() as conn:
            self.assertEqual(conn.request("GET", "/v1/health", version="HTTP/1.0").status, 200)
            self.assertTrue(conn.is_closed())
        with self.raw() as conn:
            for _ in range(2):
                response = conn.request("GET", "/v1/health", [("Connection", "keep-alive")],
                                        version="HTTP/1.0")
                self.assertEqual(response.status, 200)
            self.assertFalse(conn.is_closed(0.2))

    def test_pipelined_requests_are_answered_in_order(self) -> None:
        store = self.store()
        requests = b""
        for i in range(20):
            body = f"body-{i}".encode()
            requests += (f"PUT /v1/stores/{store}/blobs/k{i} HTTP/1.1\r\n"
                         f"Content-Length: {len(body)}\r\n\r\n").encode() + body
            requests += f"GET /v1/stores/{store}/blobs/k{i} HTTP/1.1\r\n\r\n".encode()
        requests += f"HEAD /v1/stores/{store}/blobs/k3 HTTP/1.1\r\n\r\n".encode()
        requests += b"GET /v1/nope HTTP/1.1\r\n\r\n"
        with self.raw() as conn:
            conn.send(requests)  # all at once, before reading anything
            for i in range(20):
                put = conn.read_response()
                self.assertEqual(put.status, 201)
                self.assertEqual(put.json()["identifier"], f"k{i}")
                get = conn.read_response()
                self.assertEqual((get.status, get.body), (200, f"body-{i}".encode()))
            head = conn.read_response(head_request=True)
            self.assertEqual((head.status, head.header("content-length")), (200, "6"))
            self.assertEqual(conn.read_response().status, 404)

    def test_content_length_and_chunked_bodies(self) -> None:
        store = self.store()
        with self.raw() as conn:
            conn.send(f"PUT /v1/stores/{store}/blobs/c HTTP/1.1\r\n"
                      "Transfer-Encoding: chunked\r\n\r\n"
                      "5\r\nhello\r\n1;ext=1\r\n \r\n5\r\nworld\r\n0\r\nTrailer: x\r\n\r\n".encode())
            response = conn.read_response()
            self.assertEqual(response.status, 201, response.body)
            self.assertEqual(response.json()["size"], 11)
            self.assertEqual(conn.request("GET", f"/v1/stores/{store}/blobs/c").body,
                             b"hello world")
            response = conn.request("PUT", f"/v1/stores/{store}/blobs/l", body=b"12345")
            self.assertEqual(response.status, 201)
            self.assertEqual(conn.request("GET", f"/v1/stores/{store}/blobs/l").body, b"12345")

    def test_bodies_are_streamed_without_a_limit_below_the_stores(self) -> None:
        store = self.store()
        big = os.urandom(8 << 20)
        meta = self.client.put(store, "big", big)
        self.assertEqual(meta.size, len(big))
        self.assertEqual(self.client.get(store, "big"), big)

    def test_expect_continue_acceptable_gets_100_then_the_final_response(self) -> None:
        store = self.store()
        with self.raw() as conn:
            conn.send(f"PUT /v1/stores/{store}/blobs/e HTTP/1.1\r\nContent-Length: 3\r\n"
                      "Expect: 100-continue\r\n\r\n".encode())
            interim = conn.read_head()
            self.assertEqual(interim.status, 100)
            self.assertEqual(interim.version, "HTTP/1.1")
            conn.send(b"abc")
            response = conn.read_response()
            self.assertEqual(response.status, 201)
            self.assertEqual(conn.request("GET", f"/v1/stores/{store}/blobs/e").body, b"abc")

    def test_expect_continue_refused_gets_the_error_at_once_and_a_close(self) -> None:
        store = self.store()
        cases = [
            ("/v1/stores/BAD/blobs/x", [], 400, "invalid_store_name"),
            (f"/v1/stores/{store}/blobs/bad%01id", [], 400, "invalid_identifier"),
            (f"/v1/stores/{store}/blobs/x", [("Blob-Meta-bad.key", "v")], 400, "invalid_metadata"),
            (f"/v1/stores/{store}/blobs/x", [("Blob-Validate", "maybe")], 400, "bad_request"),
        ]
        for path, extra, status, code in cases:
            with self.subTest(path=path, code=code), self.raw() as conn:
                head = f"PUT {path} HTTP/1.1\r\nContent-Length: 1000000\r\nExpect: 100-continue\r\n"
                head += "".join(f"{k}: {v}\r\n" for k, v in extra) + "\r\n"
                conn.send(head.encode())
                response = conn.read_response(skip_continue=False)
                self.assertError(response, status, code)
                self.assertTrue(conn.is_closed())
        self.assertNotIn(store, [s.name for s in self.client.stores()])

    def test_expect_continue_above_the_store_maximum_is_413_too_large(self) -> None:
        store = self.store()
        with self.raw() as conn:
            conn.send(f"PUT /v1/stores/{store}/blobs/huge HTTP/1.1\r\n"
                      f"Content-Length: {(1 << 40) + 1}\r\nExpect: 100-continue\r\n\r\n".encode())
            response = conn.read_response(skip_continue=False)
            self.assertError(response, 413, "too_large")
            self.assertTrue(conn.is_closed())
        self.assertNotIn(store, [s.name for s in self.client.stores()])

    def test_refused_puts_never_create_the_store(self) -> None:
        refusals = [
            ([("Blob-Validate", "image")], b"not an image", 415),
            ([("Blob-Validate", "record")], b"{nope", 422),
            ([("If-Match", '"0123456789abcdef"')], b"x", 412),
        ]
        created = []
        for extra, body, status in refusals:
            store = self.store()
            response = self.request("PUT", f"/v1/stores/{store}/blobs/x", extra, body)
            self.assertEqual(response.status, status)
            created.append(store)
        # A malformed chunked body.
        store = self.store()
        with self.raw() as conn:
            conn.send(f"PUT /v1/stores/{store}/blobs/x HTTP/1.1\r\nTransfer-Encoding: chunked"
                      "\r\n\r\n3\r\nabc\r\nZZ\r\n".encode())
            self.assertEqual(conn.read_response().status, 400)
        created.append(store)
        # A client that leaves before the end of its body.
        store = self.store()
        with self.raw() as conn:
            conn.send(f"PUT /v1/stores/{store}/blobs/x HTTP/1.1\r\nContent-Length: 100\r\n"
                      "\r\n12345".encode())
            time.sleep(0.3)  # the head has been read: the put is in progress
        created.append(store)
        time.sleep(0.5)  # the daemon sees the close
        names = [s.name for s in self.client.stores()]
        for store in created:
            self.assertNotIn(store, names)
            self.assertFalse(os.path.exists(os.path.join(self.daemon.root, store)), store)

    def test_a_store_does_not_exist_while_its_first_put_is_in_progress(self) -> None:
        store = self.store()
        with self.raw() as conn:
            conn.send(f"PUT /v1/stores/{store}/blobs/x HTTP/1.1\r\nContent-Length: 10\r\n"
                      "\r\n12345".encode())
            time.sleep(0.3)  # the head has been read
            self.assertError(self.request("GET", f"/v1/stores/{store}/blobs"), 404, "not_found")
            self.assertNotIn(store, [s.name for s in self.client.stores()])
            conn.send(b"67890")
            self.assertEqual(conn.read_response().status, 201)
        self.assertIn(store, [s.name for s in self.client.stores()])

    def test_a_large_refused_upload_without_expect_reads_the_415(self) -> None:
        store = self.store()
        body = b"\x00" * (16 << 20)
        with self.raw() as conn:
            conn.send(f"PUT /v1/stores/{store}/blobs/x HTTP/1.1\r\nBlob-Validate: image\r\n"
                      f"Content-Length: {len(body)}\r\n\r\n".encode())
            try:
                conn.send(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the daemon may stop reading; its answer must still arrive
            response = conn.read_response()
            self.assertError(response, 415, "not_an_image")

    def test_a_declared_length_above_the_maximum_without_expect_reads_the_413(self) -> None:
        # Today the daemon reads (discards) the whole declared 1 TiB before answering.
        store = self.store()
        with self.raw() as conn:
            conn.send(f"PUT /v1/stores/{store}/blobs/x HTTP/1.1\r\n"
                      f"Content-Length: {(1 << 40) + 1}\r\n\r\n".encode())
            conn.sock.settimeout(5)
            try:
                for _ in range(32):
                    conn.send(b"\x00" * (1 << 20))
            except (BrokenPipeError, ConnectionResetError):
                pass
            response = conn.read_response()
            self.assertError(response, 413, "too_large")

    def test_request_head_limits(self) -> None:
        with self.raw() as conn:  # start line over 8 KiB
            conn.send(b"GET /v1/stores/s/blobs/" + b"a" * 9000 + b" HTTP/1.1\r\n\r\n")
            response = conn.read_response()
            self.assertError(response, 414, "bad_request")
            self.assertTrue(conn.is_closed())
        with self.raw() as conn:  # more than 100 header fields
            fields = "".join(f"X-F{i}: v\r\n" for i in range(101))
            conn.send(f"GET /v1/health HTTP/1.1\r\n{fields}\r\n".encode())
            response = conn.read_response()
            self.assertError(response, 431, "bad_request")
            self.assertTrue(conn.is_closed())
        with self.raw() as conn:  # head over 32 KiB in few fields
            fields = "".join(f"X-F{i}: {'v' * 4000}\r\n" for i in range(9))
            conn.send(f"GET /v1/health HTTP/1.1\r\n{fields}\r\n".encode())
            response = conn.read_response()
            self.assertError(response, 431, "bad_request")
        with self.raw() as conn:  # 100 fields and under 32 KiB is fine
            fields = "".join(f"X-F{i}: v\r\n" for i in range(99))
            conn.send(f"GET /v1/health HTTP/1.1\r\n{fields}\r\n".encode())
            self.assertEqual(conn.read_response().status, 200)

    def test_malformed_requests_get_the_codecs_status_and_a_close(self) -> None:
        cases = [
            (b"GARBAGE\r\n\r\n", 400),
            (b"GET /v1/health HTTP/1.1\r\nNo colon here\r\n\r\n", 400),
            (b"GET /v1/health HTTP/1.1\r\nContent-Length: x\r\n\r\n", 400),
            (b"PUT /v1/stores/s/blobs/a HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400),
            (b"PUT /v1/stores/s/blobs/a HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
            (b"PUT /v1/stores/s/blobs/a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
             b"FFFFFFFFFFFFFFFFFFFF\r\n", 413),
            (b"GET /v1/health HTTP/9.9\r\n\r\n", 505),
        ]
        for data, status in cases:
            with self.subTest(data=data[:60]), self.raw() as conn:
                conn.send(data)
                response = conn.read_response()
                self.assertError(response, status, "bad_request")
                self.assertTrue(conn.is_closed())

    def test_bad_percent_encoding_is_400_bad_request(self) -> None:
        for path in ("/v1/stores/s/blobs/a%zz", "/v1/stores/s/blobs/a%2", "/v1/he%"):
            with self.subTest(path=path):
                self.assertError(self.request("GET", path), 400, "bad_request")

    def test_every_response_has_content_length_except_1xx_204_304(self) -> None:
        store = self.store()
        meta = self.client.put(store, "x", b"abc")
        with self.raw() as conn:
            for method, path, headers in [
                ("GET", "/v1/health", []), ("GET", "/v1/stores", []), ("GET", "/metrics", []),
                ("GET", f"/v1/stores/{store}/blobs", []), ("GET", f"/v1/stores/{store}/blobs/x", []),
                ("HEAD", f"/v1/stores/{store}/blobs/x", []), ("GET", "/nope", []),
                ("GET", f"/v1/stores/{store}/verify", []),
            ]:
                response = conn.request(method, path, headers)
                self.assertIsNotNone(response.header("content-length"), (method, path))
            no_length = [
                conn.request("GET", f"/v1/stores/{store}/blobs/x",
                             [("If-None-Match", f'"{meta.etag}"')]),
                conn.request("DELETE", f"/v1/stores/{store}/blobs/x"),
            ]
            self.assertEqual([r.status for r in no_length], [304, 204])
            for response in no_length:
                self.assertIsNone(response.header("content-length"))
                self.assertEqual(response.body, b"")
            self.assertFalse(conn.is_closed(0.2))

    def test_head_responses_have_no_body(self) -> None:
        store = self.store()
        self.client.put(store, "x", b"0123456789")
        with self.raw() as conn:
            # A HEAD then a GET on one connection: a HEAD body would be read as the GET's head.
            for path in ["/v1/health", f"/v1/stores/{store}/blobs/x", f"/v1/stores/{store}/blobs/no"]:
                conn.send(f"HEAD {path} HTTP/1.1\r\n\r\nGET /v1/health HTTP/1.1\r\n\r\n".encode())
                conn.read_response(head_request=True)
                after = conn.read_response()
                self.assertEqual((after.status, after.body), (200, b'{"status":"ok"}'), path)

    def test_every_response_has_a_date(self) -> None:
        with self.raw() as conn:
            for method, path in [("GET", "/v1/health"), ("GET", "/nope"), ("HEAD", "/v1/health"),
                                 ("GET", "/metrics"), ("GET", "/v1/stores")]:
                response = conn.request(method, path)
                date = response.header("date")
                self.assertIsNotNone(date, (method, path))
                self.assertRegex(date or "", r"^[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} "
                                             r"\d\d:\d\d:\d\d GMT$")

    def test_body_on_a_route_that_takes_none_closes_after_answering(self) -> None:
        store = self.store()
        self.client.put(store, "x", b"1")
        with self.raw() as conn:
            conn.send(f"DELETE /v1/stores/{store}/blobs/x HTTP/1.1\r\nContent-Length: 3\r\n"
                      "\r\nabc".encode())
            response = conn.read_response()
            self.assertEqual(response.status, 204)
            self.assertTrue(conn.is_closed())
        self.assertFalse(self.client.exists(store, "x"))

    def test_error_before_the_body_with_expect_closes(self) -> None:
        with self.raw() as conn:
            conn.send(b"PUT /v1/stores/BAD/blobs/x HTTP/1.1\r\nContent-Length: 3\r\n"
                      b"Expect: 100-continue\r\n\r\n")
            self.assertError(conn.read_response(skip_continue=False), 400, "invalid_store_name")
            self.assertTrue(conn.is_closed())

    def test_error_before_a_body_without_expect_reads_and_discards_it(self) -> None:
        with self.raw() as conn:
            response = conn.request("PUT", "/v1/stores/BAD/blobs/x", body=b"abc")
            self.assertError(response, 400, "invalid_store_name")
            self.assertEqual(conn.request("GET", "/v1/health").status, 200)
            conn.send(b"PUT /v1/stores/BAD/blobs/x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                      b"3\r\nabc\r\n0\r\n\r\n")
            self.assertError(conn.read_response(), 400, "invalid_store_name")
            self.assertEqual(conn.request("GET", "/v1/health").status, 200)


class HostIgnoredTests(DaemonTestCase):

    def test_the_host_name_is_ignored(self) -> None:
        with self.raw() as conn:
            conn.send(b"GET /v1/health HTTP/1.1\r\nHost: anything.example:81\r\n\r\n")
            self.assertEqual(conn.read_response().status, 200)


if __name__ == "__main__":
    unittest.main()
