"""What GKE writes on a ProvisioningRequest of queued provisioning: class, conditions, details.

The condition reasons and messages are those of GKE's autoscaler; `status_patch` sets a request's
conditions the way the API expects them (a condition's ``lastTransitionTime`` moves only when its
status changes) and merges GKE's ``provisioningClassDetails``. planb.local.capacity.provisioning decides
which condition a request gets when.
"""

from __future__ import annotations

import datetime
from typing import Any

from planb.kube import Obj
from planb.kube_objects import conditions
from planb.local.capacity import settings as settings_mod
from planb.local.capacity import webhook as webhook_mod
from planb.local.capacity.pools import NodePool

QUEUED_CLASS = "queued-provisioning.gke.io"
PR_PATH = "/apis/autoscaling.x-k8s.io/v1"

_GKE_CA = "https://github.com/GoogleCloudPlatform/cluster-autoscaler/blob/7d250507339b3a7583b380349f217ea191ff15ff/"
#: The states, their conditions and default reasons and messages (StateOfProvisioningRequest,
#: initializeProvisioningRequestStatus, provisioningRequestStateToConditionUpdate).
GKE_CA_STATE = _GKE_CA + "pkg/provisioningrequests/provreqstate/state.go"
#: Provisioned=False while the resize request waits: its last attempt's error, reason by error code
#: (updateProvisioningRequestInAcceptedState, reasons.GetDwsErrorInfoFromLastAttemptErrors).
GKE_CA_WAITING = _GKE_CA + "pkg/provisioningrequests/reconciler/resize_request_reconciler.go"
#: The request's details once a node group is chosen (CreateResizeRequest, detailsFromSpec) and their keys
#: (pkg/provisioningrequests/queuedwrapper/wrapper.go).
GKE_CA_MANAGER = _GKE_CA + "pkg/provisioningrequests/manager/manager.go"
#: CreateResizeRequest: the details are written while the request is still Pending (L213-L220), then the resize
#: request is created; when that call fails, the request goes from Pending straight to Failed with the reason of the
#: call's error (L236-L245), its Accepted condition left False, and the error backs the pool off (L237-L242: the
#: codes GKE_CA_CREATE_ERRORS marks so; planb.local.capacity.scaleup.NodeGroupBackoff).
GKE_CA_CREATE_FAILED = GKE_CA_MANAGER + "#L213-L245"
#: The reason and message of each resize request create error (GetDwsErrorInfoFromResizeRequestOperationError).
GKE_CA_CREATE_ERRORS = _GKE_CA + "pkg/provisioningrequests/reconciler/reasons/reasons.go#L217-L268"
#: The feature guard: fails a not yet accepted request of several PodSets only while the rollout flag
#: ProvisioningRequestMultiplePodSets::Enabled is off (L58-L73, L101-L104); the flag's failsafe is on (L89-L93).
GKE_CA_FEATURE_GUARD = _GKE_CA + "pkg/provisioningrequests/reconciler/feature_guard_reconciler.go"

# GKE's condition reasons and messages for queued provisioning. The page
# https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest shows the accepted and
# waiting ones in its `kubectl describe provisioningrequest` output; GKE's autoscaler sets them
# (GKE_CA_STATE for each state's default, GKE_CA_WAITING for the waiting one, GKE_CA_CREATE_ERRORS for a failed
# create call and GKE_CA_FEATURE_GUARD for the PodSets refusal).
#: GKE_CA_STATE initializeProvisioningRequestStatus: a new request is Pending, only Accepted=False with these,
#: until a node group is chosen (planb.local.capacity.scaleup).
NOT_ACCEPTED_REASON = "NotAccepted"
NOT_ACCEPTED_MESSAGE = "Provisioning Request wasn't accepted."
ACCEPTED_REASON = "SuccessfullyQueued"
ACCEPTED_MESSAGE = "Provisioning Request was successfully queued."
WAITING_REASON = "ResourcePoolExhausted"
#: The resize request's last-attempt error GKE_CA_WAITING copies: Compute Engine's message when it has no
#: capacity yet (the wording of GoogleCloudPlatform/cluster-autoscaler's
#: pkg/cloudprovider/gke/gceclient/resizerequest/client_v1_test.go, whose case names it "with ETA": the
#: expected time it carries is "indefinite").
WAITING_MESSAGE = (
    "Waiting for resources. Currently there are not enough resources available to fulfill the request. "
    "Expected time is indefinite."
)
PROVISIONED_REASON = "Provisioned"
PROVISIONED_MESSAGE = "Provisioning Request was successfully provisioned."
BOOKING_EXPIRED_REASON = "BookingExpired"
BOOKING_EXPIRED_MESSAGE = (
    "Capacity booking for the Provisioning Request has expired and the nodes are now candidates for scale down "
    "when underutilized."
)
CAPACITY_REVOKED_REASON = "CapacityRevoked"
CAPACITY_REVOKED_MESSAGE = (
    "Capacity provisioned for the Provisioning Request was reclaimed and is no longer available in the cluster."
)
#: GKE_CA_FEATURE_GUARD L29-L30: written only while the rollout flag is off
#: (settings.provisioning_request_multiple_podsets_enabled).
MULTIPLE_PODSETS_REASON = "MultiplePodSetsUnsupported"
MULTIPLE_PODSETS_MESSAGE = "Provisioning Request doesn't support multiple PodSets, please define only 1."
#: GKE_CA_CREATE_ERRORS L67-L68, L233-L234: the resize request's create call answered QUEUING_INFEASIBLE_NO_CAPACITY
#: (the only place this reason comes from), with `no_capacity_message`; the call's error backs the pool off.
NO_CAPACITY_REASON = "QueuingInfeasibleNoCapacity"
#: The request parameter GKE reads the run duration from (Kueue fills it from the job's annotation).
MAX_RUN_PARAMETER = "maxRunDurationSeconds"


