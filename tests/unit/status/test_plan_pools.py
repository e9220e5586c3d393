"""`planb status` with a plan of several pools: each pod's node names its pool and the pool's plan.

A multi-host TPU slice pool holds one slice, so plan A with two slices is on-demand-pool and
on-demand-pool-2, both labelled planb.dev/plan=on-demand.
"""

from __future__ import annotations

from typing import Any

from planb.status.render import explain, table
from planb.status.report import collect
from tests.support.shared.status_fakes import FakeKube, pool_node, ray_pod

Obj = dict[str, Any]


def test_each_pod_names_its_pool_and_plan() -> None:
    rayjob = {
        "metadata": {"namespace": "default", "name": "job-1", "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}},
        "spec": {"suspend": False},
        "status": {"rayClusterName": "job-1-raycluster"},
    }
    kube = FakeKube(
        {
            "/namespaces/default/rayjobs": [rayjob],
            "/namespaces/default/workloads": [
                {
                    "metadata": {
                        "namespace": "default",
                        "name": "rayjob-job-1-abcde",
                        "ownerReferences": [{"kind": "RayJob", "name": "job-1"}],
                    },
                    "spec": {"active": True},
                    "status": {
                        "conditions": [{"type": "Admitted", "status": "True", "reason": "Admitted", "message": ""}],
                        "admission": {
                            "podSetAssignments": [
                                {"name": "workers", "count": 2, "flavors": {"google.com/tpu": "on-demand"}}
                            ]
                        },
                    },
                }
            ],
            "/api/v1/nodes": [
                pool_node("n-a", "on-demand-pool", "on-demand"),
                pool_node("n-b", "on-demand-pool-2", "on-demand"),
                pool_node("n-cpu", "default-pool", None),
            ],
            "/namespaces/default/pods": [
                ray_pod("job-1-head", "n-cpu"),
                ray_pod("job-1-worker-0", "n-a"),
                ray_pod("job-1-worker-1", "n-b"),
            ],
        }
    )
    (job,) = collect(kube, "default")  # type: ignore[arg-type]
    text = explain(job)
    assert "pod job-1-worker-1: Running on n-b (pool on-demand-pool-2, plan on-demand)" in text
    assert "pod job-1-worker-0: Running on n-a (pool on-demand-pool, plan on-demand)" in text
    assert "pod job-1-head: Running on n-cpu (pool default-pool)" in text
    assert "default-pool,on-demand-pool,on-demand-pool-2" in table([job])
