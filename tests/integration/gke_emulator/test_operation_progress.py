"""A converging module reports each poll of a GKE operation: elapsed time, status and GKE's progress metrics.

The module's result carries them (``operations[].progress``), which the default callback prints with ``-v``.
The emulator answers a RUNNING operation with ``progress.metrics`` (elapsed_ms, total_ms), as GKE's v1 Operation
does (container v1 discovery document, OperationProgress); the test keeps the operation RUNNING until the module
has polled it a few times, then lets it finish, so what each poll saw does not hang on the machine's speed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.integration.gke.modules import CLUSTER_ARGS, ModuleRunner

#: Long enough that the operation never finishes on its own while the test runs.
HELD_OP_SECONDS = 600.0
#: Polls the module makes while the operation is held RUNNING.
HELD_POLLS = 3


@pytest.fixture
def held(tmp_path: Path) -> Iterator[RunningEmulator]:
    running = RunningEmulator(tmp_path / "state", port=0, op_seconds=HELD_OP_SECONDS, kubeconfig=tmp_path / "none")
    yield running
    running.stop()


def _operation_polls(emulator: RunningEmulator) -> int:
    return sum(1 for r in emulator.store.request_log() if r.get("method") == "GET" and "/operations/" in r["path"])


def _release_after_polls(emulator: RunningEmulator, polls: int, stop: threading.Event) -> None:
    """Once the module has polled ``polls`` times, make every held operation due: the next poll finishes it."""
    while not stop.is_set() and _operation_polls(emulator) < polls:
        time.sleep(0.02)
    with emulator.store.lock:
        for op in emulator.store.operations.values():
            op["_planb"]["doneAt"] = 0.0


def test_each_poll_reports_elapsed_status_and_progress_metrics(held: RunningEmulator) -> None:
    stop = threading.Event()
    releaser = threading.Thread(target=_release_after_polls, args=(held, HELD_POLLS, stop), daemon=True)
    releaser.start()
    try:
        result = ModuleRunner(held).run("gke_cluster", CLUSTER_ARGS)
    finally:
        stop.set()
        releaser.join(timeout=5)
    (record,) = result["operations"]
    assert record["operationType"] == "CREATE_CLUSTER" and record["status"] == "DONE"
    polls = record["progress"]
    assert len(polls) == record["polls"] >= HELD_POLLS + 1
    running, last = polls[:HELD_POLLS], polls[-1]
    for poll in running:
        assert poll["status"] == "RUNNING"
        # intValue travels as a string (int64 in the discovery document); the module reports a number.
        assert poll["metrics"]["total_ms"] == int(HELD_OP_SECONDS * 1000)
        assert isinstance(poll["metrics"]["elapsed_ms"], int)
    assert last["status"] == "DONE" and "metrics" not in last
    elapsed = [poll["elapsed_s"] for poll in polls]
    assert elapsed == sorted(elapsed) and elapsed[-1] <= record["elapsed_s"]
