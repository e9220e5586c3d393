"""The `regions` topology, for the regions' failure paths: the e2e session's stack as the MultiKueue manager and two
regions beside it, us-east5 and europe-west4 (planb.local.regions: each a local stack of its own, ports +100 and
+200), all three converged by one site.yml run on inventories/regions (planb.local.regions_race.converge).

It comes last among the topologies (TOPOLOGY_ORDER): the manager gives up the ladder's queues for MultiKueue's, as
Google's manager cluster runs no ladder of its own. The two regions start when the first regions test asks for
them and go when the file's tests end, so they cost nothing to the rest of the tier. `make test` runs this topology
in a pytest process of its own beside the rest of the tier (hack/test.sh: `--e2e-groups=regions`, the manager's
stack on ports moved by 500 and with a state folder of its own; regions_race.converge hands the inventory that
stack's ports).
"""

from __future__ import annotations

import atexit
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from planb import paths
from planb.kube import KubeError
from planb.local import regions as local_regions
from planb.local.regions import Member
from planb.local.regions_race import converge, keep
from planb.local.stack.kueue_settings import load_settings
from planb.local.stack.stack import LocalStack
from tests.support.e2e import regions_keeper
from tests.support.e2e.topologies import CONVERGES, Topologies, delete_cluster_queue, run

#: The two regions beside the e2e stack (the manager keeps the stack's own ports).
WORKERS: list[Member] = local_regions.layout(2)[1:]
#: The regions keeper's settings here (planb.regions.keeper.tick; an operator's defaults are 900 s, 105 s, a 30 s
#: margin and 2 s): a region lost for 3 s is quarantined, an evicted RayJob holding quota for 3 s past its pods' largest
#: grace period plus 2 s is released (a job's own grace still counts: planb.regions.keeper.grace).
KEEPER = ("--lost-after", "3", "--release-after", "3", "--release-margin", "2", "--poll-seconds", "1")


def keeper_log() -> Path:
    return paths.state_dir() / "regions" / "keeper.log"


#: The keeper running now (one at most); _UNDEPLOYED holds True while it is a plain one (no `extra`) started before
#: the converge deployed the keeper, which the `regions` fixture then restarts as deployed.
_KEEPER: list[subprocess.Popen[bytes]] = []
_UNDEPLOYED: list[bool] = []


def restart_keeper(*extra: str) -> None:
    """The regions keeper on the manager, (re)started with KEEPER and `extra` (`--dispatch ...`), its output appended
    to keeper_log(). Without `extra`, once the converge has deployed it (roles/regions_keeper): the Deployment's own
    arguments and a token of its ServiceAccount (kwok runs no container), so every regions test runs the keeper with
    the rights the role grants, KEEPER's fast timings after the Deployment's; before that, and with --dispatch, whose
    rights the role grants only to a manager converged with planb's dispatcher name, the stack's admin kubeconfig, as
    an operator runs it beside the manager."""
    stop_keeper()
    deployed = None
    if not extra:
        try:
            deployed = regions_keeper.as_deployed(paths.local_kubeconfig(), keeper_log().parent / "keeper")
        except (KubeError, OSError):  # no stack up yet: nothing deployed
            deployed = None
    if deployed is None:
        _KEEPER.append(keep(paths.local_kubeconfig(), keeper_log(), *KEEPER, *extra))
        if not extra:
            _UNDEPLOYED.append(True)
    else:
        kubeconfig, args = deployed
        _KEEPER.append(keep(kubeconfig, keeper_log(), *args, *KEEPER))


def stop_keeper() -> None:
    while _KEEPER:
        keeper = _KEEPER.pop()
        keeper.terminate()
        keeper.wait(10)
    _UNDEPLOYED.clear()


def manager_dispatcher(name: str) -> None:
    """The manager's Kueue (the stack's host Kueue) run with multiKueue.dispatcherName `name` ("": none, Kueue's
    AllAtOnce) and the rest of its configuration as the converge left it, the way the kueue role runs it (`planb
    local kueue --manager-config`): a restart of Kueue of seconds, not a converge."""
    config = load_settings(LocalStack().kueue.settings_file).manager_config
    multikueue = dict(config.get("multiKueue") or {})
    multikueue.pop("dispatcherName", None)
    config = {**config, "multiKueue": multikueue | ({"dispatcherName": name} if name else {})}
    run(sys.executable, "-m", "planb.cli", "local", "kueue", "--manager-config", json.dumps(config))


