# Generated from planb's accelerator catalog (src/planb/catalog) by `make values`. Do not edit:
# change the catalog and regenerate; tests/unit/catalog/test_collection_facts.py fails when this is stale.
"""The capacity kinds a rung of the ladder can be, from planb's catalog: FACTS['kinds'], in ladder order."""

from __future__ import annotations

import json
from typing import Any

FACTS: dict[str, Any] = json.loads(
    r"""
{
 "kinds": [
  {
   "admission_means_capacity": true,
   "doc_url": "https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations",
   "name": "reservation",
   "node_labels": {},
   "one_per_ladder": false,
   "provisioning_model": "STANDARD",
   "queued": false,
   "quota": null,
   "reservation_bound": true,
   "settings": {
    "auto_repair": true,
    "flex_start": false,
    "location_policy": "",
    "queued_provisioning": false,
    "reservation": "",
    "reservation_affinity": "SPECIFIC_RESERVATION",
    "spot": false,
    "taints": []
   },
   "summary": "",
   "tolerations": []
  },
  {
   "admission_means_capacity": false,
   "doc_url": "https://cloud.google.com/compute/docs/instances/provisioning-models",
   "name": "on-demand",
   "node_labels": {},
   "one_per_ladder": true,
   "provisioning_model": "STANDARD",
   "queued": false,
   "quota": "on-demand",
   "reservation_bound": false,
   "settings": {
    "auto_repair": true,
    "flex_start": false,
    "location_policy": "",
    "queued_provisioning": false,
    "reservation": "",
    "reservation_affinity": "NO_RESERVATION",
    "spot": false,
    "taints": []
   },
   "summary": "",
   "tolerations": []
  },
  {
   "admission_means_capacity": true,
   "doc_url": "https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest",
   "name": "dws",
   "node_labels": {},
   "one_per_ladder": true,
   "provisioning_model": "FLEX_START",
   "queued": true,
   "quota": "preemptible",
   "reservation_bound": false,
   "settings": {
    "auto_repair": false,
    "flex_start": true,
    "location_policy": "ANY",
    "queued_provisioning": true,
    "reservation": "",
    "reservation_affinity": "NO_RESERVATION",
    "spot": false,
    "taints": []
   },
   "summary": "flex-start, queued provisioning",
   "tolerations": []
  },
  {
   "admission_means_capacity": false,
   "doc_url": "https://cloud.google.com/kubernetes-engine/docs/how-to/spot-vms",
   "name": "spot",
   "node_labels": {
    "cloud.google.com/gke-spot": "true"
   },
   "one_per_ladder": true,
   "provisioning_model": "SPOT",
   "queued": false,
   "quota": "preemptible",
   "reservation_bound": false,
   "settings": {
    "auto_repair": true,
    "flex_start": false,
    "location_policy": "",
    "queued_provisioning": false,
    "reservation": "",
    "reservation_affinity": "NO_RESERVATION",
    "spot": true,
    "taints": [
     {
      "effect": "NoSchedule",
      "key": "cloud.google.com/gke-spot",
      "value": "true"
     }
    ]
   },
   "summary": "",
   "tolerations": [
    {
     "effect": "NoSchedule",
     "key": "cloud.google.com/gke-spot",
     "operator": "Equal",
     "value": "true"
    }
   ]
  }
 ]
}
"""
)
