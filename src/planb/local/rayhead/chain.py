"""The chain KubeRay itself makes, RayJob → its RayCluster → that cluster's head pod, as the Ray head stand-in checks it
before it takes a job for a head or runs one: which RayJob made a RayCluster (`maker_of`), whether a pod is that
cluster's head (`head_refusal`), and the RayJob's head template a launch takes its volumes and env from
(`head_template`). Which heads run and their job tables: planb.local.rayhead.heads.

planb's policy, because a `run` payload executes on this machine: the stand-in acts only for the chain KubeRay
itself made: RayJob → its RayCluster → that cluster's head pod. The first link is checked by the RayCluster's
controller ownerReference and uid (KubeRay v1.6 sets both with controllerutil.SetControllerReference; at tag v1.6.2,
rayjob_controller.go L993 for the RayCluster, L716 for the submitter Job) and the RayJob's ``status.rayClusterName``
(set in the New state, initRayJobStatusIfNeed, before the cluster is made in Initializing). The head pod is the one
the RayCluster's ``status.head.podName`` names (`RayHeads.head_pod`), because labels and ownerReferences are whatever
the pod's creator wrote, a forged controller reference with the cluster's uid included, while only KubeRay writes a
RayCluster's status: it is a subresource (ray-project/kuberay@v1.6.2 ray-operator/apis/ray/v1/raycluster_types.go#L402),
which a user allowed to write RayClusters or pods does not write through them, and KubeRay fills ``head.podName``
from the one head pod it found, none when it finds two (raycluster_controller.go#L1801-L1812,
common/association.go#L179-L196). A pod that is not that head, or a RayCluster that names a RayJob it was not made
by, is refused, naming the link that does not hold (`ChainRefusedError`), and nothing of it is written or run. A
RayJob with ``clusterSelector`` (a RayCluster it did not make) is refused too: planb's choice, KubeRay allows it.
"""

from __future__ import annotations

from dataclasses import dataclass

from planb.errors import PlanbError
from planb.kube import Kube, Obj
from planb.local.rayhead.api_names import api_name, refusal
from planb.local.rayhead.launch import LaunchRefusedError
from planb.local.rayhead.pods import controller_of
from planb.local.rayhead.reads import RAY_GROUP_PATH


class ChainRefusedError(PlanbError):
    """A pod behind a head service that is not the head KubeRay made for its RayCluster."""


@dataclass(frozen=True)
class Maker:
    """Which RayJob made a RayCluster: the RayJob (None when none did, `why` says why not), and whether the
    RayCluster names a RayJob among its owners at all (`claimed`)."""

    rayjob: Obj | None
    why: str = ""
    claimed: bool = False

    @property
    def name(self) -> str | None:
        return None if self.rayjob is None else str(self.rayjob["metadata"]["name"])

    def claim_refusal(self, namespace: str, cluster: str) -> str:
        """Why a RayCluster that names a RayJob among its owners is not taken as that RayJob's ('' when it is, or
        when it names none): a job submitted to it would otherwise run as the RayJob's."""
        if not self.claimed or self.rayjob is not None:
            return ""
        return (
            f"planb's policy: RayCluster {namespace}/{cluster} names a RayJob among its owners, but {self.why}; no "
            "job is taken for it, because a RayJob's jobs run as that RayJob's on this machine"
        )


def cluster_name(head: Obj) -> str:
    """The RayCluster a head pod belongs to, by its ``ray.io/cluster`` label."""
    return str(((head.get("metadata") or {}).get("labels") or {}).get("ray.io/cluster", ""))


def head_refusal(pod: Obj, rc: Obj) -> str:
    """Why `pod`, the pod RayCluster `rc`'s status names as its head, is still not taken ('' when it is): it must
    carry that cluster's head labels and have the cluster as its controller, by name and uid, as KubeRay's own
    head pod does (raycluster_controller.go L1420 at v1.6.2)."""
    meta = pod.get("metadata") or {}
    name = f"pod {meta.get('namespace')}/{meta.get('name')}"
    labels = meta.get("labels") or {}
    cluster = str((rc.get("metadata") or {}).get("name") or "")
    if labels.get("ray.io/node-type") != "head" or labels.get("ray.io/cluster") != cluster:
        return f"{name} is not labelled ray.io/node-type=head, ray.io/cluster={cluster}"
    owner, uid = controller_of(pod), (rc.get("metadata") or {}).get("uid")
    if owner.get("kind") != "RayCluster" or owner.get("name") != cluster or not uid or owner.get("uid") != uid:
        return (
            f"{name}'s controller is {owner.get('kind') or 'none'} {owner.get('name') or ''} uid "
            f"{owner.get('uid') or '-'}, not RayCluster {cluster} uid {uid}"
        )
    return ""


