"""`make verify` (planb.build.verify) on a clone of the commit: every generator run again changes nothing, and a
committed hand edit of a generated file fails it, named with the fix.

The clone runs its own sources (PYTHONPATH=its src/, checked) with the checkout's venv and the pinned tools
(PLANB_TOOLS_DIR): the generators write into the clone, never into the checkout.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from planb import paths

pytestmark = [pytest.mark.tools, pytest.mark.slow]


def _in(clone: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(clone / "src"), "PLANB_TOOLS_DIR": str(paths.tools_dir().resolve())}
    return subprocess.run(list(args), cwd=clone, env=env, capture_output=True, text=True, timeout=600, check=False)


def test_verify_passes_on_the_commit_and_fails_on_a_committed_hand_edit(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    done = subprocess.run(["git", "clone", "--quiet", str(paths.REPO), str(clone)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    where = _in(clone, sys.executable, "-c", "from planb import paths; print(paths.REPO)")
    assert where.stdout.strip() == str(clone), where.stdout + where.stderr  # the clone's generators, not ours
    clean = _in(clone, sys.executable, "-m", "planb.build.verify")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "every generated file is what its source makes" in clean.stdout
    edited = clone / "charts" / "planb" / "values" / "tpu-v6e-4x4.yaml"
    edited.write_text(edited.read_text() + "# a hand edit\n")
    for args in (["add", str(edited)], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "hand edit"]):
        assert _in(clone, "git", *args).returncode == 0
    caught = _in(clone, sys.executable, "-m", "planb.build.verify")
    assert caught.returncode == 1, caught.stdout + caught.stderr
    assert "changed: charts/planb/values/tpu-v6e-4x4.yaml" in caught.stderr, caught.stderr
    assert "Fix: edit the sources" in caught.stderr


def test_every_generated_file_is_marked_generated_and_nothing_else() -> None:
    """.gitattributes' linguist-generated marks exactly what `make generate` writes (checked with git check-attr)."""
    from planb.build import chart_docs, chart_files, collection, golden
    from planb.catalog import values

    written = {
        *values.shipped_files(paths.REPO / "charts" / "planb" / "values"),
        *chart_files.expected(),
        *collection.files(),
        *(golden.GOLDEN_DIR / name for name in golden.expected()),
        chart_docs.README,
    }
    tracked = subprocess.run(["git", "ls-files"], cwd=paths.REPO, capture_output=True, text=True, check=True).stdout
    attrs = subprocess.run(
        ["git", "check-attr", "linguist-generated", "--stdin"],
        input=tracked, cwd=paths.REPO, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    marked = {paths.REPO / line.split(": ")[0] for line in attrs.splitlines() if line.endswith(": true")}
    assert marked == {path for path in written if path.relative_to(paths.REPO).as_posix() in tracked.split()}
