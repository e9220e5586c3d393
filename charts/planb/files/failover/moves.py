"""What one move writes, built as data with no API call: the RayJob's JSON patch (the move's annotations and its
accelerator workers' affinity, together or not at all), the Workload's pod sets' affinity once Kueue released the
quota, and the Kubernetes Event recorded on the RayJob. The failover controller (planb.failover.controller) sends
them; each patch opens with a ``test`` of the resourceVersion it was built from.
"""

from __future__ import annotations

import copy
from typing import Any

from planb.failover.decisions import (
    RAY_GROUP,
    RAY_VERSION,
    escape,
    excludes,
    now_rfc3339,
    requests_accelerator,
    with_exclusion,
)
from planb.failover.names import AFTER_ANNOTATION, EVENT_REASON, FROM_ANNOTATION, MOVED_ANNOTATION, move_message

Obj = dict[str, Any]


def rayjob_patch(
    rayjob: Obj, label: tuple[str, str], accelerators: tuple[str, ...], plan_a: str, after: float
) -> list[Obj]:
    """The annotation and the workers' affinity in one patch: either both or neither. `label` is plan A's node label,
    `plan_a` its flavor, `after` Kueue's waitForPodsReady timeout in seconds."""
    key, value = label
    meta = rayjob["metadata"]
    groups = copy.deepcopy(rayjob["spec"]["rayClusterSpec"].get("workerGroupSpecs") or [])
    for group in groups:
        spec = group["template"].setdefault("spec", {})
        if requests_accelerator(spec, accelerators):
            spec["affinity"] = with_exclusion(spec, key, value)
    patch = [
        {"op": "test", "path": "/metadata/resourceVersion", "value": meta["resourceVersion"]},
        {"op": "replace", "path": "/spec/rayClusterSpec/workerGroupSpecs", "value": groups},
    ]
    if not meta.get("annotations"):
        patch.append({"op": "add", "path": "/metadata/annotations", "value": {}})
    patch.append({"op": "add", "path": "/metadata/annotations/" + escape(MOVED_ANNOTATION), "value": now_rfc3339()})
    for ann, val in ((FROM_ANNOTATION, plan_a), (AFTER_ANNOTATION, str(after))):
        patch.append({"op": "add", "path": "/metadata/annotations/" + escape(ann), "value": val})
    return patch


def workload_patch(wl: Obj, label: tuple[str, str], accelerators: tuple[str, ...]) -> list[Obj]:
    """The Workload's accelerator pod sets given the affinity that excludes plan A's `label` ([]: each has it)."""
    key, value = label
    patch: list[Obj] = []
    for index, podset in enumerate(wl["spec"]["podSets"]):
        spec = podset["template"].get("spec", {})
        if requests_accelerator(spec, accelerators) and not excludes(spec, key, value):
            patch.append(
                {
                    "op": "add",
                    "path": f"/spec/podSets/{index}/template/spec/affinity",
                    "value": with_exclusion(spec, key, value),
                }
            )
    if patch:
        patch.insert(0, {"op": "test", "path": "/metadata/resourceVersion", "value": wl["metadata"]["resourceVersion"]})
    return patch


def move_event(rayjob: Obj, after_seconds: float) -> Obj:
    """The Event a move records on its RayJob."""
    meta = rayjob["metadata"]
    name, namespace, uid = meta["name"], meta["namespace"], str(meta["uid"])
    stamp = now_rfc3339()
    return {
        "apiVersion": "v1",
        "kind": "Event",
        # One name per RayJob object: a re-created job of the same name gets its own Event.
        "metadata": {"name": f"{name}.planb-moved-to-plan-b.{uid}", "namespace": namespace},
        "involvedObject": {
            "apiVersion": f"{RAY_GROUP}/{RAY_VERSION}",
            "kind": "RayJob",
            "name": name,
            "namespace": namespace,
            "uid": meta["uid"],
        },
        "reason": EVENT_REASON,
        "message": move_message(after_seconds),
        "type": "Normal",
        "source": {"component": "planb-failover"},
        "reportingComponent": "planb-failover",
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }
