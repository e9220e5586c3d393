"""How long the regions keeper waits after a region last held a job's RayJob or RayCluster.

KubeRay's ``Suspended`` waits for the RayCluster object only (ray-project/kuberay@v1.6.2
ray-operator/controllers/ray/rayjob_controller.go#L369-L407, #L771-L807); the pods then run their
terminationGracePeriodSeconds, which the chart lets a job raise (job.workers.terminationGracePeriodSeconds, up to
3600, charts/planb/values.schema.json) and during which train.py saves a checkpoint. planb's policy: the keeper waits,
per job, the larger of its --release-after and the job's own largest grace period plus a margin (--release-margin,
RELEASE_MARGIN_S by default), because a job started in a second region sooner would restore from a checkpoint the first
region's workers still write.
"""

from __future__ import annotations

from planb.kube import Obj

#: Seconds past the largest workers' grace period the keeper waits: for the garbage collector to delete the pods of a
#: RayCluster that is gone and their kubelets to see it, and for the keeper's own polls.
RELEASE_MARGIN_S = 30
#: A pod's terminationGracePeriodSeconds when its template sets none (Kubernetes' default, k8s.io/api core/v1
#: DefaultTerminationGracePeriodSeconds).
DEFAULT_GRACE_S = 30


def _templates(cluster_spec: Obj) -> list[Obj]:
    head_group = cluster_spec.get("headGroupSpec")
    head = (head_group.get("template") or {}) if isinstance(head_group, dict) else {}
    workers = [
        (g or {}).get("template") or {} for g in cluster_spec.get("workerGroupSpecs") or [] if isinstance(g, dict)
    ]
    return [t for t in [head, *workers] if isinstance(t, dict)]


def largest_grace(obj: Obj) -> int | None:
    """The largest terminationGracePeriodSeconds of a RayJob's ``spec.rayClusterSpec`` or a RayCluster's ``spec``, head
    and worker templates (a template without one: Kubernetes' 30 s); None when the object names no pod template."""
    spec = obj.get("spec") or {}
    cluster_spec = spec.get("rayClusterSpec") if "rayClusterSpec" in spec else spec
    if not isinstance(cluster_spec, dict):
        return None
    found = None
    for template in _templates(cluster_spec):
        pod = template.get("spec")
        if not isinstance(pod, dict):
            continue
        value = pod.get("terminationGracePeriodSeconds", DEFAULT_GRACE_S)
        grace = value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else DEFAULT_GRACE_S
        found = grace if found is None else max(found, grace)
    return found


def wait_after(objs: list[Obj], release_after: float, margin: float = RELEASE_MARGIN_S) -> float:
    """Seconds to wait after the last look at which a region held any of `objs` (RayJobs or RayClusters of one job or
    one region): release_after, or more when their largest grace period plus `margin` is more."""
    graces = [g for g in (largest_grace(o) for o in objs) if g is not None]
    return max([release_after, *(float(g) + margin for g in graces)])
