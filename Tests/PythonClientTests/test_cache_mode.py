"""Cache mode enforced by the stores (needs the policy engine, issue 18): a blob's expiry stated in
its metadata and headers, an expired blob never served, and its removal an `expired` event
(docs/PROTOCOL.md, "Expiry", "Change events")."""

from __future__ import annotations

import time
import unittest
from datetime import datetime, timezone

from support import DaemonTestCase
import blobd_client as bc  # noqa: E402  (support puts the client on the path)


class CacheModeTests(DaemonTestCase):

    def test_the_expiry_is_stated_in_the_metadata_and_headers(self) -> None:
        store = self.store()
        when = datetime(2099, 1, 1, tzinfo=timezone.utc)
        meta = self.client.put(store, "a", b"x", expires=when)
        self.assertEqual(meta.expires, when)
        head = self.request("HEAD", f"/v1/stores/{store}/blobs/a")
        self.assertEqual(head.header("blob-expires"), "2099-01-01T00:00:00.000Z")
        self.assertEqual(head.header("expires"), "Thu, 01 Jan 2099 00:00:00 GMT")
        self.assertEqual(self.client.list(store).items[0].expires, when)

    def test_an_expired_blob_is_not_served_and_its_removal_is_an_expired_event(self) -> None:
        store = self.store()
        with self.client.watch(store, timeout=20) as events:
            events.open()  # subscribed before the put (iteration would connect only after the sweep)
            self.client.put(store, "a", b"x", max_age=1)
            time.sleep(1.5)
            self.assertError(self.request("GET", f"/v1/stores/{store}/blobs/a"), 404, "not_found")
            self.assertEqual(self.client.list(store).items, [])
            kinds = []
            for event in events:
                kinds.append(type(event))
                if isinstance(event, bc.ExpiredEvent):
                    self.assertEqual(event.identifier, "a")
                    break
            self.assertEqual(kinds[-1], bc.ExpiredEvent)


if __name__ == "__main__":
    unittest.main()
