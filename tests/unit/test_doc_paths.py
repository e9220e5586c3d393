"""Every path of this repository that a docstring, a comment or a doc cites exists, so a reader who follows one
lands somewhere (tests moved between tiers once left about twenty such pointers dangling)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from planb import paths

#: A path as the docs write one: a top-level folder of this repository, then a file or folder name.
CITED = re.compile(
    r"(?<![\w./@-])((?:tests|src|docs|hack|charts|collections|training|inventories|playbooks|molecule)/[\w./-]*+)"
    r"(?![*<{$])"  # possessive: a glob or a template (chart-*.yaml, <name>, {x}) is not a path to check
)
#: Where the collection's own docs and planb's docs cite a collection path (playbooks/vars/kueue.yml, tests/sanity).
COLLECTION = paths.REPO / "collections" / "ansible_collections" / "planb" / "gke"
#: Paths that are not this repository's, each with whose they are.
ELSEWHERE = {
    "tests/output": "ansible-test's own output folder inside the collection, made when it runs",
    "src/MaxText/": "AI-Hypercomputer/maxtext, cited for its MFU formula",
    "src/maxtext/": "AI-Hypercomputer/maxtext's newer layout, cited in docs/your-code.md for its trainer's stop",
    "src/google/protobuf/": "protocolbuffers/protobuf, cited for JSON field-name rules",
    "src/kubernetes": "the kubernetes module's own tree, which hack/build-tools.sh names",
}
SUFFIXES = (".py", ".md", ".yml", ".yaml", ".sh", ".gotmpl", ".tpl", ".txt", ".json")


def _files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files"], cwd=paths.REPO, capture_output=True, text=True, check=True)
    out = []
    for name in listed.stdout.split():
        path = paths.REPO / name
        # benchmarks-history is a record of its day: it cites paths as they were then. This file names dangling
        # paths on purpose, as its own check's examples.
        skip = name in ("docs/benchmarks-history.md", "tests/unit/test_doc_paths.py")
        if name.endswith(SUFFIXES) and not skip and not path.is_symlink():
            out.append(path)
    return out


def _exists(cited: str) -> bool:
    if any(cited.startswith(prefix) for prefix in ELSEWHERE):
        return True
    return (paths.REPO / cited).exists() or (COLLECTION / cited).exists()


def test_every_cited_path_exists() -> None:
    missing: dict[str, set[str]] = {}
    for path in _files():
        text = path.read_text(errors="replace")
        if path.suffix == ".md":
            # A Markdown escape stands for the character itself (antsibull-changelog's CHANGELOG.md writes docs/x\.md).
            text = re.sub(r"\\([\\`*_{}\[\]()#+.!-])", r"\1", text)
        for match in CITED.finditer(text):
            cited = match.group(1).rstrip(".-/")
            if not _exists(cited):
                missing.setdefault(cited, set()).add(str(path.relative_to(paths.REPO)))
    lines = [f"{cited} (cited in {', '.join(sorted(where))})" for cited, where in sorted(missing.items())]
    assert not lines, "paths cited that do not exist; fix each to the file's present place:\n" + "\n".join(lines)


def test_the_check_finds_a_dangling_path(tmp_path: Path) -> None:
    """The pattern catches a moved test's old path and leaves a glob and a URL alone."""
    text = "see tests/e2e/test_ladder.py, tests/golden/chart-*.yaml and https://github.com/x/y/tests/z.py"
    assert [m.group(1).rstrip(".-/") for m in CITED.finditer(text)] == ["tests/e2e/test_ladder.py"]
    assert not _exists("tests/e2e/test_ladder.py") and _exists("tests/e2e/topologies/test_ladder.py")
