"""The seed's failover on the real Kueue, and what happens when parts of it misbehave."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from planb import paths
from planb.failover.controller import MOVED_ANNOTATION
from planb.kube import Kube
from planb.local.capacity import settings as capacity_settings
from planb.local.gke_emulator.store import read_request_log
from planb.local.stack.stack import LocalStack
from planb.status.report import PROVREQ, RAY, collect
from tests.support.e2e.jobs import install_job, submit_two_jobs, wait_jobs, workload_of, workloads_by_job
from tests.support.e2e.topologies import FAILOVER_AFTER_SECONDS, Run
from tests.support.e2e.uninstall import uninstall
from tests.support.e2e.waits import wait_until

pytestmark = [pytest.mark.slow]


def test_job_1_on_plan_a_job_2_on_plan_b_then_job_3_takes_freed_plan_a_and_unused_nodes_go(
    site: Path, helm: Run
) -> None:
    """The seed's two jobs, then what follows them on the same cluster: uninstalling job 1 frees plan A for job 3,
    and once every job is gone the DWS slice goes with its request and plan A's after its idle time."""
    kube = Kube(site)
    jobs = submit_two_jobs(helm, kube)
    # Plan A needed no provisioning; plan B went through the ProvisioningRequest check.
    assert jobs["job-1"].requests == []
    assert [c.name for c in jobs["job-2"].checks] == ["dws-prov"]
    assert jobs["job-2"].checks[0].state == "Ready"
    assert [r.state for r in jobs["job-2"].requests] == ["Provisioned"]
    # Every PodSet of the job got a flavor: head and submitter on default-cpu, the workers on plan B.
    flavors = {ps.name: set(ps.flavors.values()) for ps in jobs["job-2"].podsets}
    assert flavors["head"] == {"default-cpu"}
    assert flavors["submitter"] == {"default-cpu"}
    worker = next(name for name in flavors if name not in ("head", "submitter"))
    assert flavors[worker] == {"dws"}
    # The DWS nodes carry GKE's queued-provisioning taint, the pool's name and the plan label the dws flavor selects.
    nodes = kube.items("/api/v1/nodes", {"labelSelector": "planb.dev/plan=dws"})
    assert len(nodes) == 4
    for node in nodes:
        assert node["metadata"]["labels"]["cloud.google.com/gke-nodepool"] == "dws-pool"
        taints = {(t["key"], t["effect"]) for t in node["spec"]["taints"]}
        assert ("cloud.google.com/gke-queued", "NoSchedule") in taints
        assert node["status"]["capacity"]["google.com/tpu"] == "4"

    def pool_nodes(pool: str) -> int:
        return len(kube.items("/api/v1/nodes", {"labelSelector": f"cloud.google.com/gke-nodepool={pool}"}))

    wait_until(lambda: pool_nodes("on-demand-pool") == 4, "plan A's slice to be scaled up for job 1's workers")
    # Uninstalling job 1 frees plan A's quota: job 3 is admitted there, with no ProvisioningRequest.
    uninstall(site, "job-1")
    wait_until(lambda: "job-1" not in workloads_by_job(kube), "job 1's Workload to go")
    install_job(helm, "job-3")
    jobs = wait_jobs(kube, {"job-2": "dws", "job-3": "on-demand"})
    assert jobs["job-3"].requests == []
    uninstall(site, "job-2", "job-3")
    # DWS nodes go with their ProvisioningRequest; on-demand nodes after the idle time (5 s here).
    wait_until(lambda: pool_nodes("dws-pool") == 0, "the DWS slice to be released")
    wait_until(lambda: pool_nodes("on-demand-pool") == 0, "plan A's idle slice to be scaled down")
    assert pool_nodes("default-pool") >= 1


def _requests(kube: Kube, resource: str, verbs: tuple[str, ...], scope: str = "") -> float:
    """How many requests of `verbs` on core `resource` itself (no subresource; of `scope`, any when '') the API server
    has answered (its apiserver_request_total)."""
    total = 0.0
    for line in kube.text("/metrics").splitlines():
        if not line.startswith("apiserver_request_total{"):
            continue
        labels = ('group=""', f'resource="{resource}"', 'subresource=""') + ((f'scope="{scope}"',) if scope else ())
        if all(label in line for label in labels) and any(f'verb="{verb}"' in line for verb in verbs):
            total += float(line.rsplit(" ", 1)[1])
    return total


def _pool_reads() -> int:
    """How many times the GKE emulator was asked for a cluster's node pools: once a pass of the capacity simulator."""
    return len([e for e in read_request_log() if e["method"] == "GET" and e["path"].endswith("/nodePools")])


def test_the_capacity_simulator_reads_pods_and_nodes_from_its_watches_not_by_listing_them(site: Path) -> None:
    # Each pass of the running simulator reads the node pools over the GKE API (the emulator's request log); the pods
    # and its nodes it reads come from its watches' caches, so the passes list no pod, and nodes only on a pass after
    # the simulator wrote one (made, removed, noticed: a list a write, one more for a write just before the first pass
    # counted, as the reset between tests makes). The other clients watch pods and nodes, and kwok lists a node's pods
    # only when it takes a new node, which a settled topology does not make.
    kube = Kube(site)
    pods = _requests(kube, "pods", ("LIST",), "cluster")
    nodes = _requests(kube, "nodes", ("LIST",), "cluster")
    writes = _requests(kube, "nodes", ("POST", "DELETE", "PATCH"))
    passes = _pool_reads()
    wait_until(lambda: _pool_reads() >= passes + 4, "four passes of the capacity simulator", timeout=30)
    assert _requests(kube, "pods", ("LIST",), "cluster") == pods
    listed = _requests(kube, "nodes", ("LIST",), "cluster") - nodes
    assert listed <= 1 + _requests(kube, "nodes", ("POST", "DELETE", "PATCH")) - writes


