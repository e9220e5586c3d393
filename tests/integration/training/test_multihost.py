"""train.py across processes on CPU: ``jax.distributed`` on loopback, two CPU devices a process, gloo collectives.

Three runs, the only processes this file starts. First, four processes (eight devices) train the transformer, save
every 5 steps (each process writing its own shards) and are told to stop through process 2's notice file alone;
every process saves the same step. Then two processes (four devices) resume that checkpoint on a new mesh and are
stopped by SIGTERM to process 0 alone. Beside them, one process over eight devices trains the same steps without a
stop: the reference the other two runs' losses must follow, step for step.

The runs are kept cheap: a tiny model, XLA's CPU backend at optimisation level 0 (each process compiles in a third
of the time), and JAX's persistent cache written by every process (tests/support/integration/cache_every_process.py:
JAX writes it from process 0 alone, and the CPU cache key holds the process's own topology, so every other process
compiled its steps again in every run; on a warm machine the module took 24 CPU-s with it and 39 without, 2026-12-07).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from planb_train.progress import RESUMED_LINE as RESUMED
from planb_train.runners.outcome import EXIT_STOPPED

from planb.local.stack.ports import free_port
from tests.support.integration import cache_every_process
from tests.support.shared.training import jax_cache_dir, start_logged

TINY = {
    "PLANB_MODEL": "transformer",
    "PLANB_RUNNER": "plain",
    "PLANB_ACCELERATOR": "cpu",
    "PLANB_D_MODEL": "32",
    "PLANB_NUM_LAYERS": "1",
    "PLANB_NUM_HEADS": "2",
    "PLANB_SEQ_LEN": "32",
    "PLANB_VOCAB_SIZE": "64",
    "PLANB_DTYPE": "float32",
    "PLANB_ATTENTION": "xla",
    "PLANB_LOG_EVERY": "1",
    "PLANB_CHECKPOINT_EVERY": "5",
    "PLANB_EPOCHS": "100000",  # the runs end on their notices
    "JAX_PLATFORMS": "cpu",
}
OPT_LEVEL_0 = "--xla_backend_optimization_level=0"
#: Longest a run may take; each takes seconds on a warm machine.
RUN_S = 180
#: The launcher each process runs train.py with: every process writes JAX's persistent cache.
LAUNCHER = Path(cache_every_process.__file__)
STEP = re.compile(r"^Step (\d+): loss ([\d.]+)", re.MULTILINE)
SAVED = re.compile(r"^Stop notice \((.+)\) after step (\d+): checkpoint step \2 saved; stopping$", re.MULTILINE)
TOLD = re.compile(r"^Stop notice \((.+)\) at step (\d+): telling the other processes$", re.MULTILINE)


@dataclasses.dataclass
class Run:
    """A finished run: each process's exit status and output."""

    codes: list[int]
    logs: list[str]

    def saved(self) -> list[tuple[str, int]]:
        """Each process's stop notice line: (what told it, the step it saved)."""
        found = [SAVED.findall(log) for log in self.logs]
        assert all(len(lines) == 1 for lines in found), self.tails()
        return [(how, int(step)) for ((how, step),) in found]

    def losses(self) -> dict[int, float]:
        """Process 0's loss at each step."""
        return {int(step): float(loss) for step, loss in STEP.findall(self.logs[0])}

    def tails(self) -> str:
        return "\n".join(
            f"--- process {i}, exit {c}:\n{log[-2500:]}"
            for i, (c, log) in enumerate(zip(self.codes, self.logs, strict=True))
        )


