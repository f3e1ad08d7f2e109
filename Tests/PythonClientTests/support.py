"""Shared test bases: one daemon per test module, unique store names per test."""

from __future__ import annotations

import itertools
import re
import unittest
from typing import Optional

from blobd_harness import Daemon, RawConnection, RawResponse, raw_request
import blobd_client as bc

_counter = itertools.count()


class DaemonTestCase(unittest.TestCase):
    """Starts one blobd for the whole class (``daemon_args`` are its extra flags)."""

    daemon_args: tuple = ()
    daemon: Daemon
    client: bc.BlobdClient

    @classmethod
    def setUpClass(cls) -> None:
        cls.daemon = Daemon(*cls.daemon_args)
        cls.client = cls.daemon.client()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.client.close()
        cls.daemon.stop()

    def store(self, hint: str = "") -> str:
        """A store name no other test uses."""
        base = re.sub(r"[^a-z0-9]", "-", (hint or self._testMethodName).lower()).strip("-")
        return f"{base[:40]}-{next(_counter)}"

    def raw(self) -> RawConnection:
        """A raw connection to this class's daemon."""
        return self.daemon.raw()

    def request(self, method: str, path: str, headers=(), body: Optional[bytes] = None,  # type: ignore[no-untyped-def]
                version: str = "HTTP/1.1") -> RawResponse:
        """One raw request on a fresh connection."""
        return raw_request(self.daemon, method, path, headers, body, version)

    def assertError(self, response: RawResponse, status: int, code: str) -> None:
        """``response`` is the JSON error ``code`` with ``status``."""
        self.assertEqual(response.status, status, response.body)
        self.assertEqual(response.header("content-type"), "application/json")
        self.assertEqual(response.error_code, code, response.body)
        error = response.json()["error"]
        self.assertIsInstance(error["message"], str)  # type: ignore[index]
        self.assertTrue(error["message"])  # type: ignore[index]
