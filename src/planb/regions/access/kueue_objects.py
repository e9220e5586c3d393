"""What Kueue and KubeRay write on the objects MultiKueue makes, as the keeper and the dispatcher read it: pure
functions over the API's JSON, shared by both controllers (planb.regions.keeper, planb.regions.dispatcher).

What the keeper deletes in a region, and why no more (docs/regions.md, section 4, "Origin"): only an object whose origin
label carries this manager's own value (the regions playbook gives each manager's Kueue its own ``multiKueue.origin``;
Kueue's default ``multikueue`` would be every manager's) and that Kueue made for a Workload this manager still has under
its MultiKueue check: a copy of the same namespace and name (cloneForCreate,
pkg/controller/admissionchecks/multikueue/workload.go#L1348-L1356), a RayJob of the name of that Workload's RayJob that
names the Workload as its prebuilt one (the adapter creates the remote job under the manager job's own key,
pkg/controller/jobs/ray/ray_multikueue_adapter.go#L188 and #L211-L220; utils.go#L250-L259). A copy whose manager
Workload is gone is Kueue's own GC's to delete, with its job (multikueuecluster.go#L675-L733, run for every
MultiKueueCluster, in a config or not, #L1170-L1189), as Kueue itself deletes only what carries its origin
(pkg/controller/jobframework/utils.go#L292-L340): the keeper waits for it and touches nothing a label alone names. The
label is anyone's to write in a region, the Workload's name the manager's alone.
"""

from __future__ import annotations

from collections.abc import Mapping

from planb.errors import UnreachableError
from planb.kube import Obj
from planb.regions.access.kubeconfig import is_dns_subdomain

#: Kueue's marks on what MultiKueue creates in a region: the origin label (apis/kueue/v1beta2/multikueue_types.go#L29)
#: and the copy's name: an annotation of the same key whenever the WorkloadIdentifierAnnotations gate is on (Beta, on
#: by default since 0.18: pkg/features/kube_features.go#L884-L886) or the name is too long for a label, a label
#: otherwise (pkg/controller/jobframework/utils.go#L231-L259; pkg/controller/constants/constants.go#L33-L39).
ORIGIN = "kueue.x-k8s.io/multikueue-origin"
#: The origin label's value when a manager's Kueue configuration sets no ``multiKueue.origin``
#: (apis/config/v1beta2/defaults.go#L49, #L136): the same for every such manager, so never the keeper's.
DEFAULT_ORIGIN = "multikueue"
#: Per region, why it is (a line naming it first, then the reason and the fix).
Why = Mapping[str, str]
PREBUILT = "kueue.x-k8s.io/prebuilt-workload-name"
#: KubeRay's labels on the RayCluster it makes for a RayJob: the RayJob's name and kind (kuberay v1.6.2
#: ray-operator/controllers/ray/utils/constant.go#L17-L18, set in rayjob_controller.go#L970-L973).
RAY_ORIGIN_NAME, RAY_ORIGIN_CRD = "ray.io/originated-from-cr-name", "ray.io/originated-from-crd"


def condition(obj: Obj, kind: str) -> Obj:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return dict(cond)
    return {}


def is_active(cluster: Obj) -> bool:
    """A MultiKueueCluster Kueue is connected to (its ``Active`` condition True)."""
    return condition(cluster, "Active").get("status") == "True"


def under_check(workload: Obj, check: str) -> bool:
    """A manager Workload of MultiKueue check `check`: one this manager dispatches to its regions."""
    return check in [c.get("name") for c in (workload.get("status") or {}).get("admissionChecks") or []]


def holds_quota_evicted(workload: Obj, check: str) -> bool:
    """A manager Workload under MultiKueue check `check`, evicted, whose quota is still reserved."""
    return (
        under_check(workload, check)
        and condition(workload, "Evicted").get("status") == "True"
        and condition(workload, "QuotaReserved").get("status") == "True"
    )


def _rayjob_reference(workload: Obj) -> Obj:
    for owner in (workload.get("metadata") or {}).get("ownerReferences") or []:
        if owner.get("kind") == "RayJob" and str(owner.get("apiVersion", "")).startswith("ray.io/"):
            return dict(owner)
    return {}


def owner_rayjob(workload: Obj) -> str:
    """The name of the RayJob that owns this Workload, "" if a RayJob does not or the name is not a Kubernetes name:
    the API server does not check an ownerReference's name, and the keeper puts it into a URL (``../`` would reach
    another namespace's RayJob)."""
    name = str(_rayjob_reference(workload).get("name") or "")
    return name if is_dns_subdomain(name) else ""


def owns(workload: Obj, rayjob: Obj) -> bool:
    """Whether `rayjob` is the one this Workload's RayJob ownerReference names by uid, as Kueue writes it
    (ctrl.SetControllerReference, pkg/controller/jobframework/reconciler.go#L1630): a name alone is whatever whoever
    may edit Workloads wrote."""
    uid = _rayjob_reference(workload).get("uid")
    return bool(uid) and (rayjob.get("metadata") or {}).get("uid") == uid


def made_by(obj: Obj | None, origin: str) -> bool:
    """An object carrying this manager's origin label (never true for an empty origin)."""
    return bool(origin) and (((obj or {}).get("metadata") or {}).get("labels") or {}).get(ORIGIN) == origin


def unreadable(region: str, exc: Exception, unanswered: str = "answers Kueue but not planb") -> str:
    """What the keeper and the dispatcher say of a region they could not read: planb's own error (it did not answer,
    no kubeconfig for it: the error's text) or objects of a shape planb cannot read (the exception's type only: its
    text may quote the region's objects, another party's input)."""
    if isinstance(exc, UnreachableError):
        return f"{region} {unanswered}: {exc}"
    return f"{region} answers objects planb cannot read ({type(exc).__name__}); taken as unreadable"
