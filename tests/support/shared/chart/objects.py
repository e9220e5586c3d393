"""Picking objects out of a `helm template` render: by kind, and every pod a job release makes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def by_kind(objs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objs if o["kind"] == kind]


def release_objects(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The release's own objects, without its `helm test` hooks (templates/tests/), which only `helm test` creates."""
    return [o for o in objs if (o["metadata"].get("annotations") or {}).get("helm.sh/hook") != "test"]


def pod_specs(objs: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(which, pod template metadata, pod spec) of every pod the job release makes or has KubeRay make."""
    (job,) = by_kind(objs, "RayJob")
    spec = job["spec"]
    cluster = spec["rayClusterSpec"]
    yield "submitter", spec["submitterPodTemplate"]["metadata"], spec["submitterPodTemplate"]["spec"]
    yield "head", cluster["headGroupSpec"]["template"]["metadata"], cluster["headGroupSpec"]["template"]["spec"]
    for group in cluster["workerGroupSpecs"]:
        yield group["groupName"], group["template"]["metadata"], group["template"]["spec"]
    for pod in by_kind(objs, "Pod"):
        yield "helm test", pod["metadata"], pod["spec"]
