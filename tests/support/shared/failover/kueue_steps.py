"""Kueue v0.19.2's and KubeRay v1.6.2's writes for one job, step by step, and the controller that sees them."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any

from planb.failover import controller as failover
from planb.failover.controller import (
    Config,
    Controller,
)
from tests.support.shared.failover.fake_api import (
    FakeCluster,
)
from tests.support.shared.failover.objects import (
    AFTER,
    CLUSTER_QUEUE,
    EVICTED_MESSAGE,
    JOB,
    NS,
    PLAN_A,
    PLAN_B,
    PODS_READY_TIMEOUT,
    RAY_API,
    RESOURCE_FLAVORS,
    WL,
    rayjob_object,
    workload_object,
)

Obj = dict[str, Any]


def start_controller(cluster: FakeCluster, after_seconds: float = AFTER, **options: Any) -> Controller:
    """A controller process as `python -m planb.failover` builds it for the queues chart's defaults (plan A:
    on-demand, its label read from the flavor; ClusterQueue cluster-queue), talking to the fake API server."""
    cfg = Config(after_seconds=after_seconds, cluster_queues=(CLUSTER_QUEUE,), plan_a_flavor=PLAN_A, **options)
    return Controller(cluster, cfg)


def condition(kind: str, status: str, reason: str, message: str, at: str) -> Obj:
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": at,
        "observedGeneration": 1,
    }


def set_condition(wl: Obj, new: Obj) -> None:
    conditions = wl.setdefault("status", {}).setdefault("conditions", [])
    for index, old in enumerate(conditions):
        if old["type"] == new["type"]:
            conditions[index] = new
            return
    conditions.append(new)


#: status.admission.podSetAssignments[].resourceUsage: the pod set's requests times its count.
RESOURCE_USAGE = {
    "head": {"cpu": "2", "memory": "4Gi"},
    "cpu-group": {"cpu": "2", "memory": "4Gi"},
    "tpu-group": {"cpu": "32", "memory": "64Gi", "google.com/tpu": "16"},
    "submitter": {"cpu": "500m", "memory": "200Mi"},
}


def admission(wl: Obj, flavor: str, cluster_queue: str) -> Obj:
    """One resource group (cpu, memory, google.com/tpu): the TPU pod sets get `flavor`, the others default-cpu."""
    assignments = []
    for podset in wl["spec"]["podSets"]:
        usage = RESOURCE_USAGE[podset["name"]]
        chosen = flavor if "google.com/tpu" in usage else "default-cpu"
        assignments.append(
            {
                "name": podset["name"],
                "flavors": dict.fromkeys(usage, chosen),
                "resourceUsage": usage,
                "count": podset["count"],
            }
        )
    return {"clusterQueue": cluster_queue, "podSetAssignments": assignments}


class Kueue:
    """Kueue v0.19.2's writes for the job, in its order; each returns the Workload a watch delivers."""

    def __init__(self, cluster: FakeCluster) -> None:
        self.cluster = cluster
        self.flavor_labels = {f["metadata"]["name"]: f["spec"]["nodeLabels"] for f in RESOURCE_FLAVORS}

    def admit(self, flavor: str = PLAN_A, cluster_queue: str = CLUSTER_QUEUE, at: str = "2026-05-04T09:50:02Z") -> Obj:
        def change(wl: Obj) -> None:
            wl.setdefault("status", {})["admission"] = admission(wl, flavor, cluster_queue)
            message = f"Quota reserved in ClusterQueue {cluster_queue}"
            set_condition(wl, condition("QuotaReserved", "True", "QuotaReserved", message, at))
            evicted = failover.condition(wl, "Evicted")
            if evicted and evicted["status"] == "True":
                previously = "Previously: " + evicted["message"]
                set_condition(wl, condition("Evicted", "False", "QuotaReserved", previously, at))
            if flavor == PLAN_B:
                wl["status"]["admissionChecks"] = [
                    {"name": "dws-prov", "state": "Ready", "message": "", "lastTransitionTime": at}
                ]
            set_condition(wl, condition("Admitted", "True", "Admitted", "The workload is admitted", at))
            not_ready = "Not all pods are ready or succeeded"
            set_condition(wl, condition("PodsReady", "False", "WaitForStart", not_ready, at))

        workload = self.cluster.update("workloads", WL, change)
        if (RAY_API, "rayjobs", NS, JOB) in self.cluster.objects:
            self.cluster.update("rayjobs", JOB, lambda job: self._start(job, workload))
        return workload

    def current(self) -> Obj:
        """The Workload as it is now (a resync's list, or the event of the controller's own patch)."""
        return self.cluster.read("workloads", WL)

    def _start(self, job: Obj, wl: Obj) -> None:
        """RunWithPodSetsInfo: unsuspend, merge each pod set's flavors' nodeLabels into its nodeSelector."""
        job["spec"]["suspend"] = False
        job["status"].update(jobDeploymentStatus="Initializing", jobId=f"{JOB}-x8r2m", rayClusterName=f"{JOB}-h7k2p")
        for podset, template in zip(wl["status"]["admission"]["podSetAssignments"], self._templates(job), strict=True):
            for flavor in set(podset["flavors"].values()):
                template["spec"].setdefault("nodeSelector", {}).update(self.flavor_labels[flavor])

    def evict(
        self, reason: str = PODS_READY_TIMEOUT, message: str = EVICTED_MESSAGE, active: bool = True, cause: str = ""
    ) -> Obj:
        """An eviction; a PodsReadyTimeout one's underlying cause is WaitForStart unless `cause` says otherwise.

        evict.go workloadEvictionStateInc counts each (reason, underlyingCause) in status.schedulingStats."""

        def change(wl: Obj) -> None:
            wl["spec"]["active"] = active
            set_condition(wl, condition("Evicted", "True", reason, message, "2026-05-04T10:00:02Z"))
            underlying = cause or ("WaitForStart" if reason == PODS_READY_TIMEOUT else "")
            if reason == PODS_READY_TIMEOUT:
                count = wl["status"].get("requeueState", {}).get("count", 0) + 1
                wl["status"]["requeueState"] = {"count": count, "requeueAt": "2026-05-04T10:01:02Z"}
            evictions = wl["status"].setdefault("schedulingStats", {}).setdefault("evictions", [])
            entry = next((e for e in evictions if (e["reason"], e["underlyingCause"]) == (reason, underlying)), None)
            if entry is None:
                entry = {"reason": reason, "underlyingCause": underlying, "count": 0}
                evictions.append(entry)
            entry["count"] += 1

        return self.cluster.update("workloads", WL, change)

    def ready(self, at: str = "2026-05-04T09:55:00Z") -> Obj:
        """KubeRay copies the ready RayCluster's status into the RayJob; Kueue's PodsReady turns True (Started)."""
        self.cluster.update("rayjobs", JOB, lambda job: job["status"].update(rayClusterStatus={"state": "ready"}))
        ready = "All pods reached readiness and the workload is running"
        return self.cluster.update(
            "workloads", WL, lambda wl: set_condition(wl, condition("PodsReady", "True", "Started", ready, at))
        )

    def kuberay_retries(self, at: str = "2026-05-04T09:58:00Z") -> Obj:
        """KubeRay v1.6.2 retries the job (Retrying: cluster deleted, status.rayClusterStatus reset, status
        jobDeploymentStatus New, which is the empty string); Kueue's RayJob PodsReady reads that status, so PodsReady
        goes False with WaitForRecovery (jobframework generatePodsReadyCondition)."""

        def retry(job: Obj) -> None:
            job["status"].update(rayClusterStatus={}, rayClusterName="", jobId="", jobDeploymentStatus="")

        self.cluster.update("rayjobs", JOB, retry)
        waiting = "At least one pod has failed, waiting for recovery"
        return self.cluster.update(
            "workloads",
            WL,
            lambda wl: set_condition(wl, condition("PodsReady", "False", "WaitForRecovery", waiting, at)),
        )

    def release(self) -> Obj:
        """The job is suspended (templates restored) and the Workload's quota released."""
        if (RAY_API, "rayjobs", NS, JOB) in self.cluster.objects:
            self.cluster.update("rayjobs", JOB, self._stop)

        def change(wl: Obj) -> None:
            evicted = failover.condition(wl, "Evicted")
            assert evicted is not None
            at = "2026-05-04T10:00:03Z"
            wl["status"].pop("admission", None)
            set_condition(wl, condition("Requeued", "False", evicted["reason"], evicted["message"], at))
            set_condition(wl, condition("QuotaReserved", "False", "Pending", evicted["message"], at))
            set_condition(wl, condition("Admitted", "False", "NoReservation", "The workload has no reservation", at))
            wl["status"]["accumulatedPastExecutionTimeSeconds"] = 601

        return self.cluster.update("workloads", WL, change)

    def _stop(self, job: Obj) -> None:
        """stopJob: suspend, RestorePodSetsInfo (the nodeSelector as in the Workload's pod sets)."""
        job["spec"]["suspend"] = True
        job["status"] = {"jobDeploymentStatus": "Suspended", "startTime": job["status"]["startTime"]}
        wl = self.cluster.read("workloads", WL)
        for podset, template in zip(wl["spec"]["podSets"], self._templates(job), strict=True):
            template["spec"]["nodeSelector"] = copy.deepcopy(podset["template"]["spec"].get("nodeSelector"))

    @staticmethod
    def _templates(job: Obj) -> list[Obj]:
        spec = job["spec"]
        groups = [g["template"] for g in spec["rayClusterSpec"]["workerGroupSpecs"]]
        return [spec["rayClusterSpec"]["headGroupSpec"]["template"], *groups, spec["submitterPodTemplate"]]


Step = Callable[[], Obj]


def timeout(kueue: Kueue, flavor: str = PLAN_A, cluster_queue: str = CLUSTER_QUEUE) -> list[Step]:
    """Admitted on `flavor`, evicted by waitForPodsReady, the quota released."""
    return [functools.partial(kueue.admit, flavor, cluster_queue), kueue.evict, kueue.release]


def watch(controller: Controller, *steps: Step) -> None:
    """One step at a time, the controller reconciling the Workload each delivers (as its watch does)."""
    for step in steps:
        controller.reconcile(step())


class Clock:
    def __init__(self) -> None:
        self.now = "2026-05-04T10:00:02Z"

    def __call__(self) -> str:
        return self.now


def make_cluster(job: Obj | None = None, wl: Obj | None = None) -> FakeCluster:
    cluster = FakeCluster()
    for flavor in RESOURCE_FLAVORS:
        cluster.put("resourceflavors", flavor)
    job = rayjob_object() if job is None else job
    cluster.put("rayjobs", job)
    cluster.put("workloads", workload_object(job) if wl is None else wl)
    return cluster
