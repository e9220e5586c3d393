"""hack/bench_concurrent.py's pure parts (hack/bench_concurrent_figures.py): train.py's resume and training-time
lines, and the figures made from a run's timeline, goodput among them; and the script's command line.

The stack-driving half needs the local stack and the concurrent ladder; these parts need neither.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from planb import paths

SCRIPT = paths.REPO / "hack" / "bench_concurrent.py"
FIGURES = paths.REPO / "hack" / "bench_concurrent_figures.py"


def load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up by name
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load("planb_hack_bench_concurrent_figures", FIGURES)


@pytest.fixture(scope="module")
def script() -> ModuleType:
    return load("planb_hack_bench_concurrent", SCRIPT)


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


#: train.py's lines in the Ray head stand-in's logs of a job that moved twice, each run's log after the one before
#: (planb_train/progress.py's format; the newest run repeats the earlier resumes).
LOGS = """Epoch 0: Loss 3.1000
training time up to step 1: 0.9 s kept
training time up to step 150000: 80.2 s kept
Stop notice (SIGTERM) after step 170321: checkpoint step 170321 saved; stopping
Resumed from checkpoint step 170321 in /tmp/c
resumed from checkpoint step 170321; 0 step(s) lost
training time up to step 170321: 91.0 s kept; the 0 lost step(s) took 0.0 s
training time up to step 300000: 150.5 s kept
Stop notice (SIGTERM) after step 301000: checkpoint step 301000 saved; stopping
Resumed from checkpoint step 301000 in /tmp/c
earlier: resumed from checkpoint step 170321; 0 step(s) lost
earlier: training time up to step 170321: 91.0 s kept; the 0 lost step(s) took 0.0 s
resumed from checkpoint step 301000; 0 step(s) lost
training time up to step 301000: 151.0 s kept; the 0 lost step(s) took 0.0 s
training time up to step 1000000: 571.3 s kept
Training Complete!
"""


def test_the_training_time_kept_is_train_pys_last_figure(bench: ModuleType) -> None:
    assert bench.parse_kept(LOGS) == 571.3
    assert bench.parse_resumed(LOGS) == [(170321, 0), (301000, 0)]  # the "earlier:" repeats are not counted twice
    assert bench.parse_kept("Epoch 0: Loss 3.1\n") is None
    assert bench.parse_kept("training time up to step 40: unknown kept\n") is None


def test_with_save_on_notice_no_step_is_lost_and_goodput_after_the_first_admission_is_95_percent(
    bench: ModuleType,
) -> None:
    """The concurrent ladder, train.py saving on notice: admitted on Spot at 1 s, DWS at 91 s, the reservation at
    154 s, done at 600 s; train.py kept 571.3 s of training (LOGS), the rest is starts, moves and the end."""
    samples = trace(bench, [(0, ""), (1, "spot"), (90, ""), (91, "dws"), (153, ""), (154, "reserved")])
    resumed = bench.parse_resumed(LOGS)
    tl = bench.Timeline(samples=samples, first_step=5.0, finished=600.0, resumed=resumed, kept=bench.parse_kept(LOGS))
    f = bench.figures(tl)
    assert f.steps_lost == [0, 0]
    assert (f.kept, f.wall, f.wall_after_admission) == (571.3, 600.0, 599.0)
    assert f.goodput == pytest.approx(571.3 / 600)
    assert f.goodput_after_admission == pytest.approx(571.3 / 599) and f.goodput_after_admission >= 0.95


def test_without_save_on_notice_the_lost_steps_cost_goodput(bench: ModuleType) -> None:
    """The same trace, train.py killed by the moves (the control column): the steps past each newest checkpoint
    are done again and their time is not kept; the first admission waited for the blocker's quota (3 s)."""
    samples = trace(bench, [(0, ""), (3, "spot"), (91, "dws"), (154, "reserved")])
    tl = bench.Timeline(samples=samples, first_step=6.0, finished=640.0, resumed=[(160000, 7052), (300000, 16170)],
                        kept=560.0)  # fmt: skip
    f = bench.figures(tl)
    assert f.steps_lost == [7052, 16170]
    assert f.goodput == pytest.approx(560 / 640)
    assert f.goodput_after_admission == pytest.approx(560 / 637) and f.goodput_after_admission < 0.95


def test_goodput_needs_its_terms(bench: ModuleType) -> None:
    never = bench.figures(bench.Timeline(samples=trace(bench, [(0, ""), (5, "")]), finished=9.0, kept=0.0))
    assert (never.goodput, never.goodput_after_admission) == (0.0, None)  # never admitted: no admission to count from
    unknown = bench.figures(bench.Timeline(samples=trace(bench, [(0, "spot")]), finished=9.0))
    assert (unknown.goodput, unknown.goodput_after_admission) == (None, None)  # train.py wrote no figure
    running = bench.figures(bench.Timeline(samples=trace(bench, [(0, "spot")]), kept=3.0))
    assert (running.goodput, running.goodput_after_admission) == (None, None)  # not finished


def test_the_table_puts_the_modes_side_by_side(bench: ModuleType) -> None:
    seq = bench.Figures(time_to_first_step=95.0, preferred_share=0.0, migrations=[], steps_lost=[],
                        kept=500.0, wall=600.0, wall_after_admission=598.0)  # fmt: skip
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
    assert lines[6] == "| goodput since submission (training kept / wall) | 83.3 % (500 s / 600 s) | - |"
    assert lines[7] == "| goodput after the first admission (training kept / wall) | 83.6 % (500 s / 598 s) | - |"


def test_three_columns_on_two_ladder_modes(script: ModuleType) -> None:
    """sequential and concurrent run train.py as before save on notice; concurrent+save with it; the two
    concurrent columns share one converge."""
    assert script.MODES == {
        "sequential": ("sequential", False),
        "concurrent": ("concurrent", False),
        "concurrent+save": ("concurrent", True),
    }
    assert script.parse_args([]).modes == ["sequential", "concurrent", "concurrent+save"]
    assert script.parse_args(["--modes", "concurrent+save"]).modes == ["concurrent+save"]


def test_help_works_without_the_stack() -> None:
    proc = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "--reservation-frees" in proc.stdout and "--dws-delivers" in proc.stdout
    bad = subprocess.run([sys.executable, str(SCRIPT), "--modes", "greedy"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--modes" in bad.stderr
