"""Runs the Python examples of Examples/PythonClient/README.md against a daemon on the default
socket path (with XDG_RUNTIME_DIR pointing at a temporary folder)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import tempfile
import unittest

from blobd_harness import REPO, Daemon

README = os.path.join(REPO, "Examples", "PythonClient", "README.md")


class ReadmeTests(unittest.TestCase):

    def test_the_readme_examples_run(self) -> None:
        with open(README, encoding="utf-8") as f:
            blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
        self.assertGreaterEqual(len(blocks), 4)
        runtime = tempfile.mkdtemp(prefix="blobd-py-run-")
        daemon = Daemon(socket_path=os.path.join(runtime, "blobstore", "blobd.sock"))
        old = os.environ.get("XDG_RUNTIME_DIR")
        os.environ["XDG_RUNTIME_DIR"] = runtime
        namespace: dict = {}  # type: ignore[type-arg]
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                for block in blocks:
                    exec(compile(block, README, "exec"), namespace)  # noqa: S102 (our README)
        finally:
            if "client" in namespace:
                namespace["client"].close()
            if old is None:
                del os.environ["XDG_RUNTIME_DIR"]
            else:
                os.environ["XDG_RUNTIME_DIR"] = old
            daemon.stop()
            shutil.rmtree(runtime, ignore_errors=True)
        text = out.getvalue()
        self.assertIn("ImageInfo(format='png', width=1, height=1)", text)
        self.assertIn("415 not_an_image", text)
        self.assertIn("put photos/tom.png", text)
        self.assertIn("exists, current version", text)


if __name__ == "__main__":
    unittest.main()
