"""Advice-ordered dispatch as Kueue's External MultiKueue dispatcher: what the keeper decides, pure functions over the
API's JSON (``planb.regions.dispatcher.reads`` reads, ``decide`` decides and ``writes`` writes;
``planb.regions.dispatcher.offer_order`` holds the policy).

**Kueue** (v0.19.2, what its source does):

* Any ``multiKueue.dispatcherName`` other than its two built-in names is an External dispatcher: the workload
  reconciler takes ``status.nominatedClusterNames`` as it finds it, creates a copy on each nominated cluster that
  lacks one and deletes the copies of clusters no longer nominated
  (``kubernetes-sigs/kueue@v0.19.2 pkg/controller/admissionchecks/multikueue/workload.go#L904-L959``); the built-in
  names are ``kueue.x-k8s.io/multikueue-dispatcher-all-at-once`` (the default) and
  ``kueue.x-k8s.io/multikueue-dispatcher-incremental``
  (``kubernetes-sigs/kueue@v0.19.2 apis/config/v1beta2/configuration_types.go#L352-L356``, ``#L392-L400``).
* It nominates only while the Workload's MultiKueue check is Pending and no ``clusterName`` is set
  (``kubernetes-sigs/kueue@v0.19.2 pkg/workload/workload.go#L1571-L1579``), the manager's quota reserved and the
  Workload not finished (``workload.go#L380-L394``), and every other admission check Ready (``workload.go#L858-L862``).
* The winner is still the copy Admitted first (``workload.go#L538-L540``); Kueue then sets ``clusterName``, which
  must be one of the nominated names (``kubernetes-sigs/kueue@v0.19.2 pkg/webhooks/workload_webhook.go#L501-L515``),
  and clears ``nominatedClusterNames`` in the same apply (``workload.go#L1219-L1257``); the two fields are mutually
  exclusive (``kubernetes-sigs/kueue@v0.19.2 apis/kueue/v1beta2/workload_types.go#L613-L614``).
* Kueue writes that status by server-side apply as the field manager ``kueue-admission``
  (``kubernetes-sigs/kueue@v0.19.2 pkg/workload/patching/patching.go#L241-L293``; ``pkg/constants/constants.go#L29``),
  its body the Workload's identity, labels and annotations and the whole admission part of its status
  (``patching.go#L50-L75``, ``#L105-L154``). Kueue's page: an external writer of ``nominatedClusterNames`` must use
  that field manager (or an Alpha gate, or a MutatingAdmissionPolicy), "Without this, Kueue is not able to admit"
  (``kubernetes-sigs/kueue@v0.19.2 site/content/en/docs/concepts/multikueue.md#L160-L174``): a list another manager
  owns survives Kueue's apply, and the CEL rule then refuses ``clusterName``.

**planb's policy** (why each choice):

* The keeper writes ``nominatedClusterNames`` with the apply Kueue's own Incremental dispatcher sends
  (``kubernetes-sigs/kueue@v0.19.2 pkg/controller/workloaddispatcher/incrementaldispatcher.go#L155-L162``): field
  manager ``kueue-admission``, the admission part of the status copied as read (``admission_apply``), the
  resourceVersion in it so a Workload changed meanwhile answers 409 and is tried at the next tick; because it needs no
  Alpha gate and no MutatingAdmissionPolicy, and Kueue's next apply then clears the list as it clears its own.
* MultiKueue nominates regions, not rungs; each region's Kueue walks its own ladder. A region is nominated at its
  best pair's place in the policy's order (``regions_in_order``), and stays nominated while any of its pairs asked
  waits, because a request still queued past its bound keeps its place (the first grant wins, as in the race).
* A pair's outcome is read off the region's copy (``copy_outcome``): a check Retry or Rejected, a copy deactivated, a
  copy evicted more often than when asked, or a copy Kueue re-created (another uid) is GKE's no (``FAILED``), and the
  region leaves the nomination until the policy asks it again (Kueue then deletes that copy and its request); the
  manager's ``clusterName`` naming the region is the grant (``GRANTED``), on the rung of the copy's admission; every
  other pair asked is ``WITHDRAWN`` then, as when the job goes before any grant.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from planb.catalog import gpu, tpu, zones
from planb.catalog.profiles import PROFILES
from planb.kube import Obj
from planb.regions.access.kueue_objects import condition
from planb.regions.dispatcher.ledger import FAILED, Key
from planb.regions.dispatcher.offer_order import Attempt, OfferPlan

#: The ``multiKueue.dispatcherName`` the manager's Kueue is given so that the keeper nominates (any name but Kueue's
#: two is External).
DISPATCHER = "planb.dev/advice-ordered"
ALL_AT_ONCE = "kueue.x-k8s.io/multikueue-dispatcher-all-at-once"
INCREMENTAL = "kueue.x-k8s.io/multikueue-dispatcher-incremental"
#: Kueue's field manager for a Workload's admission status (pkg/constants/constants.go#L29: KueueName + "-admission").
FIELD_MANAGER = "kueue-admission"
#: The conditions Kueue's admission apply carries (patching.go#L36-L48), each copied when present.
ADMISSION_CONDITIONS = (
    "QuotaReserved",
    "BlockedOnPreemptionGates",
    "Evicted",
    "Admitted",
    "Preempted",
    "Requeued",
    "DeactivationTarget",
    "Finished",
    "PodsReady",
)
#: The rung of a region whose ladder planb could not read (its ClusterQueue): the region's ladder as a whole.
LADDER = "ladder"
#: The resources a rung's flavor is chosen for (the job's workers; the head's CPU flavor is no rung).
ACCELERATORS = ("google.com/tpu", "nvidia.com/gpu")


def mk_check(workload: Obj, check: str) -> Obj:
    """The Workload's state of the MultiKueue admission check ``check`` ({} without one)."""
    for state in (workload.get("status") or {}).get("admissionChecks") or []:
        if state.get("name") == check:
            return dict(state)
    return {}


