"""What the Ray head stand-in reads of a pod or another object: the owner that controls it, whether it runs, and
whether it is in a namespace with given labels (Kubernetes' ownerReferences, phase and label selectors)."""

from __future__ import annotations

from planb.kube import Obj


def controller_of(obj: Obj) -> Obj:
    """The ownerReference marked ``controller: true`` ({} when there is none)."""
    for owner in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if owner.get("controller") is True:
            return dict(owner)
    return {}


def running(pod: Obj) -> bool:
    """Whether ``pod`` is Running and not being deleted."""
    meta, status = pod.get("metadata") or {}, pod.get("status") or {}
    return not meta.get("deletionTimestamp") and status.get("phase") == "Running"


def matches(pod: Obj, namespace: str, selector: dict[str, str]) -> bool:
    """Whether ``pod`` is in ``namespace`` and has every label of ``selector``."""
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    return meta.get("namespace") == namespace and all(labels.get(k) == v for k, v in selector.items())