def _converge_manager(current: str | None) -> None:
    """The e2e stack becomes the manager, the operator's way: the ladder's queues release and ClusterQueue go (the
    manager's ClusterQueue and LocalQueue take their names, `cluster-queue` and `user-queue`, so the unchanged chart
    submits to them), then one site.yml run on inventories/regions, limited to the manager and WORKERS, converges both
    regions side by side and then the manager (its cluster, its Kueue with only the integrations every region serves,
    MultiKueue: docs/regions.md, "Ansible")."""
    kubeconfig = paths.local_kubeconfig()
    run(str(paths.tool("helm")), f"--kubeconfig={kubeconfig}", "uninstall", "planb-queues", "--ignore-not-found")
    delete_cluster_queue(check=True)  # a concurrent ladder's queue: the kueue role refuses a change of mode
    log = paths.state_dir() / "regions" / "site.log"
    took = converge(WORKERS, manager_state=paths.state_dir(), log=log)
    print(f"\n[e2e] site.yml -i inventories/regions (manager, {', '.join(m.name for m in WORKERS)}): {took:.1f} s")


CONVERGES["regions"] = _converge_manager


def _start_regions() -> None:
    if any((m.state / "local").exists() for m in WORKERS):  # a run stopped half-way may have left them
        local_regions.down(WORKERS)
    local_regions.start(WORKERS)  # takes every one down again if one fails


#: The start `start_regions_ahead` began: its thread, what it raised, and whether `regions_up` took the regions over.
_AHEAD: list[threading.Thread] = []
_AHEAD_FAILED: list[BaseException] = []
_TAKEN: list[bool] = []


def _down_if_not_taken() -> None:
    if _AHEAD and not _TAKEN:  # started ahead, but no regions test ran (a failure or an interruption before them)
        _AHEAD[0].join()
        local_regions.down(WORKERS)


def start_regions_ahead() -> None:
    """Start the two regions' stacks in a thread while the test before the regions file runs (tests/e2e/topologies/
    conftest.py), so that the regions topology does not wait the 7 to 9 s of their start; `regions_up` takes them
    over, and they go at exit should no regions test run."""

    def start() -> None:
        try:
            _start_regions()
        except BaseException as exc:  # said by regions_up, in the test that needs them
            _AHEAD_FAILED.append(exc)

    thread = threading.Thread(target=start, name="regions-ahead", daemon=True)
    _AHEAD.append(thread)
    atexit.register(_down_if_not_taken)
    thread.start()


@pytest.fixture(scope="module")
def regions_up(topologies: Topologies) -> Iterator[list[Member]]:
    """The two regions' stacks started side by side, or taken over from `start_regions_ahead` (the topology's
    converge sets them up); down at the end."""
    if _AHEAD and not _TAKEN:
        _TAKEN.append(True)
        _AHEAD[0].join()
        if _AHEAD_FAILED:
            raise _AHEAD_FAILED[0]
    else:
        _start_regions()
    try:
        # The regions keeper on the manager, as an operator runs it (`planb regions keep`), for the whole file.
        keeper_log().unlink(missing_ok=True)
        restart_keeper()
        try:
            yield WORKERS
        finally:
            stop_keeper()
    finally:
        local_regions.down(WORKERS)


@pytest.fixture()
def regions(topologies: Topologies, regions_up: list[Member]) -> list[Member]:
    """The manager (the stack) connected to the two regions, reset; the regions, in the playbook's order."""
    topologies.ensure("regions")
    if _UNDEPLOYED:  # a plain keeper started before the converge deployed it: now as the Deployment runs it
        restart_keeper()
        assert not _UNDEPLOYED, "the converge left no keeper Deployment to run as (roles/regions_keeper)"
    return regions_up
