"""hack/bench_concurrent.py's pure parts: train.py's resume lines, and the figures made from a run's timeline.

The stack-driving half needs the local stack and the concurrent ladder; these parts need neither.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from types import ModuleType

import pytest

from planb import paths

SCRIPT = paths.REPO / "hack" / "bench_concurrent.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("planb_hack_bench_concurrent", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up by name
    spec.loader.exec_module(module)
    return module


def trace(bench: ModuleType, flavors: list[tuple[float, str]]) -> list[object]:
    return [bench.Sample(t, flavor) for t, flavor in flavors]


def test_resume_lines_are_read_from_train_py_output(bench: ModuleType) -> None:
    log = (
        "Resumed from checkpoint step 40000 in /tmp/c\n"
        "resumed from checkpoint step 40000; 1234 step(s) lost\n"
        "Epoch 40000: Loss 0.0001\n"
        "resumed from checkpoint step 80000; 0 step(s) lost\n"
        "not resumed from checkpoint step 1; 2 step(s) lost here\n"  # not a line of train.py's
    )
    assert bench.parse_resumed(log) == [(40000, 1234), (80000, 0)]
    assert bench.parse_resumed("Epoch 0: Loss 3.1\nTraining Complete!\n") == []


def test_the_concurrent_story_gives_its_figures(bench: ModuleType) -> None:
    """Spot at once, DWS at 90 s, the reservation at 240 s, done at 400 s; the first step at 4 s."""
    samples = trace(bench, [(0, ""), (1, "spot"), (50, "spot"), (90, ""), (91, "dws"), (240, "dws"), (241, "reserved")])
    tl = bench.Timeline(samples=samples, first_step=4.0, finished=400.0, resumed=[(60000, 300), (160000, 12)])
    f = bench.figures(tl)
    assert f.time_to_first_step == 4.0
    assert f.migrations == [(91, "spot", "dws"), (241, "dws", "reserved")]
    assert f.steps_lost == [300, 12]
    assert f.preferred_share == pytest.approx((400 - 241) / (400 - 4))


def test_the_sequential_story_never_reaches_the_preferred_rung(bench: ModuleType) -> None:
    samples = trace(bench, [(0, ""), (2, "dws"), (300, "dws")])
    f = bench.figures(bench.Timeline(samples=samples, first_step=95.0, finished=500.0))
    assert (f.time_to_first_step, f.preferred_share, f.migrations, f.steps_lost) == (95.0, 0.0, [], [])


def test_segments_merge_samples_of_one_flavor_and_end_at_the_finish(bench: ModuleType) -> None:
    samples = trace(bench, [(0, "spot"), (1, "spot"), (2, ""), (3, "reserved"), (4, "reserved")])
    assert bench.segments(samples, 10.0) == [("spot", 0, 2), ("reserved", 3, 10.0)]


def test_a_run_without_a_first_step_or_an_end_has_no_share(bench: ModuleType) -> None:
    samples = trace(bench, [(0, ""), (5, "dws")])
    assert bench.figures(bench.Timeline(samples=samples)).preferred_share is None
    assert bench.figures(bench.Timeline(samples=samples, first_step=6.0)).time_to_first_step == 6.0


def test_the_table_puts_the_modes_side_by_side(bench: ModuleType) -> None:
    seq = bench.Figures(time_to_first_step=95.0, preferred_share=0.0, migrations=[], steps_lost=[])
    conc = bench.Figures(
        time_to_first_step=4.2,
        preferred_share=0.4015,
        migrations=[(91.0, "spot", "dws"), (241.0, "dws", "reserved")],
        steps_lost=[300, 12],
    )
    lines = bench.table({"sequential": seq, "concurrent": conc}, 20000).splitlines()
    assert lines[0] == "| figure | sequential | concurrent |"
    assert lines[2] == "| time to first training step | 95 s | 4 s |"
    assert lines[3] == "| share of the run on reserved | 0 % | 40 % |"
    assert lines[4] == "| migrations | none | spot -> dws at 91 s, dws -> reserved at 241 s |"
    assert lines[5] == "| steps lost per migration | no migration | 300, 12 (max 300; checkpoint interval 20000) |"


def test_help_works_without_the_stack() -> None:
    proc = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "--reservation-frees" in proc.stdout and "--dws-delivers" in proc.stdout
    bad = subprocess.run([sys.executable, str(SCRIPT), "--modes", "greedy"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--modes" in bad.stderr
