"""The chart as a published artifact: charts/planb packaged into ``planb-<version>.tgz`` (``helm package``).

`make chart` runs ``make values`` (so ``files/`` and ``values/`` are current) and then
``python -m planb.build.chart_package``, which writes the package into ``dist/``. That file is what ``helm push``
sends to an OCI registry (Artifact Registry: charts/planb/README.md, "A packaged chart, from an OCI registry") and what
``helm install job-N oci://…/planb --version X`` installs; ``tests/integration/chart/test_packaged_chart.py`` installs
it onto a real API server. The package leaves out what ``charts/planb/.helmignore`` names (README.md.gotmpl).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import yaml

from planb import paths

CHART_DIR = paths.REPO / "charts" / "planb"


class ChartPackageError(Exception):
    """helm could not package the chart (its output is the message)."""


def version(chart_dir: Path = CHART_DIR) -> str:
    """The chart's version, from its Chart.yaml."""
    return str(yaml.safe_load((chart_dir / "Chart.yaml").read_text())["version"])


def package(output_dir: Path, chart_dir: Path = CHART_DIR) -> Path:
    """Package `chart_dir` into `output_dir` with the pinned helm; the .tgz's path."""
    helm = paths.tool("helm")
    if not helm.is_file():
        raise ChartPackageError(f"{helm} is missing: run `make tools`")
    output_dir.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [str(helm), "package", str(chart_dir), "--destination", str(output_dir)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    tgz = output_dir / f"{chart_dir.name}-{version(chart_dir)}.tgz"
    if done.returncode != 0 or not tgz.is_file():
        raise ChartPackageError(
            f"helm package {chart_dir} failed (exit {done.returncode}):\n{done.stderr}{done.stdout}"
        )
    return tgz


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m planb.build.chart_package", description=__doc__.splitlines()[0])
    parser.add_argument("--output-path", type=Path, default=paths.REPO / "dist", help="folder for the package (dist/)")
    args = parser.parse_args(argv)
    try:
        tgz = package(args.output_path)
    except ChartPackageError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"[planb chart] {tgz}")
    print(f"  push:    helm push {tgz} oci://REGION-docker.pkg.dev/PROJECT/REPO")
    print(
        f"  install: helm install job-N oci://REGION-docker.pkg.dev/PROJECT/REPO/planb --version {version()} -f VALUES"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
