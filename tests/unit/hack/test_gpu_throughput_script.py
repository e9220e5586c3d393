"""hack/gpu_throughput.sh makes its venv in a fresh private directory, never at a fixed /tmp path.

A stub python stands in for the real one: it records where the venv was made and what ran.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from planb import paths

SCRIPT = paths.REPO / "hack" / "gpu_throughput.sh"

STUB = r"""#!/usr/bin/env bash
# A python that makes venvs (copies of itself) and records what ran.
case "$1" in
  -c) exit 0 ;;
  --version) echo "Python 3.11.0"; exit 0 ;;
  -m)
    if [ "$2" = venv ]; then
      dir=${@: -1}
      mkdir -p "$dir/bin" && cp "$0" "$dir/bin/python" && touch "$dir/pyvenv.cfg"
      echo "venv $dir" >> "$STUB_LOG"
    fi
    exit 0 ;;
  *) echo "ran $0" >> "$STUB_LOG"; exit 0 ;;
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
    done = subprocess.run(
        ["bash", str(SCRIPT), "--quick"],
        env={
            **os.environ,
            "PATH": f"{stub.parent}:{os.environ['PATH']}",
            "PYTHON": str(stub),
            "STUB_LOG": str(log),
            "TMPDIR": str(tmp),
            **env,
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done, log.read_text().splitlines() if log.exists() else []


def test_the_default_venv_is_a_fresh_private_directory_removed_afterwards(tmp_path: Path) -> None:
    planted = tmp_path / "tmp" / "planb-gpu-venv"
    planted.mkdir(parents=True)
    (planted / "someone-elses").write_text("x\n")
    done, log = _run(tmp_path)
    assert done.returncode == 0, done.stderr
    venv = Path(log[0].removeprefix("venv "))
    assert venv.parent == tmp_path / "tmp" and venv.name.startswith("planb-gpu-venv."), log
    assert log[1] == f"ran {venv}/bin/python"
    assert not venv.exists()  # removed on exit
    assert (planted / "someone-elses").exists()


def test_a_named_directory_that_is_not_a_venv_is_refused(tmp_path: Path) -> None:
    mine = tmp_path / "important"
    mine.mkdir()
    (mine / "thesis.tex").write_text("x\n")
    done, log = _run(tmp_path, PLANB_GPU_VENV=str(mine))
    assert done.returncode == 2
    assert "is not a venv; refusing to clear it" in done.stderr
    assert (mine / "thesis.tex").exists()
    assert log == []


def test_a_named_venv_is_made_there_and_kept(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    done, log = _run(tmp_path, PLANB_GPU_VENV=str(venv))
    assert done.returncode == 0, done.stderr
    assert log == [f"venv {venv}", f"ran {venv}/bin/python"]
    assert (venv / "pyvenv.cfg").exists()