def awaits_nomination(workload: Obj, check: str) -> bool:
    """Whether Kueue would sync copies to nominated clusters now (the module's docstring, Kueue's conditions)."""
    status = workload.get("status") or {}
    if workload["metadata"].get("deletionTimestamp") or status.get("clusterName"):
        return False
    if mk_check(workload, check).get("state") != "Pending":
        return False
    if condition(workload, "QuotaReserved").get("status") != "True":
        return False
    if condition(workload, "Finished").get("status") == "True":
        return False
    others = [s for s in status.get("admissionChecks") or [] if s.get("name") != check]
    return all(s.get("state") == "Ready" for s in others)


def job_shape(workload: Obj) -> str:
    """The job's shape as the ledger keys it, ``machine-type:count`` (``ct6e-standard-4t:4``): the first PodSet that
    selects a catalog TPU or GPU profile by GKE's accelerator labels, its count the VMs asked; "" when none does."""
    for pod_set in (workload.get("spec") or {}).get("podSets") or []:
        selector = ((pod_set.get("template") or {}).get("spec") or {}).get("nodeSelector") or {}
        shape = {k: str(v) for k, v in selector.items() if k in (tpu.ACCELERATOR_LABEL, tpu.TOPOLOGY_LABEL)}
        shape |= {k: str(v) for k, v in selector.items() if k == gpu.ACCELERATOR_LABEL}
        if not shape:
            continue
        found = [p for p in PROFILES.values() if p.node_selector == shape]
        if found:
            return f"{found[0].machine_type}:{int(pod_set.get('count') or 1)}"
    return ""


def advice_zones(key: Key) -> list[str]:
    """The zones of ``key``'s region where Google offers its machine type (the catalog), for the advice request."""
    machine_type = key.shape.partition(":")[0]
    generations = {p.generation for p in PROFILES.values() if p.machine_type == machine_type}
    found = {z for g in generations for z in zones.zones(g) if zones.region_of(z) == key.region}
    return sorted(found)


def ladder_rungs(cluster_queue: Obj) -> list[str]:
    """A region's rungs for the job's accelerators: its ClusterQueue's flavors in order (Kueue tries them top to
    bottom) that hold a quota of a TPU or GPU resource; planb names each flavor after its plan. The queues chart's CPU
    flavor, first in the same group for the Ray head, holds 0 of the accelerator and is no rung."""
    rungs: list[str] = []
    for group in (cluster_queue.get("spec") or {}).get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            quotas = [r.get("nominalQuota") for r in flavor.get("resources") or [] if r.get("name") in ACCELERATORS]
            if flavor.get("name") and flavor["name"] not in rungs and any(not _zero(q) for q in quotas):
                rungs.append(str(flavor["name"]))
    return rungs


