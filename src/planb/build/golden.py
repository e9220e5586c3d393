"""Golden files of generated output: `planb profiles`, `planb values`, `helm template charts/planb`.

``python -m planb.build.golden`` (``make golden``) rewrites them; tests compare the live output
with them, so a change to the catalog or the chart shows up as a reviewed diff.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

from planb import paths
from planb.build import chart_files
from planb.catalog import values

GOLDEN_DIR = paths.REPO / "tests" / "golden"
CHART_DIR = paths.REPO / "charts" / "planb"

#: CLI invocations whose stdout is kept: golden file name -> argv after `planb`.
CLI_CASES: dict[str, tuple[str, ...]] = {
    "catalog-profiles.txt": ("profiles",),
    "catalog-values-tpu-v6e-4x4.yaml": ("values", "tpu-v6e-4x4"),
    "catalog-values-tpu-v6e-16-slices-2-on-demand-3.yaml": (
        "values",
        "tpu-v6e-16",
        "--slices",
        "2",
        "--on-demand-slices",
        "3",
    ),
    "catalog-values-gpu-a3-h100-8.yaml": ("values", "gpu-a3-h100-8"),
}

#: Release name used for every golden `helm template` (job mode names derive from it).
RELEASE = "job-1"


def run_cli(*argv: str) -> str:
    """stdout of the real `planb` command line (same interpreter, fresh process)."""
    done = subprocess.run([sys.executable, "-m", "planb.cli", *argv], capture_output=True, text=True, check=True)
    return done.stdout


def helm_template(*args: str, release: str = RELEASE) -> subprocess.CompletedProcess[str]:
    """`helm template RELEASE charts/planb ARGS` with the pinned helm; not checked."""
    return subprocess.run(
        [str(paths.tool("helm")), "template", release, str(CHART_DIR), *args],
        capture_output=True,
        text=True,
        check=False,
    )


def chart_cases() -> dict[str, tuple[str, ...]]:
    """Golden name -> helm template args: both modes for every shipped profile."""
    cases: dict[str, tuple[str, ...]] = {}
    for profile in values.SHIPPED:
        vfile = str(CHART_DIR / "values" / f"{profile}.yaml")
        cases[f"chart-job-{profile}.yaml"] = ("-f", vfile)
        cases[f"chart-queues-{profile}.yaml"] = ("-f", vfile, "--set", "mode=queues")
    cases["chart-job-defaults.yaml"] = ()
    cases["chart-queues-defaults.yaml"] = ("--set", "mode=queues")
    return cases


#: The ConfigMap lines that carry training/train.py and its package's modules (one JSON string on one line each).
_SCRIPT_PATHS = {chart_files.train_file_key(name): name for name in chart_files.TRAIN_FILES}
_SCRIPT_NAMES = "|".join(re.escape(key) for key in _SCRIPT_PATHS)
_SCRIPT_LINE = re.compile(rf'^(  ({_SCRIPT_NAMES}): )".*"$', re.MULTILINE)
#: The test hooks' ConfigMap line that carries the mode's check (charts/planb/files/tests/*.py), likewise.
_CHECK_NAMES = "|".join(re.escape(path.name) for path in sorted((chart_files.CHART_FILES / "tests").glob("*.py")))
_CHECK_LINE = re.compile(rf'^(  ({_CHECK_NAMES}): )".*"$', re.MULTILINE)


def render_chart(args: tuple[str, ...]) -> str:
    """`helm template` output with the training scripts' and the test checks' bodies replaced by markers.

    The scripts belong to training/ and change on their own; a chart test proves the ConfigMap holds
    each byte for byte, so the chart's goldens need not change with them (nor with files/tests/, whose
    checks tests/unit/chart/test_chart_helm_test.py runs and compares with the ConfigMap).
    """
    done = helm_template(*args)
    if done.returncode != 0:
        raise RuntimeError(f"helm template {' '.join(args)} failed: {done.stderr}")
    out = _SCRIPT_LINE.sub(lambda m: f'{m[1]}"<training/{_SCRIPT_PATHS[m[2]]}, verbatim>"', done.stdout)
    return _CHECK_LINE.sub(r'\1"<charts/planb/files/tests/\2, verbatim>"', out)


def expected() -> dict[str, Callable[[], str]]:
    """Golden file name -> producer of its current content."""
    out: dict[str, Callable[[], str]] = {}
    for name, argv in CLI_CASES.items():
        out[name] = partial(run_cli, *argv)
    for name, args in chart_cases().items():
        out[name] = partial(render_chart, args)
    return out


def write() -> list[Path]:
    """(Re)write every golden file; their paths."""
    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    written = []
    for name, produce in expected().items():
        (GOLDEN_DIR / name).write_text(produce())
        written.append(GOLDEN_DIR / name)
    return written


def main() -> int:
    for path in write():
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