def test_kueue_restart_while_job_2_waits_for_provisioning(
    site: Path, helm: Run, capfd: pytest.CaptureFixture[str]
) -> None:
    kube = Kube(site)
    capacity_settings.update(provisioning_delay_seconds=3600.0)
    install_job(helm, "job-1")
    wait_jobs(kube, {"job-1": "on-demand"})
    install_job(helm, "job-2")
    wait_until(
        lambda: any(j.name == "job-2" and j.requests for j in collect(kube, "default")),
        "job 2's ProvisioningRequest",
    )
    before = workloads_by_job(kube)
    stack = LocalStack()
    pid = stack.kueue.process.pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: stack.kueue.process.pid() is None, "Kueue to die")
    capfd.readouterr()
    stack.up()  # restarts only what is missing: Kueue
    # etcd holds the CRDs this stack took in (its stamp, planb.local.stack.crds.applied): none is applied again.
    said = capfd.readouterr().err
    assert "the CRDs are in etcd already" in said and "installing the ProvisioningRequest" not in said, said
    capacity_settings.update(provisioning_delay_seconds=1.0)
    wait_jobs(kube, {"job-1": "on-demand", "job-2": "dws"})
    after = workloads_by_job(kube)
    assert after == before, "a Workload was lost or duplicated across the restart"
    assert all(len(names) == 1 for names in after.values())


def test_failed_provisioning_is_retried(site: Path, helm: Run) -> None:
    kube = Kube(site)
    # A short backoff for the test; the shipped values wait minutes between attempts (the next test's reset
    # rolls the queues release back).
    helm(
        "upgrade",
        "planb-queues",
        str(paths.REPO / "charts" / "planb"),
        "--reuse-values",
        "--set",
        "dws.retryStrategy.backoffBaseSeconds=1",
        "--set",
        "dws.retryStrategy.backoffMaxSeconds=2",
    )
    # GKE backs dws-pool off after the failed scale-up (5 min): 2 s here, so the retry finds it again.
    capacity_settings.update(fail_next=1, provisioning_delay_seconds=1.0, node_group_backoff_seconds=2.0)
    install_job(helm, "job-1")
    wait_jobs(kube, {"job-1": "on-demand"})
    install_job(helm, "job-2")
    jobs = wait_jobs(kube, {"job-1": "on-demand", "job-2": "dws"})
    requests = kube.items(f"{PROVREQ}/namespaces/default/provisioningrequests")
    names = sorted(r["metadata"]["name"] for r in requests)
    provisioned = [r.name for r in jobs["job-2"].requests if r.state == "Provisioned"]
    # Kueue numbers the attempts: the first request failed, the second was provisioned.
    assert len(provisioned) == 1 and provisioned[0].endswith("-2"), names
    assert capacity_settings.load().fail_next == 0


def test_with_failover_off_a_stockout_keeps_the_job_cycling_on_plan_a(site: Path, helm: Run) -> None:
    """Failover off, the fallback is quota-based only (kueue#2560): Kueue's waitForPodsReady evicts the stocked-out
    job and admits it on plan A again, never on plan B. Off at run time: the host controller stopped (the reset
    starts it again); Kueue keeps the topology's timeout, where off on GKE it keeps its own 30 minutes."""
    kube = Kube(site)
    stack = LocalStack()
    assert stack.failover.stop()
    capacity_settings.update(stockout=("on-demand-pool",))
    install_job(helm, "job-1")
    jobs = wait_jobs(kube, {"job-1": "on-demand"})
    assert jobs["job-1"].requests == []

    def workers(phase: str) -> int:
        job = next(j for j in collect(kube, "default") if j.name == "job-1")
        return sum(1 for pod, state, _ in job.pods if "worker" in pod and state == phase)

    def timeouts() -> int:
        stats = (workload_of(kube, "job-1").get("status") or {}).get("schedulingStats") or {}
        evictions = stats.get("evictions") or []
        return sum(int(e.get("count", 0)) for e in evictions if e.get("reason") == "PodsReadyTimeout")

    wait_until(lambda: workers("Pending") == 4, "job 1's workers pending for lack of plan A machines")
    # Past plan A's timeout Kueue evicts it and, after the requeue's backoff, admits it on plan A again.
    wait_until(lambda: timeouts() >= 1, "Kueue's PodsReadyTimeout eviction of job 1", FAILOVER_AFTER_SECONDS + 30)
    wait_jobs(kube, {"job-1": "on-demand"})
    assert not any(j.requests for j in collect(kube, "default")), "a stocked-out job went to plan B with failover off"
    assert MOVED_ANNOTATION not in (kube.get(f"{RAY}/namespaces/default/rayjobs/job-1") or {})["metadata"].get(
        "annotations", {}
    )
    capacity_settings.update(stockout=())
    wait_until(lambda: workers("Running") == 4, "the workers to start on plan A once it has machines again")