def now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso(when: float) -> str:
    return datetime.datetime.fromtimestamp(when, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: object) -> float | None:
    try:
        return datetime.datetime.strptime(str(value), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.UTC).timestamp()
    except ValueError:
        return None


def no_capacity_message(zone: str) -> str:
    """GKE's words for a request Compute Engine has no capacity for (GKE_CA_CREATE_ERRORS L121-L123:
    "... insufficient capacity in zone %s. ...")."""
    return (
        f"Could not enqueue the Provisioning Request due to insufficient capacity in zone {zone}. "
        "Try different locations or hardware."
    )


def resize_request_name(key: str) -> str:
    """GKE's resize request name of the request "namespace/name" (webhook_mod.GKE_CA_RR_NAME)."""
    namespace, _, name = key.partition("/")
    return webhook_mod.resize_request_name(namespace, name)


#: GKE_CA_MANAGER: how GKE provisions a request of a queued pool (queuedwrapper ProvisioningModeResizeRequest).
PROVISIONING_MODE = "resize_request"


def class_details(key: str, pool: NodePool, templates: list[str]) -> dict[str, str]:
    """The provisioningClassDetails GKE writes when it chooses a request's node group (GKE_CA_MANAGER
    detailsFromSpec): those planb knows. Not written: NodeGroupName, the pool's managed instance group, and
    AcceleratorType and SelectedZone, which local pools do not carry."""
    return {
        webhook_mod.RESIZE_REQUEST_DETAIL: resize_request_name(key),
        "NodePoolName": pool.name,
        "NodePoolAutoProvisioned": "false",  # planb creates its pools; GKE's node auto-provisioning does not
        "PodTemplateName": ", ".join(templates),
        "ProvisioningMode": PROVISIONING_MODE,
    }


def pod_count(pr: Obj) -> int:
    """The pods a request asks for: the sum of its PodSets' counts (Kueue: replicas x hosts of the worker group)."""
    return sum(int(podset.get("count", 1)) for podset in (pr.get("spec") or {}).get("podSets", []))


def template_names(pr: Obj) -> list[str]:
    return [str(p["podTemplateRef"]["name"]) for p in (pr.get("spec") or {}).get("podSets", [])]


def pool_name(pr: Obj) -> str | None:
    """The node pool GKE chose for the request (its NodePoolName detail), if one was chosen."""
    details = (pr.get("status") or {}).get("provisioningClassDetails") or {}
    name = details.get("NodePoolName")
    return str(name) if name else None


def max_run_parameter(pr: Obj) -> float:
    """The request's run duration in seconds: its parameter, else GKE's default; never over GKE's 7 days."""
    raw = ((pr.get("spec") or {}).get("parameters") or {}).get(MAX_RUN_PARAMETER)
    try:
        value = float(str(raw)) if raw is not None else settings_mod.GKE_MAX_RUN_SECONDS
    except ValueError:
        value = settings_mod.GKE_MAX_RUN_SECONDS
    return min(max(value, 0.0), settings_mod.GKE_MAX_RUN_SECONDS)


def status_patch(
    pr: Obj, updates: list[tuple[str, str, str, str]], details: dict[str, str] | None = None
) -> dict[str, Any] | None:
    """The status merge patch that sets conditions (type, status, reason, message) and provisioningClassDetails of
    a request; None when the request has them already."""
    conds = conditions(pr)
    old_details = (pr.get("status") or {}).get("provisioningClassDetails") or {}
    patch: dict[str, Any] = {}
    changed = False
    if details is not None and any(old_details.get(k) != v for k, v in details.items()):
        patch["provisioningClassDetails"] = {**old_details, **details}
        changed = True
    for kind, status, reason, message in updates:
        old = conds.get(kind)
        if old and (old.get("status"), old.get("reason"), old.get("message")) == (status, reason, message):
            continue
        changed = True
        conds[kind] = {
            "type": kind,
            "status": status,
            "reason": reason,
            "message": message,
            "lastTransitionTime": now()
            if not old or old.get("status") != status
            else old.get("lastTransitionTime", now()),
            "observedGeneration": pr["metadata"].get("generation", 1),
        }
    if not changed:
        return None
    patch["conditions"] = list(conds.values())
    return patch