def start(count: int, env: Mapping[str, str], folder: Path, devices: int = 2) -> list[subprocess.Popen[bytes]]:
    """``count`` train.py processes of one run (``count`` > 1: under jax.distributed on a free loopback port), each
    with ``devices`` CPU devices, its notice file ``notice-<i>`` and its output in ``process-<i>.log``."""
    folder.mkdir(parents=True)
    port = free_port()
    common = {**TINY, **env, "XLA_FLAGS": f"--xla_force_host_platform_device_count={devices} {OPT_LEVEL_0}"}
    # JAX's compilation cache outside the checkout, as the other training tests keep it: a warm machine loads each
    # process's step instead of compiling it again.
    common.setdefault("PLANB_COMPILATION_CACHE_DIR", str(jax_cache_dir("multihost")))
    if count > 1:
        common.update(
            PLANB_COORDINATOR_ADDRESS=f"127.0.0.1:{port}",
            JAX_COORDINATOR_BIND_ADDRESS=f"127.0.0.1:{port}",  # JAX's own: process 0 listens on loopback only
            PLANB_NUM_PROCESSES=str(count),
        )
    procs = []
    for i in range(count):
        own = {"PLANB_PROCESS_ID": str(i)} if count > 1 else {}
        own.update(PLANB_NOTICE_FILE=str(folder / f"notice-{i}"), PLANB_METRICS_FILE=str(folder / f"metrics-{i}.json"))
        procs.append(start_logged({**common, **own}, folder / f"process-{i}.log", launcher=LAUNCHER))
    return procs


def reach(ckpt: Path, step: int, procs: list[subprocess.Popen[bytes]], folder: Path) -> None:
    """Wait until the run's progress record says ``step`` was reached; fail if a process ends first."""
    deadline = time.monotonic() + RUN_S
    record = ckpt / "planb-progress.json"
    while time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            break
        try:
            if json.loads(record.read_text())["reached"] >= step:
                return
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.05)
    stop(procs)
    pytest.fail(f"the run did not reach step {step}:\n{finish(procs, folder).tails()}")


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def finish(procs: list[subprocess.Popen[bytes]], folder: Path) -> Run:
    """Wait for every process of a run (killing what is left after RUN_S); their exit status and output."""
    deadline = time.monotonic() + RUN_S
    try:
        for proc in procs:
            proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        stop(procs)
        for proc in procs:
            proc.wait()
    logs = [(folder / f"process-{i}.log").read_text(errors="replace") for i in range(len(procs))]
    return Run([p.returncode for p in procs], logs)


def checkpoints(ckpt: Path) -> list[int]:
    return sorted(int(p.name) for p in ckpt.iterdir() if p.name.isdigit())


@dataclasses.dataclass
class Runs:
    ckpt: Path
    four: Run  # 4 processes x 2 devices from step 0, told to stop through process 2's notice file
    four_reached: int  # the step the progress record held after it
    four_steps: list[int]  # the checkpoints after it
    two: Run  # 2 processes x 2 devices resuming it, stopped by SIGTERM to process 0
    one: Run  # 1 process x 8 devices from step 0, never stopped: the reference
    folders: dict[str, Path]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    root = tmp_path_factory.mktemp("multihost")
    ckpt = root / "ckpt"
    folders = {name: root / name for name in ("four", "two", "one")}
    env = {"PLANB_CHECKPOINT_DIR": str(ckpt), "PLANB_BATCH_PER_DEVICE": "1"}
    four = start(4, env, folders["four"])
    try:
        reach(ckpt, 6, four, folders["four"])  # past the periodic save at step 5
        (folders["four"] / "notice-2").touch()
        first = finish(four, folders["four"])
    finally:
        stop(four)
    saved = first.saved()[0][1]
    reached, steps = json.loads((ckpt / "planb-progress.json").read_text())["reached"], checkpoints(ckpt)
    # The same global batch (8) on half the devices: 2 a device, a setting the checkpoint's owner record holds,
    # so PLANB_RESUME=force takes the checkpoint over.
    resume = {**env, "PLANB_BATCH_PER_DEVICE": "2", "PLANB_RESUME": "force"}
    two = start(2, resume, folders["two"])
    one = start(1, {"PLANB_BATCH_PER_DEVICE": "1", "PLANB_EPOCHS": str(saved + 40)}, folders["one"], devices=8)
    try:
        reach(ckpt, saved + 3, two, folders["two"])
        two[0].send_signal(signal.SIGTERM)
        second = finish(two, folders["two"])
        reference = finish(one, folders["one"])
    finally:
        stop(two + one)
    yield Runs(ckpt, first, reached, steps, second, reference, folders)


