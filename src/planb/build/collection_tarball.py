"""The planb.gke collection's tarball as an ops controller installs it: modules, roles, playbooks and the queues chart.

`make collection` (``python -m planb.build.collection_tarball``) copies the collection (without its test output and byte
code) into a build folder, adds this checkout's queues chart (charts/planb) as ``files/charts/planb`` (the role
planb.gke.kueue_queues installs that copy when it exists, and the checkout's chart otherwise), and runs
``ansible-galaxy collection build`` on the copy. The checkout keeps one chart; the tarball carries it.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from planb.build.collection import COLLECTION_DIR
from planb.paths import REPO

CHART_DIR = REPO / "charts" / "planb"
#: Where the tarball's chart lies inside the collection (the kueue_queues role's default chart path).
BUNDLED_CHART = Path("files") / "charts" / "planb"
_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "output", "*.tar.gz")


class CollectionBuildError(Exception):
    """ansible-galaxy refused to build the collection (its output is the message)."""


def build(output_dir: Path) -> Path:
    """Build planb-gke-<version>.tar.gz into `output_dir` and return its path."""
    output_dir.mkdir(parents=True, exist_ok=True)
    galaxy = Path(sys.executable).parent / "ansible-galaxy"
    with tempfile.TemporaryDirectory(prefix="planb-collection-") as scratch:
        tree = Path(scratch) / "ansible_collections" / "planb" / "gke"
        shutil.copytree(COLLECTION_DIR, tree, ignore=_SKIP)
        shutil.copytree(CHART_DIR, tree / BUNDLED_CHART, ignore=shutil.ignore_patterns("*.tgz"))
        done = subprocess.run(
            [str(galaxy), "collection", "build", str(tree), "--output-path", str(output_dir), "--force"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise CollectionBuildError(f"ansible-galaxy collection build failed:\n{done.stdout}{done.stderr}")
    built = sorted(output_dir.glob("planb-gke-*.tar.gz"), key=lambda path: path.stat().st_mtime)
    if not built:
        raise CollectionBuildError(f"ansible-galaxy collection build wrote no tarball into {output_dir}")
    return built[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m planb.build.collection_tarball", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--output-path", type=Path, default=REPO / "dist", help="folder for the tarball (dist/)")
    args = parser.parse_args(argv)
    try:
        tarball = build(args.output_path)
    except CollectionBuildError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"[planb collection] {tarball}")
    print(f"  install: ansible-galaxy collection install {tarball} -p <collections path>")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
