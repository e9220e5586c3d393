"""Which project quota an on-demand node pool of each accelerator consumes, and how to find it.

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
Plan A (on-demand) is what is checked: one slice must fit. Plan B (flex-start / queued
provisioning) uses **preemptible** quota ("All VMs provisioned by Provisioning Request requests use
preemptible quotas", https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest);
its names (e.g. "Preemptible TPU slices v6e") are not checked, as their unit is not documented.
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


#: TPU generation -> the on-demand quota its node pools consume, per chip.
TPU_ON_DEMAND: dict[str, QuotaKey] = {
    "v4": QuotaKey("TPU v4 PodSlice chips"),
    "v5e": QuotaKey("TPU v5 Lite PodSlice chips"),
    "v5p": QuotaKey("TPU v5p chips"),
    "v6e": QuotaKey("TPUs per TPU family", {"tpu_family": "CT6E"}),
    "tpu7x": QuotaKey("TPUs per TPU family", {"tpu_family": "tpu7x"}),
}

#: GPU node label (cloud.google.com/gke-accelerator) -> the on-demand quota, per GPU. Only the
#: H100 80GB's quota name is sourced; the H100 Mega, H200 and B200 quotas are not carried (the
#: preflight says it cannot check them).
GPU_ON_DEMAND: dict[str, QuotaKey] = {
    "nvidia-h100-80gb": QuotaKey("NVIDIA H100 GPUs", unit="GPUs", url=GPU_QUOTA_URL),
}
