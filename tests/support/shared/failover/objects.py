"""The objects of the failover controller's unit tests, shaped as Kueue v0.19.2 and KubeRay v1.6.2 write them."""

from __future__ import annotations

import copy
from typing import Any

import yaml

from planb.failover.controller import (
    move_message,
)

Obj = dict[str, Any]

KUEUE_API = "kueue.x-k8s.io/v1beta2"
RAY_API = "ray.io/v1"
NS = "default"
JOB = "job-1"
JOB_UID = "5d0c2a8e-7f41-4c3b-9a57-2f6b8e0d41c9"
WL = "rayjob-job-1-8c6f2"
WL_UID = "b1e7d3a0-3c55-4f0e-8d8e-6a1f0c9b7e24"
CLUSTER_QUEUE = "cluster-queue"
PLAN_A, PLAN_B = "on-demand", "dws"
#: planb_failover_after_minutes: 10 (Kueue's waitForPodsReady timeout).
AFTER = 600.0
PODS_READY_TIMEOUT = "PodsReadyTimeout"
EVICTED_MESSAGE = f"Exceeded the PodsReady timeout {NS}/{WL}"
#: What the controller adds to an accelerator pod template: never plan A's nodes.
NOT_ON_PLAN_A: Obj = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "planb.dev/plan", "operator": "NotIn", "values": ["on-demand"]}]}
            ]
        }
    }
}

# ---------------------------------------------------------------------------------------- objects

#: The queues chart's ResourceFlavors (tests/golden/chart-queues-defaults.yaml), as the API returns them.
RESOURCE_FLAVORS: list[Obj] = list(
    yaml.safe_load_all("""
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: default-cpu
  uid: 0e5b8a7c-11d2-4c4e-9d0a-1f3c5e7a9b01
  resourceVersion: "812"
  generation: 1
  creationTimestamp: "2026-05-04T09:40:11Z"
  labels: {app.kubernetes.io/managed-by: Helm, app.kubernetes.io/component: queues}
  annotations: {helm.sh/resource-policy: keep, meta.helm.sh/release-name: queues}
  finalizers: [kueue.x-k8s.io/resource-in-use]
spec:
  nodeLabels: {cloud.google.com/gke-nodepool: default-pool}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: on-demand
  uid: 2b7d9c1e-33f4-4e6a-8b2c-3d5e7f9a1b02
  resourceVersion: "813"
  generation: 1
  creationTimestamp: "2026-05-04T09:40:11Z"
  labels: {app.kubernetes.io/managed-by: Helm, app.kubernetes.io/component: queues}
  annotations: {helm.sh/resource-policy: keep, meta.helm.sh/release-name: queues}
  finalizers: [kueue.x-k8s.io/resource-in-use]
spec:
  nodeLabels: {planb.dev/plan: on-demand}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: dws
  uid: 4d9f1e3a-55b6-4a8c-8d4e-5f7a9b1c3d03
  resourceVersion: "814"
  generation: 1
  creationTimestamp: "2026-05-04T09:40:11Z"
  labels: {app.kubernetes.io/managed-by: Helm, app.kubernetes.io/component: queues}
  annotations: {helm.sh/resource-policy: keep, meta.helm.sh/release-name: queues}
  finalizers: [kueue.x-k8s.io/resource-in-use]
spec:
  nodeLabels: {planb.dev/plan: dws}
""")
)

#: The job chart's RayJob (tests/golden/chart-job-defaults.yaml, env trimmed) once KubeRay v1.6.2 and
#: Kueue's webhook have seen it: suspended until Kueue admits its Workload.
RAYJOB_YAML = f"""
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: {JOB}
  namespace: {NS}
  uid: {JOB_UID}
  resourceVersion: "1207"
  generation: 1
  creationTimestamp: "2026-05-04T09:50:00Z"
  labels:
    app.kubernetes.io/instance: job-1
    app.kubernetes.io/managed-by: Helm
    app.kubernetes.io/name: planb
    app.kubernetes.io/component: job
    planb.dev/profile: tpu-v6e-4x4
    kueue.x-k8s.io/queue-name: user-queue
  annotations:
    meta.helm.sh/release-name: job-1
    meta.helm.sh/release-namespace: default
    provreq.kueue.x-k8s.io/maxRunDurationSeconds: "604800"
  finalizers: [ray.io/rayjob-finalizer]
spec:
  suspend: true
  shutdownAfterJobFinishes: true
  entrypoint: python /app/train.py
  submissionMode: K8sJobMode
  submitterPodTemplate:
    metadata:
      labels: {{app.kubernetes.io/instance: job-1, app.kubernetes.io/name: planb}}
    spec:
      restartPolicy: Never
      nodeSelector: {{cloud.google.com/gke-nodepool: default-pool}}
      containers:
      - name: ray-job-submitter
        image: rayproject/ray:2.53.0-py311
        resources:
          requests: {{cpu: 500m, memory: 200Mi}}
          limits: {{cpu: 500m, memory: 200Mi}}
  rayClusterSpec:
    rayVersion: "2.53.0"
    authOptions: {{mode: token}}
    headGroupSpec:
      rayStartParams: {{}}
      template:
        metadata:
          labels: {{app.kubernetes.io/instance: job-1, app.kubernetes.io/name: planb}}
        spec:
          nodeSelector: {{cloud.google.com/gke-nodepool: default-pool}}
          containers:
          - name: ray-head
            image: rayproject/ray:2.53.0-py311
            ports:
            - {{containerPort: 6379, name: gcs-server}}
            - {{containerPort: 8265, name: dashboard}}
            - {{containerPort: 10001, name: client}}
            resources:
              requests: {{cpu: "2", memory: 4Gi}}
              limits: {{cpu: "2", memory: 4Gi}}
    workerGroupSpecs:
    - groupName: tpu-group
      replicas: 1
      minReplicas: 1
      maxReplicas: 1
      numOfHosts: 4
      rayStartParams: {{}}
      template:
        metadata:
          labels: {{app.kubernetes.io/instance: job-1, app.kubernetes.io/name: planb}}
        spec:
          nodeSelector:
            cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice
            cloud.google.com/gke-tpu-topology: 4x4
          tolerations:
          - {{effect: NoSchedule, key: google.com/tpu, operator: Exists}}
          - {{effect: NoSchedule, key: cloud.google.com/gke-queued, operator: Exists}}
          containers:
          - name: ray-worker
            image: rayproject/ray:2.53.0-py311
            env:
            - {{name: PLANB_NUM_WORKERS, value: "4"}}
            - {{name: PLANB_ACCELERATOR, value: tpu}}
            resources:
              requests: {{cpu: "8", memory: 16Gi, google.com/tpu: "4"}}
              limits: {{cpu: "8", memory: 16Gi, google.com/tpu: "4"}}
status:
  jobDeploymentStatus: Suspended
  startTime: "2026-05-04T09:50:01Z"
"""

