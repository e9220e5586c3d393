# Generated from planb's accelerator catalog (src/planb/catalog) by `make values`. Do not edit:
# change the catalog and regenerate; tests/unit/catalog/test_collection_facts.py fails when this is stale.
"""TPU and GPU machine types GKE offers, from planb's catalog: MACHINE_TYPES[name] -> facts."""

from __future__ import annotations

import json
from typing import Any

FACTS: dict[str, Any] = json.loads(
    r"""
{
 "a3-highgpu-1g": {
  "doc_url": "https://cloud.google.com/kubernetes-engine/docs/how-to/gpus",
  "flex_start": true,
  "generation": "a3",
  "gpus_per_vm": 1,
  "kind": "gpu",
  "preemptible_quota": {
   "dimensions": {},
   "display_name": "Preemptible NVIDIA H100 GPUs",
   "unit": "GPUs",
   "unit_documented": true,
   "url": "https://cloud.google.com/compute/resource-usage#gpu_quota"
  },
  "quota": {
   "dimensions": {},
   "display_name": "NVIDIA H100 GPUs",
   "unit": "GPUs",
   "unit_documented": true,
   "url": "https://cloud.google.com/compute/resource-usage#gpu_quota"
  }
 },
 "a3-highgpu-2g": {
  "doc_url": "https://cloud.google.com/kubernetes-engine/docs/how-to/gpus",
  "flex_start": true,
  "generation": "a3",
  "gpus_per_vm": 2,
  "kind": "gpu",
  "preemptible_quota": {
   "dimensions": {},
   "display_name": "Preemptible NVIDIA H100 GPUs",
   "unit": "GPUs",
   "unit_documented": true,
   "url": "https://cloud.google.com/compute/resource-usage#gpu_quota"
  },
  "quota": {
   "dimensions": {},
   "display_name": "NVIDIA H100 GPUs",
   "unit": "GPUs",
   "unit_documented": true,
   "url": "https://cloud.google.com/compute/resource-usage#gpu_quota"
  }
 },
 "a3-highgpu-4g": {
  "doc_url": "https://cloud.google.com/kubernetes-engine/docs/how-to/gpus",
  "flex_start": true,
  "generation": "a3",
  "gpus_per_vm": 4,
  "kind": "gpu",
  "preemptible_quota": {
   "dimensions": {},
   "display_name": "Preemptible NVIDIA H100 GPUs",
   "unit": "GPUs",
   "unit_documented": true,
   "url": "https://cloud.google.com/compute/resource-usage#gpu_quota"
  },
  "quota": {
   "dimensions": {},
   "display_name": "NVIDIA H100 GPUs",
   "unit": "GPUs",
   "unit_documented": true,
   "url": "https://cloud.google.com/compute/resource-usage#gpu_quota"
  }
 },
 "a3-highgpu-8g": {
  "doc_url": "https://cloud.google.com/kubernetes-engine/docs/how-to/gpus",
  "flex_start": true,
  "generation": "a3",
  "gpus_per_vm": 8,
  "kind": "gpu",
  "preemptible_quota": {
   "dimensions": {},
   "display_name": "Preemptible NVIDIA H100 GPUs",
   "unit": "GPUs",
   "unit_documented": true,
   "url": "https://cloud.google.com/compute/resource-usage#gpu_quota"
  },
  "quota": {
   "dimensions": {},
   "display_name": "NVIDIA H100 GPUs",
   "unit": "GPUs",
   "unit_documented": true,
   "url": "https://cloud.google.com/compute/resource-usage#gpu_quota"
  }
 },
 "a3-megagpu-8g": {
  "doc_url": "https://cloud.google.com/kubernetes-engine/docs/how-to/gpus",
  "flex_start": true,
  "generation": "a3-mega",
  "gpus_per_vm": 8,
  "kind": "gpu",
  "preemptible_quota": null,
  "quota": null
 },
 "a3-ultragpu-8g": {
  "doc_url": "https://cloud.google.com/kubernetes-engine/docs/how-to/gpus",
  "flex_start": true,
  "generation": "a3-ultra",
  "gpus_per_vm": 8,
  "kind": "gpu",
  "preemptible_quota": null,
  "quota": null
 },
 "a4-highgpu-8g": {
  "doc_url": "https://cloud.google.com/compute/docs/accelerator-optimized-machines",
  "flex_start": true,
  "generation": "a4",
  "gpus_per_vm": 8,
  "kind": "gpu",
  "preemptible_quota": null,
  "quota": null
 },
 "ct4p-hightpu-4t": {
  "chips_per_vm": 4,
  "dimensions": 3,
  "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
  "flex_start": false,
  "flex_start_note": "GKE's TPU flex-start excludes TPU v3 and v4",
  "flex_start_url": "https://cloud.google.com/kubernetes-engine/docs/how-to/tpu-flex-start",
  "flex_start_zones": [],
  "flex_start_zones_as_of": "2026-12-04",
  "flex_start_zones_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/provisioning-model",
  "generation": "v4",
  "kind": "tpu",
  "preemptible_quota": {
   "dimensions": {},
   "display_name": "Preemptible TPU v4 PodSlice chips",
   "unit": "chips",
   "unit_documented": true,
   "url": "https://cloud.google.com/compute/resource-usage#tpu_quota"
  },
  "quota": {
   "dimensions": {},
   "display_name": "TPU v4 PodSlice chips",
   "unit": "chips",
   "unit_documented": true,
   "url": "https://cloud.google.com/compute/resource-usage#tpu_quota"
  },
  "topologies": [
   "2x2x1",
   "2x2x2",
   "2x2x4",
   "2x4x4",
   "4x4x4",
   "4x4x8",
   "4x8x8",
   "8x8x8",
   "8x8x16",
   "8x16x16"
  ],
  "uses_placement_policy": false,
  "zones": [
   "us-central2-b"
  ],
  "zones_as_of": "2026-07-10",
  "zones_url": "https://cloud.google.com/tpu/docs/regions-zones"
 },
 "ct5lp-hightpu-1t": {
  "chips_per_vm": 1,
  "dimensions": 2,
  "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
  "flex_start": true,
  "flex_start_note": "",
  "flex_start_url": "",
  "flex_start_zones": [
   "us-west4-a"
  ],
  "flex_start_zones_as_of": "2026-12-04",
  "flex_start_zones_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/provisioning-model",
  "generation": "v5e",
  "kind": "tpu",
  "preemptible_quota": {
   "dimensions": {},
   "display_name": "Preemptible TPU v5 Lite Podslice chips",
   "unit": "chips",
   "unit_documented": true,
   "url": "https://cloud.google.com/compute/resource-usage#tpu_quota"
  },
  "quota": {
   "dimensions": {},
   "display_name": "TPU v5 Lite PodSlice chips",
   "unit": "chips",
   "unit_documented": true,
   "url": "https://cloud.google.com/compute/resource-usage#tpu_quota"
  },
  "topologies": [
   "1x1"
  ],
  "uses_placement_policy": false,
  "zones": [
   "europe-west4-b",
   "us-central1-a",
   "us-south1-a",
   "us-west1-c",
   "us-west4-a"
  ],
  "zones_as_of": "2026-07-10",
  "zones_url": "https://cloud.google.com/tpu/docs/regions-zones"
 },
 "ct5lp-hightpu-4t": {
  "chips_per_vm": 4,
  "dimensions": 2,
  "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
  "flex_start": true,
  "flex_start_note": "",
  "flex_start_url": "",
  "flex_start_zones": [
   "us-west4-a"
  ],
  "flex_start_zones_as_of": "2026-12-04",
  "flex_start_zones_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/provisioning-model",
  "generation": "v5e",
  "kind": "tpu",
  "preemptible_quota": {
   "dimensions": {},
   "display_name": "Preemptible TPU v5 Lite Podslice chips",
   "unit": "chips",
   "unit_documented": true,
   "url": "https://cloud.google.com/compute/resource-usage#tpu_quota"
  },
  "quota": {
   "dimensions": {},
   "display_name": "TPU v5 Lite PodSlice chips",
   "unit": "chips",
   "unit_documented": true,
   "url": "https://cloud.google.com/compute/resource-usage#tpu_quota"
  },
  "topologies": [
   "2x2",
   "2x4",
   "4x4",
   "4x8",
   "8x8",
   "8x16",
   "16x16"
  ],
  "uses_placement_policy": false,
  "zones": [
   "europe-west4-b",
   "us-central1-a",
   "us-south1-a",
   "us-west1-c",
   "us-west4-a"
  ],
  "zones_as_of": "2026-07-10",
  "zones_url": "https://cloud.google.com/tpu/docs/regions-zones"
 },
 "ct5lp-hightpu-8t": {
  "chips_per_vm": 8,
  "dimensions": 2,
  "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
  "flex_start": true,
  "flex_start_note": "",
  "flex_start_url": "",
  "flex_start_zones": [
   "us-west4-a"
  ],
  "flex_start_zones_as_of": "2026-12-04",
  "flex_start_zones_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/provisioning-model",
  "generation": "v5e",
  "kind": "tpu",
  "preemptible_quota": {
   "dimensions": {},
   "display_name": "Preemptible TPU v5 Lite Podslice chips",
   "unit": "chips",
   "unit_documented": true,
   "url": "https://cloud.google.com/compute/resource-usage#tpu_quota"
  },
  "quota": {
   "dimensions": {},
   "display_name": "TPU v5 Lite PodSlice chips",
   "unit": "chips",
   "unit_documented": true,
   "url": "https://cloud.google.com/compute/resource-usage#tpu_quota"
  },
  "topologies": [
   "2x4"
  ],
  "uses_placement_policy": false,
  "zones": [
   "europe-west4-b",
   "us-central1-a",
   "us-south1-a",
   "us-west1-c",
   "us-west4-a"
  ],
  "zones_as_of": "2026-07-10",
  "zones_url": "https://cloud.google.com/tpu/docs/regions-zones"
 },
 "ct5p-hightpu-4t": {
  "chips_per_vm": 4,
  "dimensions": 3,
  "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus",
  "flex_start": true,
  "flex_start_note": "",
  "flex_start_url": "",
  "flex_start_zones": [
   "us-east5-a"
  ],
  "flex_start_zones_as_of": "2026-12-04",
  "flex_start_zones_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/provisioning-model",
  "generation": "v5p",
  "kind": "tpu",
  "preemptible_quota": {
   "dimensions": {},
   "display_name": "Preemptible TPU v5p chips",
   "unit": "chips",
   "unit_documented": true,
   "url": "https://cloud.google.com/compute/resource-usage#tpu_quota"
  },
  "quota": {
   "dimensions": {},
   "display_name": "TPU v5p chips",
   "unit": "chips",
   "unit_documented": true,
   "url": "https://cloud.google.com/compute/resource-usage#tpu_quota"
  },
  "topologies": [
   "2x2x1",
   "2x2x2",
   "2x2x4",
   "2x4x4",
   "4x4x4",
   "4x4x8",
   "4x8x8",
   "8x8x8",
   "8x8x16",
   "8x16x16",
   "16x16x16"
  ],
  "uses_placement_policy": false,
  "zones": [
   "us-central1-a",
   "us-east5-a"
  ],
  "zones_as_of": "2026-07-10",
  "zones_url": "https://cloud.google.com/tpu/docs/regions-zones"
 },
 "ct6e-standard-1t": {
  "chips_per_vm": 1,
  "dimensions": 2,
  "doc_url": "https://cloud.google.com/tpu/docs/v6e",
  "flex_start": true,
  "flex_start_note": "",
  "flex_start_url": "",
  "flex_start_zones": [
   "asia-northeast1-b",
   "us-east5-a",
   "us-east5-b"
  ],
  "flex_start_zones_as_of": "2026-12-04",
  "flex_start_zones_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/provisioning-model",
  "generation": "v6e",
  "kind": "tpu",
  "preemptible_quota": {
   "dimensions": {},
   "display_name": "Preemptible TPU slices v6e",
   "unit": "chips",
   "unit_documented": false,
   "url": "https://cloud.google.com/compute/resource-usage#tpu_quota"
  },
  "quota": {
   "dimensions": {
    "tpu_family": "CT6E"
   },
   "display_name": "TPUs per TPU family",
   "unit": "chips",
   "unit_documented": true,
   "url": "https://cloud.google.com/compute/resource-usage#tpu_quota"
  },
  "topologies": [
   "1x1"
  ],
  "uses_placement_policy": false,
  "zones": [
   "asia-northeast1-b",
   "europe-west4-a",
   "us-central1-b",
   "us-east1-d",
   "us-east5-a",
   "us-east5-b",
   "us-south1-ai1b"
  ],
  "zones_as_of": "2026-07-10",
  "zones_url": "https://cloud.google.com/tpu/docs/regions-zones"
 },
 "ct6e-standard-4t": {
  "chips_per_vm": 4,
  "dimensions": 2,
  "doc_url": "https://cloud.google.com/tpu/docs/v6e",
  "flex_start": true,
  "flex_start_note": "",
  "flex_start_url": "",
  "flex_start_zones": [
   "asia-northeast1-b",
   "us-east5-a",
   "us-east5-b"
  ],
  "flex_start_zones_as_of": "2026-12-04",
  "flex_start_zones_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/provisioning-model",
  "generation": "v6e",
  "kind": "tpu",
  "preemptible_quota": {
   "dimensions": {},
   "display_name": "Preemptible TPU slices v6e",
   "unit": "chips",
   "unit_documented": false,
   "url": "https://cloud.google.com/compute/resource-usage#tpu_quota"
  },
  "quota": {
   "dimensions": {
    "tpu_family": "CT6E"
   },
   "display_name": "TPUs per TPU family",
   "unit": "chips",
   "unit_documented": true,
   "url": "https://cloud.google.com/compute/resource-usage#tpu_quota"
  },
  "topologies": [
   "2x2",
   "2x4",
   "4x4",
   "4x8",
   "8x8",
   "8x16",
   "16x16"
  ],
  "uses_placement_policy": false,
  "zones": [
   "asia-northeast1-b",
   "europe-west4-a",
   "us-central1-b",
   "us-east1-d",
   "us-east5-a",
   "us-east5-b",
   "us-south1-ai1b"
  ],
  "zones_as_of": "2026-07-10",
  "zones_url": "https://cloud.google.com/tpu/docs/regions-zones"
 },
 "ct6e-standard-8t": {
  "chips_per_vm": 8,
  "dimensions": 2,
  "doc_url": "https://cloud.google.com/tpu/docs/v6e",
  "flex_start": true,
  "flex_start_note": "",
  "flex_start_url": "",
  "flex_start_zones": [
   "asia-northeast1-b",
   "us-east5-a",
   "us-east5-b"
  ],
  "flex_start_zones_as_of": "2026-12-04",
  "flex_start_zones_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/provisioning-model",
  "generation": "v6e",
  "kind": "tpu",
  "preemptible_quota": {
   "dimensions": {},
   "display_name": "Preemptible TPU slices v6e",
   "unit": "chips",
   "unit_documented": false,
   "url": "https://cloud.google.com/compute/resource-usage#tpu_quota"
  },
  "quota": {
   "dimensions": {
    "tpu_family": "CT6E"
   },
   "display_name": "TPUs per TPU family",
   "unit": "chips",
   "unit_documented": true,
   "url": "https://cloud.google.com/compute/resource-usage#tpu_quota"
  },
  "topologies": [
   "2x4"
  ],
  "uses_placement_policy": false,
  "zones": [
   "asia-northeast1-b",
   "europe-west4-a",
   "us-central1-b",
   "us-east1-d",
   "us-east5-a",
   "us-east5-b",
   "us-south1-ai1b"
  ],
  "zones_as_of": "2026-07-10",
  "zones_url": "https://cloud.google.com/tpu/docs/regions-zones"
 },
 "tpu7x-standard-4t": {
  "chips_per_vm": 4,
  "dimensions": 3,
  "doc_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood",
  "flex_start": false,
  "flex_start_note": "GKE does not document flex-start or queued provisioning for TPU7x",
  "flex_start_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood",
  "flex_start_zones": [],
  "flex_start_zones_as_of": "2026-12-04",
  "flex_start_zones_url": "https://cloud.google.com/kubernetes-engine/docs/concepts/provisioning-model",
  "generation": "tpu7x",
  "kind": "tpu",
  "preemptible_quota": {
   "dimensions": {},
   "display_name": "Preemptible TPU slices tpu7x",
   "unit": "chips",
   "unit_documented": false,
   "url": "https://cloud.google.com/compute/resource-usage#tpu_quota"
  },
  "quota": {
   "dimensions": {
    "tpu_family": "tpu7x"
   },
   "display_name": "TPUs per TPU family",
   "unit": "chips",
   "unit_documented": true,
   "url": "https://cloud.google.com/compute/resource-usage#tpu_quota"
  },
  "topologies": [
   "2x2x1",
   "2x2x2",
   "2x2x4",
   "2x4x4",
   "4x4x4",
   "4x4x8",
   "4x8x8",
   "8x8x8",
   "8x8x16",
   "8x16x16"
  ],
  "uses_placement_policy": true,
  "zones": [
   "us-central1-ai1a",
   "us-central1-c"
  ],
  "zones_as_of": "2026-07-10",
  "zones_url": "https://cloud.google.com/tpu/docs/regions-zones"
 }
}
"""
)
