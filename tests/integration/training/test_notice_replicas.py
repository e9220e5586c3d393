"""Independent replicas (Ray Train workers, one JAX process each) stop on a notice at the same step.

Ray Train's ``ray.train.report`` holds every rank until all of them report. A rank that stopped on its own notice
one step before the others left them waiting in that barrier for a rank that had returned (seen once in three
runs of test_ray's notice test: the driver hung until its 300 s bound). Here two threads run train_loop as two
ranks, with a barrier for ``report`` and a barrier-backed broadcast from rank 0 for ``agree``, as Ray's
SynchronizationActor gives them; the notices are per rank, as each Ray pod has its own preStop hook.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

#: Longer than any step here takes; a rank left waiting this long in a barrier fails the test.
BARRIER_S = 60


def run_two_ranks(
    train: ModuleType, notices: list[Path], on_report: Callable[[int, dict[str, Any]], None] | None = None
) -> list[Any]:
    """train_loop as ranks 0 and 1 in two threads; their RunResults (an exception where a rank raised)."""
    from planb_train.config import TrainConfig as config
    from planb_train.loop import train_loop

    barrier = threading.Barrier(2, timeout=BARRIER_S)
    shared: list[Any] = [None]

    def broadcast_from_rank_zero(rank: int) -> Callable[[bool], bool]:
        def agree(value: bool) -> bool:
            if rank == 0:
                shared[0] = value
            barrier.wait()
            seen = bool(shared[0])
            barrier.wait()
            return seen

        return agree

    results: list[Any] = [None, None]

    def rank_main(rank: int) -> None:
        cfg = config(accelerator="cpu", accelerator_type="", epochs=60, log_every=5, notice_file=str(notices[rank]))

        def report(metrics: dict[str, Any]) -> None:
            barrier.wait()
            if on_report is not None:
                on_report(rank, metrics)

        try:
            results[rank] = train_loop(cfg, rank, 2, report=report, agree=broadcast_from_rank_zero(rank))
        except Exception as exc:  # the test reads it
            barrier.abort()  # the other rank fails at once instead of waiting out the barrier
            results[rank] = exc

    threads = [threading.Thread(target=rank_main, args=(rank,)) for rank in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=4 * BARRIER_S)
    assert not any(thread.is_alive() for thread in threads), "a rank never returned"
    return results


def test_a_notice_that_only_rank_1_sees_stops_no_rank(train: ModuleType, tmp_path: Path) -> None:
    """Rank 0's view decides for the replicas; rank 1's pod alone being told (its node drained) stops neither, and
    neither waits for the other."""
    notices = [tmp_path / "rank0-stop", tmp_path / "rank1-stop"]
    notices[1].write_text("")
    results = run_two_ranks(train, notices)
    assert [type(r).__name__ for r in results] == ["RunResult", "RunResult"], results
    assert [(r.end_step, r.stopped) for r in results] == [(60, False), (60, False)]


def test_a_notice_rank_0_sees_stops_both_ranks_at_the_same_step(train: ModuleType, tmp_path: Path) -> None:
    """Rank 0's notice file appears when it reports step 10; both ranks stop after step 11, the next agreement."""
    notices = [tmp_path / "rank0-stop", tmp_path / "rank1-stop"]

    def on_report(rank: int, metrics: dict[str, Any]) -> None:
        if rank == 0 and metrics["epoch"] == 10:
            notices[0].write_text("")

    results = run_two_ranks(train, notices, on_report)
    assert [type(r).__name__ for r in results] == ["RunResult", "RunResult"], results
    assert [(r.end_step, r.stopped) for r in results] == [(11, True), (11, True)]
    assert notices[1].with_name("rank1-stop.saved").is_file()  # each rank answers its own pod's preStop hook