def maker_of(kube: Kube, namespace: str, cluster: str) -> Maker:
    """The RayJob that made the RayCluster, read once (the RayCluster and that RayJob): its controller
    ownerReference names the RayJob by name and uid, and the RayJob's status.rayClusterName is this cluster."""
    rc = kube.get(f"{RAY_GROUP_PATH}/namespaces/{namespace}/rayclusters/{cluster}") or {}
    claimed = any(o.get("kind") == "RayJob" for o in (rc.get("metadata") or {}).get("ownerReferences") or [])
    owner = controller_of(rc)
    if owner.get("kind") != "RayJob":
        return Maker(None, f"RayCluster {namespace}/{cluster} has no RayJob as its controller", claimed)
    name = str(owner.get("name") or "")
    quoted = api_name(name)  # an ownerReference's name is not validated by the API server
    if quoted is None:
        return Maker(None, refusal(f"RayCluster {namespace}/{cluster}'s controller", name), claimed)
    rj = kube.get(f"{RAY_GROUP_PATH}/namespaces/{namespace}/rayjobs/{quoted}") or {}
    uid = (rj.get("metadata") or {}).get("uid")
    if not uid or owner.get("uid") != uid:
        why = (
            f"RayCluster {namespace}/{cluster} names RayJob {name} uid {owner.get('uid') or '-'} as its "
            f"controller, but that RayJob's uid is {uid or '(no such RayJob)'}"
        )
        return Maker(None, why, claimed)
    made = str((rj.get("status") or {}).get("rayClusterName") or "")
    if made != cluster:
        return Maker(None, f"RayJob {namespace}/{name} made RayCluster {made or '(none yet)'}, not {cluster}", claimed)
    return Maker(rj, "", claimed)


def head_template(kube: Kube, head: Obj, rayjob: str) -> Obj:
    """The pod template a launch takes its volumes, mounts and env from: the RayJob's own
    spec.rayClusterSpec.headGroupSpec.template, the RayJob being the one `maker_of` finds made the head's cluster.
    Not the RayCluster's spec.headGroupSpec.template: KubeRay v1.6.2 adopts an existing RayCluster by name
    without checking its owner and never reverts later edits to its spec (ray-operator/controllers/ray/
    rayjob_controller.go#L919-L964), so whoever writes RayClusters would choose what runs. Nor the head pod's own
    spec. The pod is only the liveness and identity check: with no head pod, KubeRay adopts whatever single pod
    carries the head labels and names it in status.head.podName (v1.6.2 common/association.go#L83-L91,
    raycluster_controller.go#L1801-L1812, #L689-L728), so a pod's creator can be named there with a forged
    controller ownerReference. A `LaunchRefusedError` when the RayCluster read now is not the one the head's
    controller names by uid (deleted and made again meanwhile), when `rayjob` did not make it, or when the RayJob
    has no head template."""
    namespace, cluster = str(head["metadata"]["namespace"]), cluster_name(head)
    rc = kube.get(f"{RAY_GROUP_PATH}/namespaces/{namespace}/rayclusters/{cluster}") or {}
    uid, owner = (rc.get("metadata") or {}).get("uid"), controller_of(head).get("uid")
    if not uid or uid != owner:
        raise LaunchRefusedError(
            f"planb's policy: RayCluster {namespace}/{cluster}'s uid is {uid or '(no such RayCluster)'}, not "
            f"{owner or '-'}, the one its head pod was checked against; nothing is run from another cluster"
        )
    maker = maker_of(kube, namespace, cluster)
    if maker.rayjob is None or maker.name != rayjob:
        why = maker.why or f"it was made by RayJob {namespace}/{maker.name}"
        raise LaunchRefusedError(
            f"planb's policy: RayCluster {namespace}/{cluster} is not RayJob {namespace}/{rayjob}'s ({why})"
        )
    spec = maker.rayjob.get("spec") or {}
    template = ((spec.get("rayClusterSpec") or {}).get("headGroupSpec") or {}).get("template") or {}
    if not template:
        raise LaunchRefusedError(
            f"planb's policy: RayJob {namespace}/{rayjob} has no spec.rayClusterSpec.headGroupSpec.template; "
            "nothing is run from the RayCluster's, which anyone who writes RayClusters may have edited"
        )
    return dict(template)
