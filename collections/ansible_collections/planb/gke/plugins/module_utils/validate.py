# planb.gke: validation of the cluster and node pool modules' inputs, before any API call.
"""Every cluster and node pool input is checked before the first request, from its module's request
(``ClusterRequest`` here, ``NodePoolRequest`` in ``validate_pool``, which shares these parsers and common checks);
each problem names the option and the fix. Credentials, the endpoint and
the project are ``credentials``' (``Access.error``, raised here after a request's own problems, by ``check_auth`` for
the other modules). Which options go together or exclude each other is declared in the modules' argument specs
(``cluster_request.py``, ``node_pool_spec.py``, ``args.AUTH_RELATIONS``), which AnsibleModule checks first; the rules
here are on the values: formats, GKE's rules and planb's policy.

TPU facts (which machine types exist, the topologies each forms, flex-start support) come from the
generated ``machine_types`` module, i.e. from planb's catalog; nothing here repeats them. How a GKE version is read
and compared, and the versions GKE documents for TPU node pools, come from ``versions``, a generated copy of
planb's ``src/planb/catalog/versions.py`` (the GKE emulator runs the same rules).
"""

from __future__ import annotations

import re
from typing import Any

from ansible_collections.planb.gke.plugins.module_utils._generated.machine_types import FACTS as MACHINE_TYPES
from ansible_collections.planb.gke.plugins.module_utils._generated.versions import parse_version
from ansible_collections.planb.gke.plugins.module_utils.cluster_options import (
    default_pool_autoscaling_problems,
    option_problems,
)
from ansible_collections.planb.gke.plugins.module_utils.cluster_request import ClusterRequest
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError
from ansible_collections.planb.gke.plugins.module_utils.resource_labels import label_problems

#: planb's policy (the tutorial's GKE_VERSION): clusters run GKE 1.34 or later.
MIN_CLUSTER_VERSION = (1, 34)
_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$")
#: A region (us-east5), a zone (us-east5-b) or an AI zone (us-central1-ai1a, https://cloud.google.com/tpu/docs/regions-zones).
LOCATION = re.compile(r"^[a-z]+-[a-z]+[0-9]+(-(ai[0-9]+)?[a-z])?$")
MACHINE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)+$")
_DURATION = re.compile(r"^(\d+)([smhd]?)$")


# ---- small parsers ----------------------------------------------------------------------------------
def duration_seconds(value: object) -> int | None:
    """'7d', '24h', '90m', '3600s' or '3600' -> seconds; None when unparsable."""
    match = _DURATION.fullmatch(str(value).strip())
    if not match:
        return None
    return int(match.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[match.group(2)]


def tpu_machine(machine_type: str) -> dict[str, Any] | None:
    """The catalog's facts of a TPU machine type, None for any other machine type."""
    facts = MACHINE_TYPES.get(machine_type)
    return facts if facts is not None and facts["kind"] == "tpu" else None


# ---- clusters (node pools: validate_pool) ----------------------------------------------------------------------
def common_problems(names: dict[str, Any], location: str, timeout: float, poll_interval: float) -> list[str]:
    """The problems of the options every cluster and node pool module has: its names (name, cluster), location,
    timeout and poll_interval."""
    problems: list[str] = []
    for option, value in names.items():
        if value is not None and not _NAME.fullmatch(value):
            problems.append(
                f"{option} {value!r} must be 1-40 lowercase letters, digits or hyphens, start with a letter "
                "and end with a letter or digit"
            )
    if not LOCATION.fullmatch(location):
        problems.append(f"location {location!r} must be a zone (us-east5-b) or a region (us-east5)")
    if timeout <= 0 or poll_interval <= 0:
        problems.append("timeout and poll_interval must be positive")
    return problems


def raise_problems(kind: str, problems: list[str]) -> None:
    if problems:
        raise GkeError(f"Invalid {kind} input (nothing was sent to GKE): " + "; ".join(problems) + ".")


def validate_cluster(request: ClusterRequest) -> None:
    """gke_cluster's request checked before any API call: its options first, then its credential, endpoint and
    project (``Access.error``, what ``credentials.check_auth`` raises)."""
    access = request.access
    problems = common_problems({"name": request.name}, request.location, access.timeout, access.poll_interval)
    if request.state == "present":
        version = request.version or ""
        parsed = parse_version(version)
        if parsed is None:
            problems.append(f"version {version!r} is not a GKE version such as 1.34 or 1.34.1-gke.1829001")
        elif parsed[:2] < MIN_CLUSTER_VERSION:
            problems.append(
                f"version {version} is refused: planb needs GKE 1.34 or later "
                "(set version/GKE_VERSION to 1.34 or newer)"
            )
        machine = request.default_pool_machine_type or ""
        if not MACHINE.fullmatch(machine):
            problems.append(f"default_pool_machine_type {machine!r} is not a machine type such as n2-standard-16")
        if request.default_pool_node_count < 1:
            problems.append("default_pool_node_count must be at least 1")
        problems += option_problems(
            master_ipv4_cidr=request.master_ipv4_cidr,
            private_nodes=request.private_nodes,
            node_service_account=request.node_service_account,
            release_channel=request.release_channel,
            master_authorized_networks=request.master_authorized_networks,
        )
        problems += default_pool_autoscaling_problems(
            request.default_pool_min_node_count, request.default_pool_max_node_count, request.default_pool_node_count
        )
        problems += label_problems("labels", request.labels)
    raise_problems("cluster", problems)
    if access.error:
        raise GkeError(access.error)
