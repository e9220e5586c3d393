"""Kueue v0.19.2's objects as the API lists them, for the `planb status` tests: a Workload's condition, a
concurrent-ladder variant Workload (planb.status.variants), and the Events Kueue records on a Workload
(QuotaReserved, Admitted, evictions) through events.k8s.io, as the core API lists them (eventTime)."""

from __future__ import annotations

from typing import Any

from planb.status import variants

Obj = dict[str, Any]


def condition(kind: str, status: str, at: str, reason: str = "") -> Obj:
    return {"type": kind, "status": status, "lastTransitionTime": at, "reason": reason or kind, "message": ""}


def variant(name: str, flavor: str, parent: str, conds: list[Obj], active: bool = True) -> Obj:
    """The variant Workload `name` of the parent Workload `parent`, for `flavor`."""
    return {
        "metadata": {
            "namespace": "default",
            "name": name,
            "creationTimestamp": "2026-11-29T10:00:01Z",
            "annotations": {variants.FLAVOR_ANNOTATION: flavor},
            "ownerReferences": [{"kind": "Workload", "name": parent}],
        },
        "spec": {"active": active},
        "status": {"conditions": conds},
    }


def event(reason: str, workload: str, at: str, message: str, **extra: Any) -> Obj:
    return {
        "metadata": {"namespace": "default", "name": f"{workload}.{reason}.{at}"},
        "reason": reason,
        "involvedObject": {"kind": "Workload", "namespace": "default", "name": workload},
        "eventTime": at,
        "message": message,
        **extra,
    }


def reserved(workload: str, at: str, waited: int) -> Obj:
    return event(
        "QuotaReserved",
        workload,
        at,
        f"Quota reserved in ClusterQueue cluster-queue, wait time since queued was {waited}s",
    )


def admitted(workload: str, at: str, checks: int) -> Obj:
    return event(
        "Admitted", workload, at, f"Admitted by ClusterQueue cluster-queue, wait time since reservation was {checks}s"
    )
