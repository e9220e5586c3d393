"""roles/kueue_queues with two teams against a real kube-apiserver: the role installs the queues release, then checks
and waits for each team's ClusterQueue, the ones the release renders, not the chart's one queues.clusterQueue,
which is not rendered with teams.

The API server is the folder's (conftest.py: the stack's build with its CRDs, Kueue's among them), so the role
runs for real (its preflight, the pinned helm's template and install, kubectl's read of the ClusterQueues,
kubernetes.core.k8s_info's wait), in a namespace and with cluster-scoped names of this test's own. No Kueue runs
there, so no ClusterQueue becomes Active by itself: the test writes a team's Active condition through the status
subresource, as Kueue's ClusterQueue controller does, and the wait is 1 s (kueue_queues_active_timeout_seconds).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from planb import paths
from planb.kube import Kube
from tests.support.shared.chart.helm import Helm
from tests.support.shared.kueue.role_playbook import failures_by_host, run_for_hosts

pytestmark = [pytest.mark.tools]

PLAYBOOK = """\
- name: roles/kueue_queues, as site.yml runs it
  hosts: localhost
  gather_facts: false
  roles:
    - kueue_queues
"""
KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
NS = "queues-role-teams"
PLAN_A = {"cpu": 8, "memory": "16Gi", "accelerator": 16}
TEAMS = [
    {"name": "rt-research", "namespaces": ["rt-research"], "quotas": {"rt-on-demand": PLAN_A}},
    {"name": "rt-serving", "namespaces": ["rt-serving"], "quotas": {}},
]
#: The cluster-scoped objects of this release named apart from any other test's; failover off (no controller runs).
VALUES = {
    "queues": {
        "flavors": {"cpu": "rt-cpu", "onDemand": "rt-on-demand", "dws": "rt-dws"},
        "priorityClasses": [{"name": "rt-normal", "value": 1000, "description": "This test's only priority."}],
        "jobServiceAccount": "",
    },
    "dws": {"enabled": False},
}
#: A ladder for the concurrent mode (its preflight asks for one), without DWS (off above).
LADDER = [
    {"name": "rt-on-demand", "kind": "on-demand", "slices": 1, "nodepool": "on-demand-pool"},
    {"name": "rt-spot", "kind": "spot", "slices": 1, "nodepool": "spot-pool"},
]


@pytest.fixture()
def role_inputs(api_server: Path, helm: Helm) -> Iterator[dict[str, Any]]:
    """The role's variables for this API server, the release's and the teams' namespaces made; afterwards the release
    gone and the teams' ClusterQueues with it (the chart keeps queue objects on uninstall)."""
    kube = Kube(api_server)
    for ns in (NS, *(ns for team in TEAMS for ns in team["namespaces"])):
        kube.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    yield {
        "kueue_queues_kubeconfig": str(api_server),
        "kueue_queues_helm_binary": str(paths.tool("helm")),
        "kueue_queues_release_name": "rt-queues",
        "kueue_queues_release_namespace": NS,
        "kueue_queues_teams": TEAMS,
        "kueue_queues_values": VALUES,
        "kueue_queues_failover_after_minutes": 0,
        "kueue_queues_active_timeout_seconds": 1,
    }
    helm("uninstall", "rt-queues", "-n", NS, kubeconfig=str(api_server))
    for team in TEAMS:
        kube.delete(f"{KUEUE}/clusterqueues/{team['name']}")


def _active(kube: Kube, name: str) -> None:
    """Write the ClusterQueue's Active condition, as Kueue's ClusterQueue controller does."""
    condition = {"type": "Active", "status": "True", "reason": "Ready", "message": "test: Ready"}
    condition["lastTransitionTime"] = "2026-01-01T00:00:00Z"
    kube.merge_patch(f"{KUEUE}/clusterqueues/{name}/status", {"status": {"conditions": [condition]}})


def _role(folder: Path, hosts: dict[str, dict[str, Any]]) -> dict[str, str]:
    """The role run once for each host; what the output says of each host's failures ({} for none)."""
    done = run_for_hosts(folder, PLAYBOOK, hosts)
    return {host: " ".join(text.split()) for host, text in failures_by_host(done).items()}


def test_the_role_waits_for_and_checks_each_team_s_cluster_queue(
    api_server: Path, role_inputs: dict[str, Any], tmp_path: Path
) -> None:
    kube = Kube(api_server)
    # First install: the release makes each team's ClusterQueue; neither becomes Active (no Kueue), and the role says
    # so of each, by name, with the fix.
    failed = _role(tmp_path / "install", {"sequential": role_inputs})
    assert set(failed) == {"sequential"}
    for team in ("rt-research", "rt-serving"):
        assert kube.get(f"{KUEUE}/clusterqueues/{team}") is not None, f"the release made no ClusterQueue {team}"
        assert f"ClusterQueue {team} is not Active within 1 s" in failed["sequential"], failed["sequential"][-3000:]
        assert f"kubectl describe clusterqueue {team}" in failed["sequential"]

    # Research's queue is Active now. Again, beside the same inventory in concurrent mode: the sequential run finds
    # research's Active and names serving's only; the concurrent one is refused before the upgrade, naming each team's
    # ClusterQueue, whose admission policy Kueue would not let it change.
    _active(kube, "rt-research")
    concurrent = {**role_inputs, "kueue_queues_ladder_mode": "concurrent", "kueue_queues_ladder": LADDER}
    failed = _role(tmp_path / "again", {"sequential": role_inputs, "concurrent": concurrent})
    assert set(failed) == {"sequential", "concurrent"}
    assert "ClusterQueue rt-serving is not Active within 1 s" in failed["sequential"], failed["sequential"][-3000:]
    assert "ClusterQueue rt-research is not Active" not in failed["sequential"]
    for team in ("rt-research", "rt-serving"):
        assert f"but ClusterQueue {team} was made with null" in failed["concurrent"], failed["concurrent"][-3000:]
        assert f"(kubectl delete clusterqueue {team})" in failed["concurrent"]
    assert "not Active" not in failed["concurrent"]
    for team in ("rt-research", "rt-serving"):
        queue = kube.get(f"{KUEUE}/clusterqueues/{team}")
        assert queue is not None and "concurrentAdmissionPolicy" not in queue["spec"]
