"""Which project quota a node pool of each accelerator consumes, on-demand or preemptible, and how to find it.

GKE TPU and GPU node pools consume **Compute Engine** quota, not Cloud TPU API quota: "If you're
using TPUs with Google Kubernetes Engine (GKE), you use Compute Engine API quota"
(https://cloud.google.com/tpu/docs/consumption-options). The Compute Engine ``regions.get`` quota
list has no metric for v5p, v6e or TPU7x, so planb reads the **Cloud Quotas API**
(``GET https://cloudquotas.googleapis.com/v1/projects/P/locations/global/services/compute.googleapis.com/quotaInfos``,
https://cloud.google.com/docs/quotas/reference/rest/v1/projects.locations.services.quotaInfos/list)
and finds the quota by its **display name** and service-specific dimensions, never by a quota ID:
Google publishes no IDs for these, so none is written here.

The display names come from Compute Engine's "Allocation quotas" TPU section and GKE's TPU
troubleshooting page, as a 2026-07-14 summary of those pages gives them (``QUOTA_URLS``); when a
project's quota list holds no quota of that name, the preflight says so and does not refuse.

Two types of quota, each checked where a plan draws on it (one slice must fit); which kind of plan draws on which is
the kind's ``quota`` in ``planb.catalog.rung_kinds``:

* **on-demand** (``TPU_ON_DEMAND``, ``GPU_ON_DEMAND``): an on-demand plan's pools (plan A,
  reservationAffinity NO_RESERVATION). A reservation plan's VMs took their quota when the reservation
  was made, so it is not checked.
* **preemptible** (``TPU_PREEMPTIBLE``, ``GPU_PREEMPTIBLE``): a DWS plan's pools (plan B, flex-start with
  queued provisioning: "All VMs provisioned by Provisioning Request requests use preemptible quotas",
  https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest; Cloud TPU's flex-start page
  likewise says to "ensure you have sufficient preemptible quota to use Flex-start",
  https://cloud.google.com/tpu/docs/request-using-flex-start) and a Spot plan's (Compute Engine: "consider
  requesting preemptible quota for Spot VMs", https://cloud.google.com/compute/docs/instances/create-use-spot;
  GKE's TPU page names both quotas per TPU version,
  https://cloud.google.com/kubernetes-engine/docs/how-to/tpus#ensure-quota).

The v6e and TPU7x preemptible quotas are named "Preemptible TPU slices ..." and no page says whether one
unit is a chip or a slice (``unit_documented`` False). planb never reads such a value as either: 0 fits no
slice in any unit and is refused, a value of at least one slice's chips fits in both and passes, anything
between is reported as not decidable.
"""

from __future__ import annotations

from dataclasses import dataclass, field

QUOTA_URLS = (
    "https://cloud.google.com/compute/resource-usage#tpu_quota",
    "https://cloud.google.com/kubernetes-engine/docs/troubleshooting/tpus#insufficient_quota",
)
#: Compute Engine's GPU quota (NVIDIA_H100_GPUS, display "NVIDIA H100 GPUs", per region).
GPU_QUOTA_URL = "https://cloud.google.com/compute/resource-usage#gpu_quota"


@dataclass(frozen=True)
class QuotaKey:
    """How to find one Compute Engine quota among a project's QuotaInfos."""

    #: The quota's display name (matched against quotaDisplayName or metricDisplayName, case-insensitively).
    display_name: str
    #: Service-specific dimensions besides the region, e.g. {"tpu_family": "CT6E"}.
    dimensions: dict[str, str] = field(default_factory=dict)
    #: What one unit of the quota is: "chips" (TPU) or "GPUs".
    unit: str = "chips"
    url: str = QUOTA_URLS[0]
    #: False when Google names the quota but not its unit (chips or slices): only 0 is then refused (module docstring).
    unit_documented: bool = True


#: Quota types, as Google names them ("on-demand and preemptible (spot)", https://cloud.google.com/tpu/docs/quota).
ON_DEMAND, PREEMPTIBLE = "on-demand", "preemptible"


#: TPU generation -> the on-demand quota its node pools consume, per chip.
TPU_ON_DEMAND: dict[str, QuotaKey] = {
    "v4": QuotaKey("TPU v4 PodSlice chips"),
    "v5e": QuotaKey("TPU v5 Lite PodSlice chips"),
    "v5p": QuotaKey("TPU v5p chips"),
    "v6e": QuotaKey("TPUs per TPU family", {"tpu_family": "CT6E"}),
    "tpu7x": QuotaKey("TPUs per TPU family", {"tpu_family": "tpu7x"}),
}

#: TPU generation -> the preemptible quota its Spot and flex-start (DWS) node pools consume.
TPU_PREEMPTIBLE: dict[str, QuotaKey] = {
    "v4": QuotaKey("Preemptible TPU v4 PodSlice chips"),
    "v5e": QuotaKey("Preemptible TPU v5 Lite Podslice chips"),
    "v5p": QuotaKey("Preemptible TPU v5p chips"),
    "v6e": QuotaKey("Preemptible TPU slices v6e", unit_documented=False),
    "tpu7x": QuotaKey("Preemptible TPU slices tpu7x", unit_documented=False),
}

#: GPU node label (cloud.google.com/gke-accelerator) -> the on-demand quota, per GPU. Only the
#: H100 80GB's quota name is sourced; the H100 Mega, H200 and B200 quotas are not carried (the
#: preflight says it cannot check them).
GPU_ON_DEMAND: dict[str, QuotaKey] = {
    "nvidia-h100-80gb": QuotaKey("NVIDIA H100 GPUs", unit="GPUs", url=GPU_QUOTA_URL),
}

#: GPU node label -> the preemptible quota its Spot and flex-start pools consume, per GPU (Compute Engine's
#: PREEMPTIBLE_NVIDIA_H100_GPUS, display "Preemptible NVIDIA H100 GPUs", per region).
GPU_PREEMPTIBLE: dict[str, QuotaKey] = {
    "nvidia-h100-80gb": QuotaKey("Preemptible NVIDIA H100 GPUs", unit="GPUs", url=GPU_QUOTA_URL),
}
