"""The terminated status the kubelet writes when a pod's containers exit, for pods a stand-in ends itself.

KWOK runs no container, so a pod whose work the local stack does on this machine (a RayJob's submitter pod,
planb.local.rayhead.submitter; a chart's `helm test` pod, planb.local.rayhead.testpods) is ended by the stand-in
that did the work: phase Succeeded or Failed from the exit code, each container terminated with it, and the
Ready conditions False with reason PodCompleted, as the kubelet's status manager writes them
(kubernetes/kubernetes pkg/kubelet/kubelet_pods.go, generateAPIPodStatus).
"""

from __future__ import annotations

import time

from planb.kube import Kube, Obj


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def finish_pod(kube: Kube, pod: Obj, code: int) -> None:
    """Write the terminated status the kubelet would, from the pod's containers and `code`."""
    now = _now()
    started = ((pod.get("status") or {}).get("startTime")) or now
    statuses = [
        {
            "name": c["name"],
            "image": c.get("image", ""),
            "imageID": "",
            "ready": False,
            "started": False,
            "restartCount": 0,
            "state": {
                "terminated": {
                    "exitCode": code,
                    "reason": "Completed" if code == 0 else "Error",
                    "startedAt": started,
                    "finishedAt": now,
                }
            },
        }
        for c in (pod.get("spec") or {}).get("containers") or []
    ]
    conditions = [
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": started},
        {"type": "Initialized", "status": "True", "lastTransitionTime": started},
        {"type": "Ready", "status": "False", "reason": "PodCompleted", "lastTransitionTime": now},
        {"type": "ContainersReady", "status": "False", "reason": "PodCompleted", "lastTransitionTime": now},
    ]
    meta = pod["metadata"]
    kube.merge_patch(
        f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/status",
        {
            "status": {
                "phase": "Succeeded" if code == 0 else "Failed",
                "conditions": conditions,
                "containerStatuses": statuses,
            }
        },
    )
