"""Advice-ordered dispatch on the `regions` topology (tests/e2e/topologies/test_regions.py, the class
`TestAdviceOrderedDispatch`): the manager's Kueue given planb's dispatcher name and the keeper run with `--dispatch`
(`dispatching`), and what the tests read of it: the keeper's log since a point, `planb status --capacity`'s line for a
pair, the advice.capacity requests the manager's GKE emulator served (planb.local.regions_race.advice_asked)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

from planb import paths
from planb.kube import Kube
from planb.local.capacity.settings import GKE_INITIAL_BACKOFF_SECONDS
from planb.local.gke_emulator.background import default_port
from planb.local.regions import Member
from planb.local.regions_race import PROJECT, SHAPE, advice_asked
from planb.regions.dispatcher.ledger_store import CONFIGMAP
from planb.regions.dispatcher.nomination import DISPATCHER
from tests.support.e2e.regions_topology import keeper_log, manager_dispatcher, restart_keeper, stop_keeper
from tests.support.e2e.topologies import Topologies, run

#: The manager's GKE emulator: the dispatching keeper's Compute Engine endpoint (`--advice-url`), as in the advice demo.
#: It is asked no advice here: the regions' shape is a TPU one, which Google gives none for (the class's docstring).
EMULATOR = f"http://127.0.0.1:{default_port()}"
LEDGER = f"/api/v1/namespaces/kueue-system/configmaps/{CONFIGMAP}"
#: What `planb status --capacity` says of a pair the keeper asked no advice for
#: (planb.regions.dispatcher.offer_order).
NOT_ASKED = "no advice by design (not asked), ledger alone"


@pytest.fixture(scope="class")
def dispatching(topologies: Topologies, regions_up: list[Member]) -> Iterator[list[Member]]:
    """The manager's Kueue given planb's dispatcher name (a restart of Kueue, not a converge) and the keeper run with
    --dispatch, its Compute Engine endpoint the manager's GKE emulator; the ledger fresh. After the class: Kueue's
    AllAtOnce, the plain keeper, no ledger."""
    topologies.ensure("regions")
    boss = Kube(paths.local_kubeconfig())
    boss.delete(LEDGER)
    manager_dispatcher(DISPATCHER)
    restart_keeper("--dispatch", "--advice-url", EMULATOR, "--project", PROJECT)
    try:
        yield regions_up
    finally:
        stop_keeper()
        manager_dispatcher("")
        restart_keeper()
        boss.delete(LEDGER)


def log_mark() -> tuple[int, int]:
    """Where the keeper's log and the emulator's advice.capacity requests stand now (`said_since`, `asked_since`)."""
    return len(keeper_log().read_text(errors="replace")), len(advice_asked(EMULATOR))


def said_since(mark: tuple[int, int]) -> str:
    return keeper_log().read_text(errors="replace")[mark[0] :]


def asked_since(mark: tuple[int, int]) -> list[str]:
    """The advice.capacity requests the manager's GKE emulator served since `mark`."""
    return advice_asked(EMULATOR)[mark[1] :]


def pair_line(capacity: str, member: Member) -> str:
    """`planb status --capacity`'s reason line for the member's DWS pair of the job's shape."""
    lines = [line.strip() for line in capacity.splitlines() if line.strip().startswith(f"{member.name}/dws/{SHAPE}: ")]
    assert lines, capacity
    return lines[0]


def reset_backoff(member: Member) -> None:
    """The member's pools back to GKE's initial backoff after a failed scale-up (`planb local capacity set`)."""
    backoff = ("--node-group-backoff", str(GKE_INITIAL_BACKOFF_SECONDS))
    run(sys.executable, "-m", "planb.cli", "local", "capacity", "set", *backoff, env={**os.environ, **member.env()})
