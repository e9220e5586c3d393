"""`planb status JOB --timeline FILE`: one job's life on a time axis, drawn with matplotlib from the JobStatus that
`-o json` serialises. The job of tests/support/shared/status_job.py moved twice (Spot -> DWS -> the reservation)."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from planb.kube_objects import parse_time
from planb.status import cli as status_cli
from planb.status import timeline, timeline_draw
from tests.support.shared import status_job

pytest.importorskip("matplotlib", reason="--timeline draws with matplotlib (pip install matplotlib)")


def _texts(svg: str) -> list[str]:
    """The SVG's text elements, unescaped (matplotlib writes them as text with svg.fonttype none)."""
    found = re.findall(r"<text\b[^>]*>(.*?)</text>", svg, re.S)
    return [t.replace("&gt;", ">").replace("&lt;", "<").replace("&amp;", "&").strip() for t in found]


def test_the_timeline_holds_each_rung_request_move_and_resume(monkeypatch: pytest.MonkeyPatch) -> None:
    found = timeline.build(status_job.job_m(monkeypatch))
    assert found.labels("rung") == [
        "waiting for admission",
        "on spot",
        "on dws",
        "on reserved (plan reservation)",
    ]
    assert found.labels("ProvisioningRequest") == ["rayjob-job-m-dws-dws-prov-1: Provisioned"]
    assert found.labels("moves") == ["move 1: spot -> dws, 1 step(s) lost", "move 2: dws -> reserved, 12 step(s) lost"]
    assert found.labels("resumes") == [
        "resume from step 120 (1 step(s) lost)",
        "resume from step 500 (12 step(s) lost)",
    ]
    assert found.labels("Workload") == ["submitted", "QuotaReserved", "Admitted"]
    resumes = {m.label: m.at for m in found.marks if m.lane == "resumes"}
    # The first resume's line is an "earlier:" repeat: it sits at the admission on DWS; the second at its own line.
    assert resumes["resume from step 120 (1 step(s) lost)"] == parse_time("2026-11-29T10:02:15.3Z")
    assert resumes["resume from step 500 (12 step(s) lost)"] == parse_time("2026-11-29T10:09:14.1Z")
    assert (found.start, found.end) == (parse_time("2026-11-29T10:00:00Z"), parse_time(status_job.NOW))


def test_planb_status_job_timeline_writes_an_svg_that_shows_both_moves(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status_job.job_m(monkeypatch)  # the clock
    path = tmp_path / "job-m.svg"
    args = argparse.Namespace(all_namespaces=False, namespace="default", job="job-m", output=None, timeline=str(path))
    assert status_cli._once(status_job.JobKube(status_job.objects()), args) == 0  # type: ignore[arg-type]
    assert capsys.readouterr().out.endswith(f"timeline of default/job-m: {path}\n")
    texts = _texts(path.read_text())
    assert "move 1: spot -> dws, 1 step(s) lost" in texts, texts
    assert "move 2: dws -> reserved, 12 step(s) lost" in texts, texts
    assert {"on spot", "on dws", "on reserved (plan reservation)", "rung", "moves", "resumes"} <= set(texts), texts
    assert "planb status default/job-m: where the job waited, ran and moved" in texts


def test_a_png_is_a_png(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "job-m.png"
    timeline_draw.draw(status_job.job_m(monkeypatch), path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_planb_status_loads_matplotlib_only_to_draw() -> None:
    code = (
        "import sys; from planb import cli; "
        "from planb.status import cli as status, serialize, timeline, timeline_draw; "
        "cli.build_parser(['planb.status.cli']).parse_args(['status', '-o', 'json']); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout == "[]\n", done.stdout
