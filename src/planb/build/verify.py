"""``make verify``: every generated file written again (planb.build.generate), then nothing may differ from the
commit and no new file may appear, as Kubernetes projects verify theirs (Kueue's Makefile has a verify target that
regenerates, then runs `git diff --exit-code`). A hand edit of a generated file, or a source changed without its
outputs, fails here, naming each file and the fix. Run it on a clean working tree: an uncommitted change is
reported as well.
"""

from __future__ import annotations

import subprocess
import sys

from planb import paths
from planb.build import generate


def _git(*args: str) -> list[str]:
    done = subprocess.run(["git", *args], cwd=paths.REPO, capture_output=True, text=True, check=True)
    return [line for line in done.stdout.splitlines() if line]


def differences() -> list[str]:
    """One line per file the working tree holds apart from the commit: changed, deleted or untracked."""
    changed = [f"changed: {name}" for name in _git("diff", "--name-only", "HEAD")]
    untracked = [f"untracked: {name}" for name in _git("ls-files", "--others", "--exclude-standard")]
    return changed + untracked


def main() -> int:
    generate.run()
    found = differences()
    if not found:
        print("[planb verify] every generated file is what its source makes")
        return 0
    print("[planb verify] the working tree differs from the commit after regenerating:", file=sys.stderr)
    for line in found:
        print(f"  {line}", file=sys.stderr)
    print(
        "[planb verify] Fix: edit the sources (the catalog, training/, the chart's values.yaml, ...), never a generated"
        " file; run `make generate` and commit what it writes",
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
