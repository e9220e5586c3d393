"""What upstream's best-effort-atomic ProvisioningRequest class says, as planb.local.capacity.besteffort answers it:
the class name and the pods' annotation, the conditions' reasons and messages, how long a booking lasts and a request
waits before it fails, the backoff between two tries, and GKE's filter of the pods that consume a request. Each cites
the upstream file and line it comes from (kubernetes/autoscaler at f7bb0c36, GKE's at 7d250507).
"""

from __future__ import annotations

from planb.kube import Obj
from planb.local.capacity import webhook as webhook_mod

_CA = "https://github.com/kubernetes/autoscaler/blob/f7bb0c3623750695e1bb7f9f52269590f2974cbf/cluster-autoscaler/"
#: The class's Provision: one request, its pods that fit free nodes, one all-or-nothing scale-up, its conditions.
BEA = _CA + "provisioningrequest/besteffortatomic/provisioning_class.go"
#: The reasons and messages of the ProvisioningRequest conditions.
CONDITIONS = _CA + "provisioningrequest/conditions/conditions.go"
#: Which request is taken next, Accepted, and the backoff after a Provisioned=False.
INJECTOR = _CA + "processors/provreq/injector.go"
#: BookingExpired, Failed after seven days, and the booking of a provisioned request's capacity.
PROCESSOR = _CA + "processors/provreq/processor.go"
#: The backoff's defaults.
FLAGS = _CA + "config/flags/flags.go"
#: The class name and the pods' annotation naming the request they consume.
TYPES = _CA + "apis/provisioningrequest/autoscaling.x-k8s.io/v1/types.go"
#: GKE's filter of pending pods that consume a ProvisioningRequest (IgnorePodsConsumingProvisioningRequest).
GKE_PODS_FILTER = (
    "https://github.com/GoogleCloudPlatform/cluster-autoscaler/blob/7d250507339b3a7583b380349f217ea191ff15ff/"
    "pkg/provisioningrequests/processors/pod_list_processor.go"
)

#: TYPES:203 ProvisioningClassBestEffortAtomicScaleUp.
BEST_EFFORT_CLASS = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
#: TYPES:205 ProvisioningRequestPodAnnotationKey (Kueue v0.19.2 sets it on the pods it admits through a
#: ProvisioningRequest: pkg/controller/admissionchecks/provisioning/controller.go:715), and the deprecated key
#: upstream still reads (provisioningrequest/pods/pods.go:34).
CONSUMES = webhook_mod.CONSUME_ANNOTATIONS

#: CONDITIONS:30-32, set by INJECTOR:76-85 MarkAsAccepted.
ACCEPTED_REASON = "Accepted"
ACCEPTED_MESSAGE = "ProvisioningRequest is accepted by ClusterAutoscaler"
#: CONDITIONS:35-38, set by BEA:119-134 when every pod fits without a scale-up.
FOUND_REASON = "CapacityIsFound"
FOUND_MESSAGE = "Capacity is found in the cluster"
#: CONDITIONS:39-42, set by BEA:136-152 once the scale-up is requested (upstream's message is the found one's).
PROVISIONED_REASON = "CapacityIsProvisioned"
PROVISIONED_MESSAGE = "Capacity is found in the cluster"
#: CONDITIONS:33-34 and the message BEA:154-161 writes when no all-or-nothing scale-up is possible.
NOT_FOUND_REASON = "CapacityIsNotFound"
NOT_FOUND_MESSAGE = "Capacity is not found, CA will try to find it later."
#: CONDITIONS:51-54, set by PROCESSOR:95-99,107-108 when the booking's time is over.
RESERVATION_EXPIRED_REASON = "CapacityReservationTimeExpired"
RESERVATION_EXPIRED_MESSAGE = "Capacity reservation time is expired"
#: CONDITIONS:55-58, set by PROCESSOR:164-170 once all the request's pods are scheduled.
CONSUMED_REASON = "CapacityBookingConsumed"
CONSUMED_MESSAGE = "Capacity booking consumed: all pods scheduled"
#: CONDITIONS:59-62, set as Failed by PROCESSOR:100-105,115-116 on a request never provisioned.
EXPIRED_REASON = "Expired"
EXPIRED_MESSAGE = "ProvisioningRequest is expired"

#: PROCESSOR:41 defaultReservationTime: how long a provisioned request's capacity stays booked.
RESERVATION_SECONDS = 10 * 60.0
#: PROCESSOR:42 defaultExpirationTime: a request not provisioned this long after its creation fails.
EXPIRATION_SECONDS = 7 * 24 * 3600.0
#: FLAGS:225-226 provisioning-request-initial-backoff-time and -max-backoff-time; INJECTOR:61-68 doubles the wait
#: after each retry, up to the max.
INITIAL_BACKOFF_SECONDS = 60.0
MAX_BACKOFF_SECONDS = 600.0


def consumed_request(pod: Obj) -> str | None:
    """The ProvisioningRequest ("namespace/name") the pod consumes, from its annotation (TYPES:205), if any."""
    meta = pod.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    name = next((annotations[k] for k in CONSUMES if annotations.get(k)), None)
    return f"{meta.get('namespace', '')}/{name}" if name else None


def next_backoff(previous: float | None) -> float:
    """The wait before the next retry of a request left Provisioned=False (INJECTOR:61-68): 60 s, then doubled."""
    return INITIAL_BACKOFF_SECONDS if previous is None else min(2 * previous, MAX_BACKOFF_SECONDS)


def ignored_by_scale_up(pod: Obj) -> bool:
    """GKE_PODS_FILTER:116-134: pods that consume a ProvisioningRequest trigger no ordinary scale-up (the
    autoscaler's filter of pending pods)."""
    return consumed_request(pod) is not None
