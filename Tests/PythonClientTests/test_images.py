"""Real images through `Blob-Validate: image` (PROTOCOL.md, PUT and "Metadata object").

Each file Pillow (and pillow-heif) makes must be accepted, and blobd's recorded format, width and
height must equal Pillow's reading of the same bytes. Each file cut short (to half its length, and
by the last byte of its structure) must be refused with 415 not_an_image. One test per file and per cut, so the
expected failures below name exactly what today's blobd gets wrong.
"""

from __future__ import annotations

import unittest
from typing import Dict, Optional, Tuple

from support import DaemonTestCase  # first: puts Examples/PythonClient on sys.path
import blobd_client as bc  # noqa: E402
import image_files  # noqa: E402

CATALOGUE = image_files.catalogue()

# What blobd gets wrong, if anything. Each entry makes its test an expected failure; an unexpected
# success says to remove the entry.
KNOWN_ACCEPT_FAILURES: Dict[str, str] = {}
# Image name -> the cuts blobd accepts.
KNOWN_TRUNCATION_FAILURES: Dict[str, Tuple[str, ...]] = {}

_files: Dict[str, Optional[bytes]] = {}


def image_bytes(test: unittest.TestCase, name: str) -> bytes:
    """The file for ``name``, made once; skips the test when this machine cannot make it."""
    maker, needs = CATALOGUE[name]
    reason = image_files.missing_feature(needs)
    if reason:
        test.skipTest(reason)
    if name not in _files:
        _files[name] = maker()
    data = _files[name]
    if data is None:
        test.skipTest(f"could not produce {name} with this encoder")
    assert data is not None
    return data


class ImageValidationTests(DaemonTestCase):
    daemon_args = ("--durability", "relaxed")

    def check_accepted(self, name: str) -> None:
        data = image_bytes(self, name)
        expected = image_files.pillow_answer(data)
        meta = self.client.put("images", f"ok/{name}", data, validate="image")
        self.assertIsNotNone(meta.image, name)
        assert meta.image is not None
        self.assertEqual((meta.image.format, meta.image.width, meta.image.height), expected)
        self.assertEqual(meta.content_type, f"image/{expected[0]}")
        stat = self.client.stat("images", f"ok/{name}")
        self.assertEqual(stat.image, meta.image)
        self.assertEqual(self.client.get("images", f"ok/{name}"), data)

    def check_truncated(self, name: str, cut: str) -> None:
        data = image_bytes(self, name)
        # `last_byte`: the last byte of the structure (a TIFF may end in bytes nothing points at).
        short = data[:len(data) // 2] if cut == "half" else \
            data[:image_files.structural_length(data) - 1]
        with self.assertRaises(bc.NotAnImage) as ctx:
            meta = self.client.put("images", f"cut/{name}-{cut}", short, validate="image")
            self.fail(f"{name} cut to {len(short)} of {len(data)} bytes was accepted as "
                      f"{meta.image}")
        self.assertEqual((ctx.exception.status, ctx.exception.code), (415, "not_an_image"))
        self.assertFalse(self.client.exists("images", f"cut/{name}-{cut}"))


def _add_tests() -> None:
    for name in CATALOGUE:
        def accepted(self: ImageValidationTests, name: str = name) -> None:
            self.check_accepted(name)
        if name in KNOWN_ACCEPT_FAILURES:
            accepted = unittest.expectedFailure(accepted)
        setattr(ImageValidationTests, f"test_accepts_{name}", accepted)
        for cut in ("half", "last_byte"):
            def truncated(self: ImageValidationTests, name: str = name, cut: str = cut) -> None:
                self.check_truncated(name, cut)
            if cut in KNOWN_TRUNCATION_FAILURES.get(name, ()):
                truncated = unittest.expectedFailure(truncated)
            setattr(ImageValidationTests, f"test_refuses_{name}_cut_{cut}", truncated)


_add_tests()


class ImageFilesSelfTest(unittest.TestCase):
    """The hand-written variants are what they claim (Pillow reads them the intended way)."""

    def test_manual_files_decode(self) -> None:
        if image_files.PIL_ERROR:
            self.skipTest(image_files.PIL_ERROR)
        from PIL import Image
        import io
        with Image.open(io.BytesIO(image_files.png_interlaced((37, 23)))) as image:
            self.assertEqual((image.format, image.size, image.info.get("interlace")),
                             ("PNG", (37, 23), 1))
            image.load()
        for bits, top_down in ((4, False), (4, True), (24, True)):
            data = image_files.bmp_manual((13, 6), bits, top_down)
            with Image.open(io.BytesIO(data)) as image:
                self.assertEqual((image.format, image.size), ("BMP", (13, 6)))
                image.load()


if __name__ == "__main__":
    unittest.main()
