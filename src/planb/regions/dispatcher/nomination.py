"""Advice-ordered dispatch as Kueue's External MultiKueue dispatcher: the name the manager's Kueue is given
(``DISPATCHER``), the zones an advice request names (``advice_zones``), and what Kueue does and planb's policy is
(below). The functions over the API's JSON live with their step: ``planb.regions.dispatcher.reads`` reads the
Workloads and ClusterQueues (``awaits_nomination``, ``job_shape``, ``ladder_rungs``), ``decide`` decides
(``copy_outcome``, ``nominate``, ``adopt``) and ``writes`` writes (``admission_apply``);
``planb.regions.dispatcher.offer_order`` holds the policy.

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
  manager ``kueue-admission``, the admission part of the status copied as read (``writes.admission_apply``), the
  resourceVersion in it so a Workload changed meanwhile answers 409 and is tried at the next tick; because it needs no
  Alpha gate and no MutatingAdmissionPolicy, and Kueue's next apply then clears the list as it clears its own.
* MultiKueue nominates regions, not rungs; each region's Kueue walks its own ladder. A region is nominated at its
  best pair's place in the policy's order (``offer_plan.regions_in_order``), and stays nominated while any of its
  pairs asked waits, because a request still queued past its bound keeps its place (the first grant wins, as in the
  race).
* A pair's outcome is read off the region's copy (``decide.copy_outcome``): a check Retry or Rejected, a copy
  deactivated, a copy evicted more often than when asked, or a copy Kueue re-created (another uid) is GKE's no
  (``FAILED``), and the region leaves the nomination until the policy asks it again (Kueue then deletes that copy
  and its request); the manager's ``clusterName`` naming the region is the grant (``GRANTED``), on the rung of the
  copy's admission; every other pair asked is ``WITHDRAWN`` then, as when the job goes before any grant.
"""

from __future__ import annotations

from planb.catalog import zones
from planb.catalog.profiles import PROFILES
from planb.regions.dispatcher.ledger import Key

#: The ``multiKueue.dispatcherName`` the manager's Kueue is given so that the keeper nominates (any name but Kueue's
#: two is External).
DISPATCHER = "planb.dev/advice-ordered"
ALL_AT_ONCE = "kueue.x-k8s.io/multikueue-dispatcher-all-at-once"
INCREMENTAL = "kueue.x-k8s.io/multikueue-dispatcher-incremental"


def advice_zones(key: Key) -> list[str]:
    """The zones of ``key``'s region where Google offers its machine type (the catalog), for the advice request."""
    machine_type = key.shape.partition(":")[0]
    generations = {p.generation for p in PROFILES.values() if p.machine_type == machine_type}
    found = {z for g in generations for z in zones.zones(g) if zones.region_of(z) == key.region}
    return sorted(found)
