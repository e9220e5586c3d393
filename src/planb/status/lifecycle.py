"""What `planb status` says about a job's way through Kueue and DWS: phase times, waits, retries, deactivation.

It reads what Kueue v0.19.2 writes (its pkg/controller/admissionchecks/provisioning and
pkg/controller/core/workload_controller.go):

* ProvisioningRequests are named ``<workload>-<check>-<attempt>``; a Failed request, or one whose
  booking expired before the Workload was admitted, is retried while ``attempt <=
  retryStrategy.backoffLimitCount`` of the check's ProvisioningRequestConfig (Kueue's default 3),
  so a workload has ``backoffLimitCount + 1`` attempts in all. Kueue keeps the count of retries in
  the Workload's ``status.admissionChecks[].retryCount``.
* A check Kueue rejects (retries exhausted, or CapacityRevoked while the workload runs) makes
  Kueue deactivate the Workload: ``spec.active: false`` and ``Evicted`` with reason
  ``DeactivatedDueToAdmissionCheck`` and the check's message. It stays so until someone sets
  ``spec.active`` back to true (https://kueue.sigs.k8s.io/docs/concepts/workload/#active).
* GKE's autoscaler keeps a request ``Accepted=False`` until it chooses a node pool for it, with its
  reason when no pool takes it, and fails it with that reason two minutes after its creation
  (GoogleCloudPlatform/cluster-autoscaler pkg/provisioningrequests/scaleup/orchestrator.go,
  planb.local.capacity.scaleup). Kueue reports nothing for an Accepted=False request, so the status shows
  the request's own condition. Once accepted, the request's ``Provisioned=False`` condition says why it
  waits; Kueue copies it into the check's message. GKE passes Compute Engine's waiting message through, and the
  autoscaler's sources show only "Expected time is indefinite." there, so the status adds planb's own figure, how
  long the request has waited ("Run a large-scale workload with flex-start with queued provisioning",
  https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from planb.kube import Obj
from planb.kube_objects import conditions as _conditions
from planb.kube_objects import parse_time, since
from planb.status.durations import duration

#: A pending Workload's reason before Kueue has written one.
WAITING = "waiting for Kueue"
#: GKE's words for capacity it takes back at the end of the run duration (the CapacityRevoked message).
REVOKED_WORDS = "was reclaimed"
_REJECTED = re.compile(r'Rejected state: "(?P<check>[^"]+)" \((?P<message>.*)\)$', re.DOTALL)


def attempt_of(request: str, workload: str, check: str) -> int | None:
    """The attempt number Kueue put at the end of a ProvisioningRequest's name (None if not its form)."""
    prefix = f"{workload}-{check}-"
    if not request.startswith(prefix) or not request[len(prefix) :].isdigit():
        return None
    return int(request[len(prefix) :])


@dataclass(frozen=True)
class Retries:
    """Where a provisioning check stands in its retry strategy."""

    attempt: int
    limit: int

    @property
    def left(self) -> int:
        """Retries still possible if the current attempt fails (Kueue retries while attempt <= limit)."""
        return max(0, self.limit - self.attempt + 1)

    def describe(self) -> str:
        return f"attempt {self.attempt} of {self.limit + 1}, {self.left} retr{'y' if self.left == 1 else 'ies'} left"


def workload_state(wl: Obj, conds: dict[str, Obj]) -> tuple[str, str]:
    """The Workload's state and Kueue's message for it, from its conditions (``conds``, by type): Finished,
    Deactivated, Evicted, Admitted, QuotaReserved, else Pending."""
    finished = conds.get("Finished")
    if finished and finished.get("status") == "True":
        return "Finished", finished.get("message", "")
    if wl.get("spec", {}).get("active") is False:
        deactivated = conds.get("Evicted") or {}
        return "Deactivated", deactivated.get("message", "the Workload was deactivated")
    for kind in ("Evicted", "Admitted", "QuotaReserved"):
        cond = conds.get(kind)
        if cond and cond.get("status") == "True":
            return kind, cond.get("message", "")
    pending = conds.get("QuotaReserved") or conds.get("Admitted") or {}
    return "Pending", pending.get("message", WAITING)


def retries(retry_count: int, attempts: list[int], limit: int | None) -> Retries | None:
    """The current attempt: the newest request's number, or the next one Kueue will create."""
    if limit is None:
        return None
    attempt = max([retry_count + 1, *attempts])
    return Retries(attempt, limit)


def request_state(pr: Obj) -> tuple[str, str, str]:
    """(state, reason, message) of a ProvisioningRequest: its newest True condition, Queued once accepted, else
    Pending with GKE's Accepted=False reason."""
    conds = _conditions(pr)
    for kind in ("CapacityRevoked", "Failed", "BookingExpired", "Provisioned"):
        cond = conds.get(kind)
        if cond and cond.get("status") == "True":
            return kind, cond.get("reason", ""), cond.get("message", "")
    accepted = conds.get("Accepted") or {}
    if accepted.get("status") == "True":
        # Queued by DWS: the Provisioned=False condition says why it waits.
        waiting = conds.get("Provisioned") or accepted
        return "Queued", waiting.get("reason", ""), waiting.get("message", "")
    if accepted:
        return "Pending", accepted.get("reason", ""), accepted.get("message", "")
    return "Pending", "", "not yet seen by the provisioner"


