# planb.gke: the GKE v1 request bodies the modules send.
"""Cluster and NodePool bodies (GKE REST v1) built from validated module parameters."""

from __future__ import annotations

import json
from typing import Any

from ansible_collections.planb.gke.plugins.module_utils.args import TAINT_EFFECTS
from ansible_collections.planb.gke.plugins.module_utils.validate import duration_seconds

Body = dict[str, Any]
Params = dict[str, Any]


def cluster_body(params: Params) -> Body:
    """projects.locations.clusters: the seed's cluster (default pool, Ray operator, image streaming)."""
    body: Body = {
        "name": params["name"],
        "initialClusterVersion": params["version"],
        "addonsConfig": {"rayOperatorConfig": {"enabled": bool(params["ray_operator"])}},
        "nodePoolDefaults": {"nodeConfigDefaults": {"gcfsConfig": {"enabled": bool(params["image_streaming"])}}},
        "nodePools": [
            {
                "name": "default-pool",
                "initialNodeCount": params["default_pool_node_count"],
                "config": {"machineType": params["default_pool_machine_type"]},
            }
        ],
    }
    if params.get("labels"):
        body["resourceLabels"] = dict(params["labels"])
    return body


def _taints(taints: list[dict[str, Any]]) -> list[dict[str, str]]:
    return sorted(
        ({"key": t["key"], "value": str(t.get("value") or ""), "effect": TAINT_EFFECTS[t["effect"]]} for t in taints),
        key=lambda item: json.dumps(item, sort_keys=True),
    )


_AUTOSCALING_FIELDS = (
    ("min_node_count", "minNodeCount"),
    ("max_node_count", "maxNodeCount"),
    ("total_min_node_count", "totalMinNodeCount"),
    ("total_max_node_count", "totalMaxNodeCount"),
    ("location_policy", "locationPolicy"),
)


def node_pool_body(params: Params) -> Body:
    """projects.locations.clusters.nodePools: machine, TPU placement, autoscaling, DWS settings."""
    config: Body = {"machineType": params["machine_type"]}
    if params.get("reservation_affinity"):
        config["reservationAffinity"] = {"consumeReservationType": params["reservation_affinity"]}
    if params.get("spot") is not None:
        config["spot"] = bool(params["spot"])
    if params.get("flex_start") is not None:
        config["flexStart"] = bool(params["flex_start"])
    if params.get("labels") is not None:
        config["labels"] = {str(k): str(v) for k, v in params["labels"].items()}
    if params.get("taints") is not None:
        config["taints"] = _taints(params["taints"])
    if params.get("max_run_duration") is not None:
        config["maxRunDuration"] = f"{duration_seconds(params['max_run_duration'])}s"
    body: Body = {
        "name": params["name"],
        "initialNodeCount": params.get("initial_node_count") or 0,
        "config": config,
        "management": {"autoRepair": bool(params["auto_repair"]), "autoUpgrade": bool(params["auto_upgrade"])},
        "queuedProvisioning": {"enabled": bool(params.get("queued_provisioning"))},
    }
    auto = params.get("autoscaling") or {}
    if auto:
        scaling: Body = {"enabled": bool(auto.get("enabled", True))}
        for option, field in _AUTOSCALING_FIELDS:
            if auto.get(option) is not None:
                scaling[field] = auto[option]
        body["autoscaling"] = scaling
    if params.get("tpu_topology"):
        body["placementPolicy"] = {"tpuTopology": params["tpu_topology"]}
    if params.get("placement_policy"):
        # A workload policy (TPU7x multi-host slices: instead of tpuTopology, validate.py checks).
        body.setdefault("placementPolicy", {})["policyName"] = params["placement_policy"]
    return body
