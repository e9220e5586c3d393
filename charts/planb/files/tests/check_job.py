"""`helm test` of a job release: the job's ConfigMap is mounted and its Python files compile.

Run in the test pod as ``python check_job.py DIRECTORY ENTRY``: DIRECTORY is where the job's script ConfigMap
is mounted, ENTRY the entry script in it (train.py, or smoke.py for the smoke job). Every ``*.py`` in DIRECTORY
is parsed, not run, so a file that would not import fails the test before the RayJob's head finds out. It
prints one line per file and exits 1 with ``planb helm test: FAIL: ...`` naming what is wrong. The standard
library only: the test image needs nothing installed.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def check(directory: Path, entry: str) -> list[str]:
    """What is wrong with the mounted scripts ([] when nothing is); prints each file that compiles."""
    if not (directory / entry).is_file():
        return [f"{entry} is not in {directory} (the job's script ConfigMap is not mounted, or lacks it)"]
    problems = []
    for path in sorted(directory.glob("*.py")):
        try:
            ast.parse(path.read_text(), filename=path.name)
        except (SyntaxError, ValueError, UnicodeDecodeError) as exc:
            problems.append(f"{path.name} does not compile: {exc}")
        else:
            print(f"{path.name} OK")
    return problems


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: check_job.py DIRECTORY ENTRY", file=sys.stderr)
        return 2
    problems = check(Path(argv[0]), argv[1])
    for problem in problems:
        print(f"planb helm test: FAIL: {problem}", flush=True)
    if not problems:
        print("planb helm test: PASS")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