def queued_for(pr: Obj, now: float | None = None) -> str:
    """How long DWS kept the request queued: Accepted until Provisioned, or so far while it waits."""
    conds = _conditions(pr)
    accepted, provisioned = conds.get("Accepted") or {}, conds.get("Provisioned") or {}
    start = parse_time(accepted.get("lastTransitionTime")) if accepted.get("status") == "True" else None
    if start is None:
        return ""
    if provisioned.get("status") == "True":
        end = parse_time(provisioned.get("lastTransitionTime"))
        return f"queued {duration(end - start)} before it was provisioned" if end is not None else ""
    if request_state(pr)[0] != "Queued":
        return ""
    waited = (time.time() if now is None else now) - start
    return f"queued {duration(waited)} so far (planb's count)"


def pod_count(pr: Obj) -> int:
    return sum(int(p.get("count", 1)) for p in (pr.get("spec") or {}).get("podSets", []))


def phases(wl: Obj, conds: dict[str, Obj], now: float | None = None) -> str:
    """'queued 3s → provisioning 5s → admitted 1m02s (so far)': how long each phase of the Workload took.

    queued: creation until Kueue reserved quota; provisioning: until every admission check was
    Ready (the ProvisioningRequest's round trip); admitted: since admission. The times are the
    conditions' lastTransitionTime of the latest pass (after a retry, the latest reservation).
    """
    now = time.time() if now is None else now
    created = parse_time((wl.get("metadata") or {}).get("creationTimestamp"))
    if created is None:
        return ""

    reserved, admitted, finished = (since(conds, kind) for kind in ("QuotaReserved", "Admitted", "Finished"))
    if reserved is None:
        return f"queued {duration(now - created)} (so far)"
    parts = [f"queued {duration(reserved - created)}"]
    if admitted is None:
        return " → ".join([*parts, f"provisioning {duration(now - reserved)} (so far)"])
    parts.append(f"provisioning {duration(admitted - reserved)}")
    end = finished if finished is not None else now
    parts.append(f"admitted {duration(end - admitted)}" + ("" if finished is not None else " (so far)"))
    return " → ".join(parts)


#: Why planb hands out `kubectl delete workload` for a workload Kueue deactivated itself.
KUEUE_REACTIVATION_BUG = (
    "Kueue 0.19.2 leaves a workload it deactivated itself unqueued when spec.active is set back to true: "
    "kubernetes-sigs/kueue#14309"
)


def reactivate_command(namespace: str, workload: str) -> str:
    """Kueue's documented way: set spec.active back to true (https://kueue.sigs.k8s.io/docs/concepts/workload/#active)."""
    return f'kubectl patch workload {workload} -n {namespace} --type=merge -p \'{{"spec":{{"active":true}}}}\''


def restart_command(namespace: str, workload: str) -> str:
    """What works for a workload Kueue deactivated: delete it; Kueue makes a new one for the suspended job."""
    return f"kubectl delete workload {workload} -n {namespace}"


def deactivation(
    namespace: str,
    workload: str,
    conds: dict[str, Obj],
    revoked: bool,
    limits: dict[str, int],
    max_run: str | None,
) -> str:
    """One line: why Kueue deactivated the Workload and the command that re-activates it.

    A deactivated Workload has no admission checks left in its status; the check and its last
    message are in the Evicted condition (``... in Rejected state: "<check>" (<message>)``).
    """
    evicted = conds.get("Evicted") or {}
    message = str(evicted.get("message") or "")
    reason = str(evicted.get("reason") or "")
    # Kueue's own deactivations carry the cause in the reason (DeactivatedDueTo<cause>); Kueue 0.19.2
    # requeues on reactivation only a workload whose Requeued reason is plain "Deactivated", so
    # one it deactivated itself stays unqueued after spec.active is set back (kueue#14309, a
    # review comment there names the bug). Deleting the Workload makes Kueue create a new one for
    # the suspended job, from its first attempt.
    if reason.startswith("DeactivatedDueTo"):
        command = (
            f"{restart_command(namespace, workload)} (Kueue makes a new one for the suspended job; "
            f"{KUEUE_REACTIVATION_BUG})"
        )
    else:
        command = reactivate_command(namespace, workload)
    rejected = _REJECTED.search(message)
    limit = limits.get(rejected.group("check")) if rejected else None
    if limit is None and len(set(limits.values())) == 1:
        limit = next(iter(limits.values()))
    if revoked or REVOKED_WORDS in message:
        run = f" (maxRunDurationSeconds={max_run})" if max_run else ""
        return (
            f"deactivated: DWS revoked its capacity (CapacityRevoked) at the end of its run duration{run}, "
            "the nodes are gone and Kueue deactivated the job. Next: queue it again, it resumes from its last "
            f"checkpoint (raise job.maxRunDurationSeconds if it needs longer): {command}"
        )
    if "Rejected" in message:
        attempts = f" all {limit + 1} attempts (retryStrategy.backoffLimitCount={limit})" if limit is not None else ""
        last = (rejected.group("message") if rejected else message).rstrip(".")
        return (
            f"deactivated: its ProvisioningRequest failed and Kueue used up{attempts or ' its retries'}; "
            f"last: {last}. Once capacity is back, queue it again: {command}"
        )
    why = message or reason or "spec.active is false"
    return f"deactivated: {why}. Re-activate it: {command}"
