"""Spot pools in the capacity simulator: GKE's Spot label, the preemption switch, and what a
preemption does to nodes and pods (pure logic; the stack test is tests/e2e/topologies/test_ladder.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planb.catalog import versions
from planb.kube import KubeError
from planb.local.capacity import spot
from planb.local.capacity.pools import from_gke
from planb.local.capacity.settings import Settings, SettingsError, load, save, settings_file, update
from planb.local.capacity.spot_reconciler import notice

Obj = dict[str, Any]

SPOT_POOL = {
    "name": "spot-pool",
    "cluster": "projects/p/locations/us-east5-b/clusters/tpu-cluster",
    "initialNodeCount": 0,
    "config": {"machineType": "ct6e-standard-4t", "spot": True, "labels": {"planb.dev/plan": "spot"}},
    "autoscaling": {"enabled": True, "totalMinNodeCount": 0, "totalMaxNodeCount": 4},
    "placementPolicy": {"tpuTopology": "4x4"},
}


def test_spot_pool_nodes_carry_gke_s_spot_label() -> None:
    pool = from_gke(SPOT_POOL)
    assert pool.spot and pool.autoscaling and not pool.queued_provisioning
    labels = pool.node_labels()
    assert labels["cloud.google.com/gke-spot"] == "true"
    assert labels["planb.dev/plan"] == "spot"
    # What Kueue's spot flavor puts on the pods: its nodeLabels as a nodeSelector.
    assert pool.matches({"planb.dev/plan": "spot", "cloud.google.com/gke-spot": "true"})
    on_demand = from_gke({**SPOT_POOL, "name": "on-demand-pool", "config": {"machineType": "ct6e-standard-4t"}})
    assert not on_demand.spot
    assert "cloud.google.com/gke-spot" not in on_demand.node_labels()


def test_preempt_and_the_notice_are_saved_and_checked(tmp_path: Path) -> None:
    # None: GKE's own notice, per pool (test_a_spot_pool_may_ask_for_gke_s_120_s_notice).
    assert Settings().spot_notice_seconds is None and spot.GKE_NOTICE_SECONDS == 30.0
    update(tmp_path, preempt=("spot-pool",), spot_notice_seconds=2.0)
    got = load(tmp_path)
    assert (got.preempt, got.spot_notice_seconds) == (("spot-pool",), 2.0)
    with pytest.raises(SettingsError, match="spot_notice_seconds must be >= 0"):
        save(Settings(spot_notice_seconds=-1), tmp_path)
    settings_file(tmp_path).write_text('{"preempt": "spot-pool"}')
    with pytest.raises(SettingsError, match="preempt is not a list of pool names"):
        load(tmp_path)


EXTENDED = {"shutdownGracePeriodSeconds": 120, "shutdownGracePeriodCriticalPodsSeconds": 15}


@pytest.mark.parametrize(
    ("kubelet", "version", "seconds"),
    [
        (None, "1.35.0-gke.1171000", 30.0),
        (EXTENDED, "1.35.0-gke.1171000", 120.0),
        (EXTENDED, "1.36.1-gke.1000000", 120.0),
        # GKE grants the extension from 1.35.0-gke.1171000 on (Google's Spot VMs page): older, the default.
        (EXTENDED, "1.35.0-gke.1170000", 30.0),
        (EXTENDED, "1.34.1-gke.1829001", 30.0),
        (EXTENDED, "", 30.0),
        ({"shutdownGracePeriodSeconds": 30}, "1.35.0-gke.1171000", 30.0),
    ],
)
def test_a_spot_pool_may_ask_for_gke_s_120_s_notice(kubelet: Obj | None, version: str, seconds: float) -> None:
    config = dict(SPOT_POOL["config"], **({"kubeletConfig": kubelet} if kubelet else {}))  # type: ignore[arg-type]
    pool = from_gke({**SPOT_POOL, "config": config, "clusterMasterVersion": version})
    assert pool.spot_notice_seconds == seconds
    # GKE's notice unless the setting gives one for every pool.
    assert notice(pool, Settings()) == seconds
    assert notice(pool, Settings(spot_notice_seconds=2.0)) == 2.0
    assert notice(None, Settings()) == 30.0


def test_the_catalog_holds_what_google_says_of_the_extension() -> None:
    assert versions.spot_shutdown_seconds(EXTENDED, "1.35.0-gke.1171000") == (120, 15)
    assert versions.spot_shutdown_seconds({}, "1.35.0-gke.1171000") == (30, 15)
    assert versions.version_text(versions.SPOT_EXTENDED_SHUTDOWN_MIN) == "1.35.0-gke.1171000"
    assert versions.DOC_SPOT_TERMINATION == "https://cloud.google.com/kubernetes-engine/docs/concepts/spot-vms"


class FakeKube:
    def __init__(self, pods: list[Obj]) -> None:
        self.pods = pods
        self.calls: list[tuple[str, str, Obj | None]] = []

    def merge_patch(self, path: str, body: Obj) -> Obj:
        self.calls.append(("PATCH", path, body))
        return body

    def request(self, method: str, path: str, body: Obj | None = None) -> Obj:
        self.calls.append((method, path, body))
        if path.endswith("/gone"):
            raise KubeError(404, "Not Found", "{}")
        return {}

    def items(self, path: str, query: dict[str, str] | None = None) -> list[Obj]:
        assert path == "/api/v1/pods"
        return self.pods


def _node(name: str, noticed: float | None = None) -> Obj:
    annotations = {spot.NOTICE_ANNOTATION: spot._iso(noticed)} if noticed is not None else {}
    return {"metadata": {"name": name, "annotations": annotations}}


def _pod(name: str, node: str, phase: str = "Running") -> Obj:
    return {"metadata": {"namespace": "default", "name": name}, "spec": {"nodeName": node}, "status": {"phase": phase}}


def test_the_notice_cordons_and_stamps_each_node_once() -> None:
    kube = FakeKube([])
    logs: list[str] = []
    preemption = spot.Preemption(kube, logs.append, lambda name, why: None)  # type: ignore[arg-type]
    names = preemption.notify("spot-pool", [_node("n1"), _node("n2", noticed=1000.0)], now=2000.0)
    assert names == ["n1"]
    assert kube.calls == [
        (
            "PATCH",
            "/api/v1/nodes/n1",
            {
                "metadata": {"annotations": {spot.NOTICE_ANNOTATION: "1970-01-01T00:33:20.000000Z"}},
                "spec": {"unschedulable": True},
            },
        )
    ]
    assert logs == ["pool spot-pool: Spot preemption notice to 1 node(s): n1"]


def test_after_the_notice_the_pods_fail_and_the_nodes_go_with_them() -> None:
    kube = FakeKube([_pod("w0", "n1"), _pod("w1", "n2"), _pod("gone", "n1", phase="Failed"), _pod("h", "cpu")])
    deleted: list[str] = []
    preemption = spot.Preemption(kube, lambda msg: None, lambda name, why: deleted.append(name))  # type: ignore[arg-type]
    nodes = [_node("n1", noticed=1000.0), _node("n2", noticed=1020.0), _node("n3")]
    gone, deadline = preemption.reclaim(nodes, notice_seconds=30.0, now=1035.0)
    assert (gone, deadline, deleted) == (["n1"], 1050.0, ["n1"])
    failed = [c for c in kube.calls if c[0] == "PATCH"]
    # The kubelet's graceful node shutdown: phase Failed, its reason and message; an ended pod is left as it is.
    assert failed == [
        (
            "PATCH",
            "/api/v1/namespaces/default/pods/w0/status",
            {"status": {"phase": "Failed", "reason": "Terminated", "message": spot.SHUTDOWN_MESSAGE}},
        )
    ]
    removed = [c[1] for c in kube.calls if c[0] == "DELETE"]
    assert removed == ["/api/v1/namespaces/default/pods/w0", "/api/v1/namespaces/default/pods/gone"]
    # Before the notice period is over nothing goes.
    assert preemption.reclaim([_node("n2", noticed=1020.0)], 30.0, now=1049.0) == ([], 1050.0)


def test_the_notice_period_counts_from_the_notice_to_the_microsecond() -> None:
    """A notice stamped cut to the second made a node noticed at 1000.9 s go at 1030 s of a 30 s notice."""
    preemption = spot.Preemption(FakeKube([]), lambda msg: None, lambda name, why: None)  # type: ignore[arg-type]
    assert preemption.reclaim([_node("n1", noticed=1000.9)], 30.0, now=1030.4) == ([], 1030.9)
    assert preemption.reclaim([_node("n1", noticed=1000.9)], 30.0, now=1030.9)[0] == ["n1"]
    # A stamp without a fraction (an older simulator's) still reads.
    old = {"metadata": {"name": "n2", "annotations": {spot.NOTICE_ANNOTATION: "1970-01-01T00:16:40Z"}}}
    assert spot.noticed_at(old) == 1000.0
