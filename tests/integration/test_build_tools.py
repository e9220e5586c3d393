"""hack/build-tools.sh tells the user when the Go module proxy cannot be reached, before building anything."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from planb import paths

# It runs hack/build-tools.sh, which needs Go.
pytestmark = pytest.mark.tools


def test_unreachable_module_proxy_is_named_with_the_fix(tmp_path: Path) -> None:
    env = {
        **os.environ,
        # Nothing listens on the discard port; an empty module cache forces a download.
        "GOPROXY": "http://127.0.0.1:9",
        "GOMODCACHE": str(tmp_path / "modcache"),
        "GOFLAGS": "-modcacherw",
        "PLANB_CACHE_DIR": str(tmp_path / "cache"),
    }
    done = subprocess.run(
        [str(paths.REPO / "hack" / "build-tools.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 1
    assert "from the Go module proxy (http://127.0.0.1:9)" in done.stdout
    assert "Fix: make the proxy reachable (or set GOPROXY)" in done.stdout
    # Nothing was built or linked.
    assert not list((tmp_path / "cache").glob("tools/*/bin/*"))