def _zero(quantity: object) -> bool:
    try:
        return float(str(quantity)) == 0.0
    except ValueError:
        return False


def admitted_rung(copy: Obj | None) -> str:
    """The rung (flavor) a region's copy reserved its accelerators on, "" before that."""
    admission = ((copy or {}).get("status") or {}).get("admission") or {}
    for assignment in admission.get("podSetAssignments") or []:
        for resource, flavor in (assignment.get("flavors") or {}).items():
            if resource in ACCELERATORS:
                return str(flavor)
    return ""


def evictions(copy: Obj | None) -> int:
    """How often the copy was evicted in its region (Kueue's schedulingStats, a counter that outlives a Retry)."""
    stats = ((copy or {}).get("status") or {}).get("schedulingStats") or {}
    return sum(int(e.get("count") or 0) for e in stats.get("evictions") or [])


@dataclass(frozen=True)
class Seen:
    """A region's copy as the keeper first saw it after asking: its uid and evictions then ("" and 0: no copy yet)."""

    uid: str = ""
    evictions: int = 0


def admitted(copy: Obj | None) -> bool:
    """Whether the copy's Admitted condition is True."""
    conditions = ((copy or {}).get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Admitted" and c.get("status") == "True" for c in conditions)


def copy_outcome(copy: Obj | None, seen: Seen) -> tuple[str, str]:
    """Whether a region's copy says GKE's no: (``FAILED``, why) or ("", "") while it waits (planb's policy, above).
    An Admitted copy is never a failure, whatever its uid or evictions: one evicted from a rung and admitted on the
    next between two looks is the one Kueue converges on (kueue@v0.19.2
    pkg/controller/admissionchecks/multikueue/workload.go#L571-L635), and the clusterName it then sets must be among
    the nominated regions (pkg/webhooks/workload_webhook.go#L501-L515), so its region is never dropped."""
    if copy is None or admitted(copy):
        return "", ""
    uid = str(copy["metadata"].get("uid") or "")
    status = copy.get("status") or {}
    for state in status.get("admissionChecks") or []:
        if state.get("state") in ("Retry", "Rejected"):
            return FAILED, f"check {state.get('name')} {state.get('state')}: {state.get('message', '')}".rstrip(": ")
    if (copy.get("spec") or {}).get("active") is False:
        return FAILED, "the copy was deactivated in its region"
    if seen.uid and uid and uid != seen.uid:
        return FAILED, "Kueue made a new copy: the one asked failed"
    if seen.uid and evictions(copy) > seen.evictions:
        return FAILED, "the copy was evicted in its region"
    return "", ""


def regions_in_order(plan: OfferPlan, keys: Sequence[Key]) -> list[str]:
    """The regions of ``keys``, each once, in the plan's order (a region at its best pair's place)."""
    wanted = set(keys)
    return list(dict.fromkeys(k.region for k in plan.keys if k in wanted))


def waiting(attempts: Sequence[Attempt]) -> list[Key]:
    """The pairs asked whose requests still wait."""
    return [a.key for a in attempts if a.failed_s is None]


def nominate(
    plan: OfferPlan, elapsed_s: float, attempts: Sequence[Attempt], full: Collection[Key] = ()
) -> tuple[list[Attempt], list[str], float]:
    """What to ask ``elapsed_s`` after the job's plan began: the attempts with the pairs due added, the regions to
    nominate (every region with a pair waiting, in the plan's order), and when to look again (seconds after the start;
    inf: only an answer changes anything). ``full``: the reservation pairs read full now, left unasked."""
    due, wake = plan.due(elapsed_s, attempts, full)
    grown = [*attempts, *(Attempt(k, elapsed_s) for k in due)]
    return grown, regions_in_order(plan, waiting(grown)), wake


def adopt(plan: OfferPlan, nominated: Sequence[str]) -> list[Attempt]:
    """The attempts a new plan starts from when regions are already nominated (a keeper restarted mid-dispatch): each
    such region's first pair in the plan's order, asked now, so its copy and its request keep their place."""
    keys = {}
    for key in plan.keys:
        if key.region in nominated and key.region not in keys:
            keys[key.region] = key
    return [Attempt(keys[r], 0.0) for r in nominated if r in keys]


def failed(attempts: Sequence[Attempt], region: str, rung: str, at_s: float) -> tuple[list[Attempt], list[Attempt]]:
    """The attempts with the waiting pairs of ``region`` ended as failures at ``at_s`` (those of ``rung`` only, when
    the copy reserved on a rung one of them names), and the attempts so ended."""
    mine = [a.key for a in attempts if a.failed_s is None and a.key.region == region]
    if any(k.rung == rung for k in mine):
        mine = [k for k in mine if k.rung == rung]
    out, ended = [], []
    for attempt in attempts:
        if attempt.failed_s is None and attempt.key in mine:
            attempt = Attempt(attempt.key, attempt.asked_s, at_s)
            ended.append(attempt)
        out.append(attempt)
    return out, ended


def granted_key(attempts: Sequence[Attempt], region: str, rung: str, shape: str) -> Key:
    """The pair a grant in ``region`` on ``rung`` goes to: the waiting pair of that rung, else the region's first
    waiting pair, else the pair the copy's admission names."""
    mine = [a.key for a in attempts if a.failed_s is None and a.key.region == region]
    for key in mine:
        if key.rung == rung:
            return key
    return mine[0] if mine else Key(region, rung or LADDER, shape)


def admission_apply(workload: Obj, nominated: Sequence[str], api_version: str = "kueue.x-k8s.io/v1beta2") -> Obj:
    """The server-side apply body Kueue's ``PatchAdmissionStatus`` would send (patching.go#L50-L75, #L105-L154) with
    ``nominatedClusterNames`` set to ``nominated``: identity, resourceVersion, labels and annotations, and the admission
    part of the status as read, so the apply as ``kueue-admission`` takes nothing of Kueue's away."""
    meta = workload["metadata"]
    status = workload.get("status") or {}
    # Never a null: the resourceVersion is what makes the apply conditional (a custom resource's /status drops the
    # uid: tests/integration/regions/test_status_preconditions.py), and a null would only clear a field.
    keys = ("name", "namespace", "uid", "generation", "resourceVersion")
    body_meta: Obj = {k: meta[k] for k in keys if meta.get(k) not in (None, "")}
    for key in ("labels", "annotations"):
        if meta.get(key):
            body_meta[key] = dict(meta[key])
    out: Obj = {}
    if status.get("admission"):
        out["admission"] = status["admission"]
    elif status.get("resourceRequests"):
        out["resourceRequests"] = status["resourceRequests"]
    requeue = status.get("requeueState") or {}
    if requeue.get("count") is not None or requeue.get("requeueAt") is not None:
        out["requeueState"] = requeue
    conditions = [c for c in status.get("conditions") or [] if c.get("type") in ADMISSION_CONDITIONS]
    if conditions:
        out["conditions"] = conditions
    for key in ("accumulatedPastExecutionTimeSeconds", "clusterName", "unhealthyNodes", "preemptionGates"):
        if status.get(key) not in (None, [], ""):
            out[key] = status[key]
    stats = (status.get("schedulingStats") or {}).get("evictions")
    if stats:
        out["schedulingStats"] = {"evictions": stats}
    if status.get("admissionChecks"):
        out["admissionChecks"] = status["admissionChecks"]
    if nominated:
        out["nominatedClusterNames"] = list(nominated)
    return {"apiVersion": api_version, "kind": "Workload", "metadata": body_meta, "status": out}


def rewritten(written: Sequence[str] | None, current: Sequence[str]) -> bool:
    """Whether another writer replaced the keeper's last nomination: a list not empty that differs from what the
    keeper wrote. Kueue clears the list itself at admission and eviction; a different one is another dispatcher's,
    AllAtOnce's when the manager's Kueue is not given planb's name (workload.go#L912-L925)."""
    return written is not None and bool(current) and list(current) != list(written)


def nominated_now(workload: Obj) -> list[str]:
    return [str(n) for n in (workload.get("status") or {}).get("nominatedClusterNames") or []]
