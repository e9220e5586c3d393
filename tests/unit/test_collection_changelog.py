"""planb.gke's changelog is antsibull-changelog's: fragments that lint clean, and a CHANGELOG.md generated from them.

A change to the collection adds a fragment under changelogs/fragments/ (antsibull-changelog's format: one YAML file,
a list of entries per section of changelogs/config.yaml); ``antsibull-changelog release`` moves the fragments into
changelogs/changelog.yaml and writes CHANGELOG.md, which is never edited by hand. Both checks run the real tool
(a development requirement; ansible-test's ``changelog`` sanity test runs its own copy).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from planb.build.collection import COLLECTION_DIR

TOOL = Path(sys.executable).parent / "antsibull-changelog"
INSTALL = "install it with `.venv/bin/pip install antsibull-changelog` (a development requirement of planb)"


def run_tool(*args: str) -> subprocess.CompletedProcess[str]:
    if not TOOL.is_file():
        pytest.fail(f"{TOOL} is missing: {INSTALL}")
    return subprocess.run(
        [str(TOOL), *args], cwd=COLLECTION_DIR, capture_output=True, text=True, timeout=120, check=False
    )


def test_fragments_and_changelog_data_lint_clean() -> None:
    done = run_tool("lint")
    assert done.returncode == 0 and not done.stdout.strip(), (
        f"antsibull-changelog lint (in {COLLECTION_DIR}) found problems:\n{done.stdout}{done.stderr}"
    )


def test_changelog_md_is_generated_from_the_changelog_data(tmp_path: Path) -> None:
    generated = tmp_path / "CHANGELOG.md"
    done = run_tool("generate", "--output", str(generated), "--output-format", "md")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (COLLECTION_DIR / "CHANGELOG.md").read_text() == generated.read_text(), (
        "CHANGELOG.md differs from what changelogs/changelog.yaml generates; it is not edited by hand: add a fragment "
        "under changelogs/fragments/ instead, and run `antsibull-changelog generate` in the collection"
    )
