"""The `regions` topology (issue 38, item 5): the e2e session's stack as the MultiKueue manager and two regions beside
it, us-east5 and europe-west4 (planb.local.regions: each a local stack of its own, ports +100 and +200), each
converged by site.yml with DWS alone and connected to the manager by playbooks/regions.yml (planb.local.regions_race).

It comes last among the topologies (TOPOLOGY_ORDER): the manager gives up the ladder's queues for MultiKueue's, as
Google's manager cluster runs no ladder of its own. The two regions start when the first regions test asks for
them and go when the file's tests end, so they cost nothing to the rest of the tier.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from planb import paths
from planb.local import regions as local_regions
from planb.local.regions import Member
from planb.local.regions_race import connect, converge
from tests.support.topologies import CONVERGES, Topologies, ansible_playbook, delete_cluster_queue, run

#: The two regions beside the e2e stack (the manager keeps the stack's own ports).
WORKERS: list[Member] = local_regions.layout(2)[1:]
#: The manager's Kueue settings (docs/regions.md, "The manager's Kueue"): only the integrations every region serves.
MANAGER_KUEUE = {"integrations": {"frameworks": ["ray.io/rayjob", "ray.io/raycluster"]}}


def _converge_manager(current: str | None) -> None:
    """The e2e stack becomes the manager, the operator's way (docs/regions.md, "The manager's Kueue"): its Kueue
    re-converged with only the integrations every region serves (playbooks/kueue.yml with MANAGER_KUEUE), the ladder's
    queues release and ClusterQueue gone (the manager's ClusterQueue and LocalQueue take their names, `cluster-queue`
    and `user-queue`, so the unchanged chart submits to them), then the regions playbook connects it to the regions
    `regions_up` converged."""
    kubeconfig = paths.local_kubeconfig()

    def drop_queues() -> None:
        run(str(paths.tool("helm")), f"--kubeconfig={kubeconfig}", "uninstall", "planb-queues", "--ignore-not-found")
        delete_cluster_queue(check=True)

    drop_queues()  # a concurrent ladder's queue: the role refuses a change of mode
    # The stack's own kubeconfig: a manager has no GKE cluster of this inventory (run alone, no site.yml wrote one).
    manager = {"planb_kueue_manager_config": MANAGER_KUEUE, "planb_kubeconfig": str(kubeconfig)}
    ansible_playbook("playbooks/kueue.yml", "-e", json.dumps(manager))
    drop_queues()
    connect(kubeconfig, WORKERS)


CONVERGES["regions"] = _converge_manager


@pytest.fixture(scope="module")
def regions_up(topologies: Topologies) -> Iterator[list[Member]]:
    """The two regions started side by side and converged side by side (site.yml, DWS alone); down at the end."""
    local_regions.down(WORKERS)  # a run stopped half-way may have left them
    local_regions.start(WORKERS)
    try:
        with ThreadPoolExecutor(len(WORKERS)) as pool:
            seconds = list(pool.map(converge, WORKERS))
        took = ", ".join(f"{m.name} {s:.1f} s" for m, s in zip(WORKERS, seconds, strict=True))
        print(f"\n[e2e] regions converged: {took}")
        yield WORKERS
    finally:
        local_regions.down(WORKERS)


@pytest.fixture()
def regions(topologies: Topologies, regions_up: list[Member]) -> list[Member]:
    """The manager (the stack) connected to the two regions, reset; the regions, in the playbook's order."""
    topologies.ensure("regions")
    return regions_up
