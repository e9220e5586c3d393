# planb.gke: what the gke_cluster module is asked, typed.
"""ClusterRequest: gke_cluster's options read once into a frozen, typed request, with the credential resolved
(``credentials.Access``). validate.py checks it, bodies.py builds the Cluster body from it, and the converge reads
it; nothing below gke_cluster's logic (cluster.py) reads the module or its options again."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ansible_collections.planb.gke.plugins.module_utils.credentials import Access

Params = dict[str, Any]


@dataclass(frozen=True)
class ClusterRequest:
    """gke_cluster's options, defaults applied as the argument spec (modules/gke_cluster.py) declares them."""

    name: str
    location: str
    #: "" when neither the option nor GCP_PROJECT gives one (access.error says so).
    project: str
    access: Access
    state: str = "present"
    version: str = "1.34"
    default_pool_machine_type: str = "n2-standard-16"
    default_pool_node_count: int = 1
    ray_operator: bool = True
    image_streaming: bool = True
    labels: dict[str, Any] | None = None
    workload_identity: bool | None = None
    dataplane_v2: bool = True
    network: str | None = None
    subnetwork: str | None = None
    private_nodes: bool = False
    master_ipv4_cidr: str | None = None
    node_service_account: str | None = None
    release_channel: str | None = None
    recreate_on_error: bool = False
    wait: bool = True
    validate_only: bool = False
    check_mode: bool = False

    @classmethod
    def of(cls, params: Params, check_mode: bool = False) -> ClusterRequest:
        """The request of gke_cluster's options (AnsibleModule's params); an option that is absent takes its
        default. Nothing is checked here: validate.validate_cluster checks the request, access.error included."""
        given = {name: params[name] for name in _OPTIONS if name in params}
        return cls(
            name=str(params.get("name") or ""),
            location=str(params.get("location") or ""),
            project=str(params.get("project") or ""),
            access=Access.of(params),
            check_mode=check_mode,
            **given,
        )


#: The options read as they are (name, location, project and the credential's options are read above).
_OPTIONS = (
    "state",
    "version",
    "default_pool_machine_type",
    "default_pool_node_count",
    "ray_operator",
    "image_streaming",
    "labels",
    "workload_identity",
    "dataplane_v2",
    "network",
    "subnetwork",
    "private_nodes",
    "master_ipv4_cidr",
    "node_service_account",
    "release_channel",
    "recreate_on_error",
    "wait",
    "validate_only",
)