#: A CPU-only worker group (no accelerator): never steered.
CPU_GROUP_YAML = """
groupName: cpu-group
replicas: 2
minReplicas: 2
maxReplicas: 2
numOfHosts: 1
rayStartParams: {}
template:
  spec:
    nodeSelector: {cloud.google.com/gke-nodepool: default-pool}
    containers:
    - name: ray-worker
      image: rayproject/ray:2.53.0-py311
      resources:
        requests: {cpu: "1", memory: 2Gi}
        limits: {cpu: "1", memory: 2Gi}
"""


def rayjob_object(annotations: bool = True, cpu_group: bool = False) -> Obj:
    job: Obj = yaml.safe_load(RAYJOB_YAML)
    if not annotations:
        del job["metadata"]["annotations"]
    if cpu_group:
        job["spec"]["rayClusterSpec"]["workerGroupSpecs"].insert(0, yaml.safe_load(CPU_GROUP_YAML))
    return job


def pod_sets(job: Obj) -> list[Obj]:
    """Kueue's pod sets of a RayJob: head, one per worker group, then the submitter (K8sJobMode)."""
    spec = job["spec"]
    sets = [
        {"name": "head", "count": 1, "template": copy.deepcopy(spec["rayClusterSpec"]["headGroupSpec"]["template"])}
    ]
    for group in spec["rayClusterSpec"]["workerGroupSpecs"]:
        count = group["replicas"] * group.get("numOfHosts", 1)
        sets.append({"name": group["groupName"], "count": count, "template": copy.deepcopy(group["template"])})
    sets.append({"name": "submitter", "count": 1, "template": copy.deepcopy(spec["submitterPodTemplate"])})
    return sets


def workload_object(job: Obj, owner: Obj | None = None) -> Obj:
    """The Workload Kueue v0.19.2 creates for the RayJob, pending (no conditions yet)."""
    if owner is None:
        owner = {"apiVersion": RAY_API, "kind": "RayJob", "name": JOB, "uid": JOB_UID}
    return {
        "apiVersion": KUEUE_API,
        "kind": "Workload",
        "metadata": {
            "name": WL,
            "namespace": NS,
            "uid": WL_UID,
            "resourceVersion": "1209",
            "generation": 1,
            "creationTimestamp": "2026-05-04T09:50:00Z",
            "labels": {"kueue.x-k8s.io/job-uid": owner.get("uid", "")},
            "finalizers": ["kueue.x-k8s.io/resource-in-use"],
            "ownerReferences": [{**owner, "controller": True, "blockOwnerDeletion": True}],
        },
        "spec": {"active": True, "queueName": "user-queue", "priority": 0, "podSets": pod_sets(job)},
    }


def moved_rayjob_patch(job_as_read: Obj, moved_at: str) -> list[Obj]:
    groups = copy.deepcopy(job_as_read["spec"]["rayClusterSpec"]["workerGroupSpecs"])
    for group in groups:
        if "google.com/tpu" in group["template"]["spec"]["containers"][0]["resources"]["requests"]:
            group["template"]["spec"]["affinity"] = NOT_ON_PLAN_A
    return [
        {"op": "test", "path": "/metadata/resourceVersion", "value": job_as_read["metadata"]["resourceVersion"]},
        {"op": "replace", "path": "/spec/rayClusterSpec/workerGroupSpecs", "value": groups},
        {"op": "add", "path": "/metadata/annotations/planb.dev~1failover-moved-at", "value": moved_at},
        {"op": "add", "path": "/metadata/annotations/planb.dev~1failover-from", "value": "on-demand"},
        {"op": "add", "path": "/metadata/annotations/planb.dev~1failover-after", "value": "600.0"},
    ]


def expected_event(stamp: str, after_seconds: float = AFTER) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{JOB}.planb-moved-to-plan-b.{JOB_UID}", "namespace": NS},
        "involvedObject": {"apiVersion": RAY_API, "kind": "RayJob", "name": JOB, "namespace": NS, "uid": JOB_UID},
        "reason": "MovedToPlanB",
        "message": move_message(after_seconds),
        "type": "Normal",
        "source": {"component": "planb-failover"},
        "reportingComponent": "planb-failover",
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }
