"""Store policy (cache mode): `GET`/`PUT /v1/stores/{store}`, the policy in `/v1/stores` and
`/metrics`, `invalid_policy`, and a PUT's expiry headers (docs/PROTOCOL.md, "Store policy",
"Expiry"). What needs the stores to enforce the policy (expiry, eviction) is in test_cache_mode."""

from __future__ import annotations

import json
import unittest
from datetime import datetime, timezone

from support import DaemonTestCase
import blobd_client as bc  # noqa: E402  (support puts the client on the path)


class StorePolicyTests(DaemonTestCase):

    def test_a_store_is_created_with_a_policy_and_changed_member_by_member(self) -> None:
        store = self.store()
        self.assertError(self.request("GET", f"/v1/stores/{store}"), 404, "not_found")
        created = self.request("PUT", f"/v1/stores/{store}",
                               body=b'{"maxBytes":2147483648,"defaultTTL":604800}')
        self.assertEqual(created.status, 201, created.body)
        self.assertEqual(created.json(), {"name": store, "count": 0, "bytes": 0, "policy": {
            "maxBytes": 2147483648, "maxCount": None, "defaultTTL": 604800}})
        self.client.put(store, "a", b"hello")
        status = self.client.set_store_policy(store, max_count=10, max_bytes=None, default_ttl=1.5)
        self.assertEqual(status, bc.StoreStatus(store, 1, 5, bc.StorePolicy(None, 10, 1.5)))
        self.assertEqual(self.client.store_status(store), status)
        head = self.request("HEAD", f"/v1/stores/{store}")
        self.assertEqual((head.status, head.body), (200, b""))
        # An empty body changes nothing (and answers 200 for an existing store).
        unchanged = self.request("PUT", f"/v1/stores/{store}")
        self.assertEqual((unchanged.status, unchanged.json()["policy"]),
                         (200, {"maxBytes": None, "maxCount": 10, "defaultTTL": 1.5}))
        listed = {s.name: s for s in self.client.stores()}
        self.assertEqual(listed[store].policy, bc.StorePolicy(None, 10, 1.5))
        samples = bc.parse_metrics(self.client.metrics())
        self.assertEqual(samples[("blobstore_store_max_blobs", (("store", store),))], 10)
        self.assertNotIn(("blobstore_store_max_bytes", (("store", store),)), samples)
        text = self.client.metrics()
        for name, kind in (("blobstore_store_max_bytes", "gauge"), ("blobstore_store_max_blobs", "gauge"),
                           ("blobstore_store_expired_total", "counter"),
                           ("blobstore_store_evicted_total", "counter")):
            self.assertIn(f"# TYPE {name} {kind}\n", text)
        allowed = self.request("DELETE", f"/v1/stores/{store}")
        self.assertError(allowed, 405, "method_not_allowed")
        self.assertEqual(allowed.header("allow"), "GET, HEAD, PUT")

    def test_a_refused_policy_names_the_member_and_creates_nothing(self) -> None:
        store = self.store()
        for body, member in ((b'{"maxBytes":0}', "maxBytes"), (b'{"maxCount":1.5}', "maxCount"),
                             (b'{"defaultTTL":"7d"}', "defaultTTL"), (b'{"ttl":1}', "'ttl'"),
                             (b"[]", "JSON object"), (b"{", "not valid JSON")):
            with self.subTest(body=body):
                response = self.request("PUT", f"/v1/stores/{store}", body=body)
                self.assertError(response, 400, "invalid_policy")
                self.assertIn(member, response.json()["error"]["message"])  # type: ignore[index]
        with self.assertRaises(bc.InvalidPolicy):
            self.client.set_store_policy(store, max_count=0)
        self.assertError(self.request("PUT", f"/v1/stores/{store}", body=b" " * 70000), 413, "too_large")
        self.assertNotIn(store, [s.name for s in self.client.stores()])

    def test_a_puts_expiry_headers_are_checked(self) -> None:
        store = self.store()
        for headers in ((("Blob-Expires", "tomorrow"),), (("Cache-Control", "max-age=soon"),),
                        (("Blob-Expires", "never"), ("Cache-Control", "max-age=5"))):
            with self.subTest(headers=headers):
                self.assertError(self.request("PUT", f"/v1/stores/{store}/blobs/a", headers, b"x"),
                                 400, "bad_request")
        when = datetime(2099, 1, 1, tzinfo=timezone.utc)
        self.assertEqual(self.client.put(store, "a", b"x", expires=when).size, 1)
        self.assertEqual(self.client.put(store, "b", b"x", expires="never").size, 1)
        self.assertEqual(self.client.put(store, "c", b"x", max_age=60).size, 1)

    def test_removals_by_policy_are_typed_events(self) -> None:
        data = json.dumps({"store": "s", "identifier": "a", "date": "2026-11-22T22:28:31.000Z"})
        expired = bc._typed_event(7, "expired", data)
        evicted = bc._typed_event(8, "evicted", data)
        self.assertIsInstance(expired, bc.ExpiredEvent)
        self.assertIsInstance(evicted, bc.EvictedEvent)
        self.assertIsInstance(expired, bc.RemovedEvent)
        self.assertEqual((expired.store, expired.identifier), ("s", "a"))  # type: ignore[attr-defined]


if __name__ == "__main__":
    unittest.main()