def test_a_notice_to_one_process_stops_every_process_at_the_same_step(runs: Runs) -> None:
    """Process 2's notice file alone: it tells the others, and all four save the same step, within a few steps of
    the notice; each exits as a run stopped before its last step does."""
    four = runs.four
    assert four.codes == [EXIT_STOPPED] * 4, four.tails()
    saved = four.saved()
    step = saved[0][1]
    assert [s for _, s in saved] == [step] * 4, four.tails()
    notice = runs.folders["four"] / "notice-2"
    assert [how for how, _ in saved] == ["another process"] * 2 + [f"file {notice}", "another process"]
    told = [TOLD.findall(log) for log in four.logs]
    assert told[0] == told[1] == told[3] == [] and len(told[2]) == 1, four.tails()
    # JAX's sync point: the fastest process's next step once the protocol's round trip is done (a step or two, where a
    # step takes milliseconds)
    assert 0 < step - int(told[2][0][1]) <= 10, four.tails()
    assert runs.four_reached == step


def test_every_process_writes_its_own_shards(runs: Runs) -> None:
    """Orbax's multi-host save: each process writes its share of the sharded state in a folder of its own."""
    step = runs.four.saved()[0][1]
    for saved, count in ((step, 4), (runs.two.saved()[0][1], 2)):
        item = runs.ckpt / str(saved) / "default"
        folders = sorted(p.name for p in item.glob("ocdbt.process_*"))
        assert folders == [f"ocdbt.process_{i}" for i in range(count)], (saved, folders)
        sizes = [sum(f.stat().st_size for f in (item / name / "d").iterdir()) for name in folders]
        assert min(sizes) > sum(sizes) / (3 * count), (saved, sizes)  # each a real share, not a stub
    assert runs.four_steps[0] == 5 and runs.four_steps[-1] == step  # the periodic saves too


def test_only_process_0_prints_the_steps_and_writes_the_metrics(runs: Runs) -> None:
    for run, name in ((runs.four, "four"), (runs.two, "two")):
        assert STEP.search(run.logs[0]), run.tails()
        assert not any(STEP.search(log) for log in run.logs[1:]), run.tails()
        written = sorted(p.name for p in runs.folders[name].glob("metrics-*.json"))
        assert written == ["metrics-0.json"]
    metrics = json.loads((runs.folders["four"] / "metrics-0.json").read_text())
    assert (metrics["devices"], metrics["stopped_on_notice"]) == (8, True)
    assert metrics["end_step"] == runs.four.saved()[0][1]


def test_sigterm_to_one_process_of_the_resumed_run_saves_one_step_in_both(runs: Runs) -> None:
    """SIGTERM to process 0 (the coordinator) alone: both save the same step; process 0 then ends by the signal, once
    process 1 has left jax.distributed with it."""
    two = runs.two
    assert two.codes == [-signal.SIGTERM, EXIT_STOPPED], two.tails()
    assert [how for how, _ in two.saved()] == ["SIGTERM", "another process"], two.tails()
    assert two.saved()[0][1] == two.saved()[1][1] > runs.four.saved()[0][1] + 3


def test_the_checkpoint_of_four_processes_resumes_on_two_where_it_was(runs: Runs) -> None:
    """Restored into a mesh of four devices over two processes, the state trains on exactly as one process over eight
    devices trains it without a stop: the losses match the reference's, step for step, before and after the resume,
    and the resume loses no step."""
    first, second, reference = runs.four.losses(), runs.two.losses(), runs.one.losses()
    saved = runs.four.saved()[0][1]
    assert RESUMED.findall(runs.two.logs[0]) == [(str(saved), "0")], runs.two.tails()
    assert sorted(first) == list(range(saved)) and min(second) == saved, (sorted(first), sorted(second))
    assert runs.one.codes == [0] and "Training Complete!" in runs.one.logs[0], runs.one.tails()
    assert set(first) <= set(reference) and set(range(saved, saved + 3)) <= set(second) & set(reference)
    for losses in (first, second):
        apart = {step: abs(losses[step] - reference[step]) for step in sorted(set(losses) & set(reference))}
        assert max(apart.values()) < 2e-3, apart
    assert reference[max(reference)] < reference[0] - 0.2  # and the model does learn
