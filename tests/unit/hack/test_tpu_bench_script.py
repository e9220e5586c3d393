"""hack/tpu_bench.sh imports its packages from a directory it made itself, never from a fixed /tmp path.

Whatever lies in that directory goes on PYTHONPATH and is imported by the benchmark: a directory another user could
create or write first would run their code. A stub python stands in for the real one: it has no flax, "installs" by
making the target's ``orbax`` folder, and records the PYTHONPATH the benchmark ran with.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from planb import paths

SCRIPT = paths.REPO / "hack" / "tpu_bench.sh"

STUB = r"""#!/usr/bin/env bash
# A python without flax whose pip installs into --target, and which records what ran.
case "$1" in
  -c) case "$2" in *flax*) exit 1 ;; *) exit 0 ;; esac ;;
  -m)
    target=
    while [ $# -gt 0 ]; do [ "$1" = --target ] && target=$2; shift; done
    mkdir -p "$target/orbax" && echo "pip $target" >> "$STUB_LOG"
    exit 0 ;;
  *) echo "ran PYTHONPATH=$PYTHONPATH" >> "$STUB_LOG"; exit 0 ;;
esac
"""


def _run(tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    stub = tmp_path / "stub" / "python3"
    stub.parent.mkdir(exist_ok=True)
    stub.write_text(STUB)
    stub.chmod(stub.stat().st_mode | stat.S_IXUSR)
    log = tmp_path / "stub.log"
    log.unlink(missing_ok=True)
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PLANB_TPU_SITE")}
    done = subprocess.run(
        ["bash", str(SCRIPT), "--smoke"],
        env={**base, "PATH": f"{stub.parent}:{os.environ['PATH']}", "STUB_LOG": str(log), "TMPDIR": str(tmp), **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done, log.read_text().splitlines() if log.exists() else []


def test_the_default_site_is_a_fresh_private_directory_removed_afterwards(tmp_path: Path) -> None:
    """A site planted where a fixed path would be is never imported from."""
    planted = tmp_path / "tmp" / "planb-tpu-site"
    (planted / "orbax").mkdir(parents=True)
    (planted / "jax.py").write_text("raise SystemExit('planted')\n")
    done, log = _run(tmp_path)
    assert done.returncode == 0, done.stderr
    site = Path(log[0].removeprefix("pip "))
    assert site.parent == tmp_path / "tmp" and site.name.startswith("planb-tpu-site."), log
    assert log[1] == f"ran PYTHONPATH={site}", log
    assert not site.exists()  # removed on exit
    assert (planted / "jax.py").exists()


def test_a_named_site_others_can_write_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared-site"
    (shared / "orbax").mkdir(parents=True)
    shared.chmod(0o777)
    done, log = _run(tmp_path, PLANB_TPU_SITE=str(shared))
    assert done.returncode == 2
    assert "refusing to import from it" in done.stderr
    assert log == []


def test_a_named_private_site_is_used_and_kept(tmp_path: Path) -> None:
    site = tmp_path / "site"
    done, log = _run(tmp_path, PLANB_TPU_SITE=str(site))
    assert done.returncode == 0, done.stderr
    assert log == [f"pip {site}", f"ran PYTHONPATH={site}"]
    assert stat.S_IMODE(site.stat().st_mode) == 0o700 and (site / "orbax").is_dir()
