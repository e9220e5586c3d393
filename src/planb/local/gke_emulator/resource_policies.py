"""Compute Engine workload policies in the GKE emulator: what places a multi-host TPU7x slice node pool.

GKE's Ironwood (TPU7x) page (https://cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood) has a
multi-host TPU7x slice pool name a workload policy (``placementPolicy.policyName``) instead of a
``tpuTopology``; the policy carries the slice's shape (``workloadPolicy.acceleratorTopology``). The Compute
Engine API v1 subset served here (discovery document compute.v1, resource ``resourcePolicies``):

* ``GET  /compute/v1/projects/P/regions/R/resourcePolicies/NAME``  one policy (404 in Compute's wording when none)
* ``GET  /compute/v1/projects/P/regions/R/resourcePolicies``       ``{"items": [...]}``
* ``POST /compute/v1/projects/P/regions/R/resourcePolicies``       insert; answers a regional operation that is DONE

Stored as Compute's ResourcePolicy body: ``name``, ``region`` (URL), ``status`` READY and ``workloadPolicy``
(``type``, ``acceleratorTopology``, ``maxTopologyDistance`` as sent). Only workload policies are taken: the other
kinds (snapshot, instance schedule, group placement) place no node pool planb makes.
``planb local gke-emulator workload-policy create NAME --region R --accelerator-topology 2x2x2`` inserts one, as
``gcloud compute resource-policies create workload-policy`` does against Google.

A node pool's ``placementPolicy.policyName`` is looked up in the pool's project and region
(``policy_for_pool``): container v1's PlacementPolicy.policyName says the policy "must be in the same project and
region as the node pool. If not found, InvalidArgument error is returned".
"""

from __future__ import annotations

import copy
import re
import secrets
from datetime import UTC, datetime
from typing import Any

from planb.local.gke_emulator.reservations import COMPUTE_BASE

Body = dict[str, Any]

DOC_RESOURCE_POLICIES = "https://cloud.google.com/compute/docs/reference/rest/v1/resourcePolicies"
_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")
_REGION = re.compile(r"^[a-z]+-[a-z]+[0-9]+$")
#: compute.v1 ResourcePolicyWorkloadPolicy.type's enum.
WORKLOAD_TYPES = ("HIGH_AVAILABILITY", "HIGH_THROUGHPUT")


class ResourcePolicyError(Exception):
    """What Compute Engine answers as an error (HTTP code and message)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def key(project: str, region: str, name: str) -> str:
    """The policy's resource name: projects/P/regions/R/resourcePolicies/N."""
    return f"projects/{project}/regions/{region}/resourcePolicies/{name}"


def region_of(location: str) -> str:
    """The region of a GKE location: a zone (us-central1-c, us-central1-ai1a) less its last part; a region as is."""
    return location if _REGION.fullmatch(location) else location.rsplit("-", 1)[0]


def get(table: dict[str, Body], project: str, region: str, name: str) -> Body:
    found = table.get(key(project, region, name))
    if found is None:
        # Compute Engine's 404 body names the resource: "The resource '<name>' was not found".
        raise ResourcePolicyError(404, f"The resource '{key(project, region, name)}' was not found")
    return copy.deepcopy(found)


def list_region(table: dict[str, Body], project: str, region: str) -> Body:
    prefix = f"projects/{project}/regions/{region}/resourcePolicies/"
    return {"items": [copy.deepcopy(body) for name, body in sorted(table.items()) if name.startswith(prefix)]}


def insert(table: dict[str, Body], project: str, region: str, request: Body) -> Body:
    """Compute's resourcePolicies.insert for a workload policy: validate, store, answer a DONE operation."""
    name = str(request.get("name") or "")
    if not _NAME.fullmatch(name):
        raise ResourcePolicyError(
            400, f"Invalid value for field 'resource.name': '{name}'. Must be a match of regex '{_NAME.pattern}'"
        )
    if not _REGION.fullmatch(region):
        raise ResourcePolicyError(400, f"Invalid value for field 'region': '{region}'. A region such as us-central1.")
    workload = request.get("workloadPolicy")
    if not isinstance(workload, dict):
        raise ResourcePolicyError(
            400,
            "the planb GKE emulator holds workload policies only: set resource.workloadPolicy "
            f"({DOC_RESOURCE_POLICIES})",
        )
    if workload.get("type") not in WORKLOAD_TYPES:
        raise ResourcePolicyError(
            400,
            f"Invalid value for field 'resource.workloadPolicy.type': '{workload.get('type', '')}'. "
            f"One of {', '.join(WORKLOAD_TYPES)}.",
        )
    full = key(project, region, name)
    if full in table:
        raise ResourcePolicyError(409, f"The resource '{full}' already exists")
    body: Body = {
        "kind": "compute#resourcePolicy",
        "id": str(secrets.randbits(63)),
        "creationTimestamp": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "name": name,
        "region": f"{COMPUTE_BASE}/projects/{project}/regions/{region}",
        "selfLink": f"{COMPUTE_BASE}/{full}",
        "status": "READY",
        "workloadPolicy": copy.deepcopy(workload),
    }
    table[full] = body
    return {
        "kind": "compute#operation",
        "name": f"operation-{secrets.token_hex(8)}",
        "operationType": "insert",
        "status": "DONE",
        "progress": 100,
        "targetLink": body["selfLink"],
        "region": body["region"],
    }


def policy_for_pool(table: dict[str, Body], project: str, location: str, pool: Body) -> Body | None:
    """The workload policy a node pool names (None when it names none).

    Raises ResourcePolicyError (400) when it names one the pool's project and region do not hold: container v1
    PlacementPolicy.policyName, "If not found, InvalidArgument error is returned".
    """
    name = str((pool.get("placementPolicy") or {}).get("policyName") or "")
    if not name:
        return None
    region = region_of(location)
    found = table.get(key(project, region, name))
    if found is None:
        raise ResourcePolicyError(
            400,
            f"placementPolicy.policyName: resource policy '{name}' was not found in project {project}, region "
            f"{region}; the policy must be in the same project and region as the node pool. Create it first: "
            f"`gcloud compute resource-policies create workload-policy {name} --type=HIGH_THROUGHPUT "
            f"--accelerator-topology=TOPOLOGY --region={region}` ({DOC_RESOURCE_POLICIES})",
        )
    return copy.deepcopy(found)


def accelerator_topology(policy: Body | None) -> str:
    """The slice shape a workload policy holds ('' for none)."""
    return str(((policy or {}).get("workloadPolicy") or {}).get("acceleratorTopology") or "")
