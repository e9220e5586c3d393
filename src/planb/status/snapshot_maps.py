"""The cluster-wide maps `planb status` derives from one read (planb.status.gather.Snapshot): each provisioning
check's retry limit, each ResourceFlavor's plan, the queues' shapes and each node's pool and plan; planb.status.report
reads a job's status against them."""

from __future__ import annotations

from dataclasses import dataclass

from planb.failover.names import PLAN_LABEL
from planb.kube import Obj
from planb.status import shapes
from planb.status.gather import Snapshot

NODEPOOL_LABEL = "cloud.google.com/gke-nodepool"
#: Kueue's defaults for a ProvisioningRequestConfig without a retryStrategy.
DEFAULT_BACKOFF_LIMIT = 3


@dataclass(frozen=True)
class Maps:
    limits: dict[str, int]  # backoffLimitCount per provisioning check
    flavor_plans: dict[str, str]  # ResourceFlavor -> the plan it selects
    queues: shapes.Queues
    node_pools: dict[str, str]  # node -> its GKE node pool ('-' when unlabelled)
    node_plans: dict[str, str]  # node -> its plan ('' when unlabelled)


def _flavor_plans(flavors: list[Obj]) -> dict[str, str]:
    out = {}
    for flavor in flavors:
        plan = ((flavor.get("spec") or {}).get("nodeLabels") or {}).get(PLAN_LABEL)
        if plan:
            out[flavor["metadata"]["name"]] = str(plan)
    return out


def retry_limits(admission_checks: list[Obj], configs: list[Obj]) -> dict[str, int]:
    """backoffLimitCount per provisioning admission check name."""
    by_config = {
        c["metadata"]["name"]: int(
            ((c.get("spec") or {}).get("retryStrategy") or {}).get("backoffLimitCount", DEFAULT_BACKOFF_LIMIT)
        )
        for c in configs
    }
    out = {}
    for ac in admission_checks:
        spec = ac.get("spec") or {}
        if spec.get("controllerName") != "kueue.x-k8s.io/provisioning-request":
            continue
        params = spec.get("parameters") or {}
        if params.get("kind") == "ProvisioningRequestConfig" and params.get("name") in by_config:
            out[ac["metadata"]["name"]] = by_config[params["name"]]
        else:
            out[ac["metadata"]["name"]] = DEFAULT_BACKOFF_LIMIT
    return out


def maps_of(snapshot: Snapshot) -> Maps:
    """The snapshot's cluster-wide maps: no read."""
    limits = retry_limits(snapshot.admission_checks, snapshot.provisioning_configs)
    flavor_plans = _flavor_plans(snapshot.flavors)
    nodes = snapshot.nodes
    return Maps(
        limits=limits,
        flavor_plans=flavor_plans,
        node_pools={n["metadata"]["name"]: n["metadata"].get("labels", {}).get(NODEPOOL_LABEL, "-") for n in nodes},
        node_plans={n["metadata"]["name"]: n["metadata"].get("labels", {}).get(PLAN_LABEL, "") for n in nodes},
        queues=shapes.queues(snapshot.local_queues, snapshot.cluster_queues, snapshot.flavors),
    )
