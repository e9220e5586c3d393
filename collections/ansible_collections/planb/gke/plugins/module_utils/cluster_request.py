# planb.gke: what the gke_cluster module is asked: its argument spec, and the options read into a typed request.
"""gke_cluster's argument spec, and ClusterRequest: its options read once into a frozen, typed request, defaults
applied from that spec and the credential resolved (``credentials.Access``). validate.py checks it, bodies.py builds
the Cluster body from it, and the converge reads it; nothing below gke_cluster's logic (cluster.py) reads the module
or its options again."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from ansible_collections.planb.gke.plugins.module_utils.args import (
    AUTH_ARGSPEC,
    AUTH_RELATIONS,
    CONVERGE_ARGSPEC,
    Relations,
    Spec,
    with_relations,
)
from ansible_collections.planb.gke.plugins.module_utils.credentials import Access

Params = dict[str, Any]

#: gke_cluster's options, as AnsibleModule takes them (the module and its action plugin share it); the module's
#: DOCUMENTATION describes each. A new option needs a ClusterRequest field of its name (tests/unit fail otherwise).
CLUSTER_ARGSPEC: Spec = dict(
    AUTH_ARGSPEC,
    name={"type": "str", "required": True},
    location={"type": "str", "required": True},
    state={"type": "str", "choices": ["present", "absent"], "default": "present"},
    version={"type": "str", "default": "1.34"},
    default_pool_machine_type={"type": "str", "default": "n2-standard-16"},
    default_pool_node_count={"type": "int", "default": 1},
    default_pool_min_node_count={"type": "int"},
    default_pool_max_node_count={"type": "int"},
    ray_operator={"type": "bool", "default": True},
    image_streaming={"type": "bool", "default": True},
    labels={"type": "dict"},
    cost_allocation={"type": "bool"},
    master_authorized_networks={"type": "list", "elements": "str"},
    workload_identity={"type": "bool"},
    dataplane_v2={"type": "bool", "default": True},
    network={"type": "str"},
    subnetwork={"type": "str"},
    private_nodes={"type": "bool", "default": False},
    master_ipv4_cidr={"type": "str"},
    node_service_account={"type": "str"},
    release_channel={"type": "str"},
    shielded_nodes={"type": "bool", "default": True},
    secure_boot={"type": "bool", "default": True},
    cluster_secondary_range_name={"type": "str"},
    services_secondary_range_name={"type": "str"},
    recreate_on_error={"type": "bool", "default": False},
    **CONVERGE_ARGSPEC,
)

#: The relations of gke_cluster's options (AnsibleModule's keyword arguments; the module and its action plugin share
#: them). A Shared VPC's pods and services ranges go together, as gcloud's --cluster-secondary-range-name and
#: --services-secondary-range-name do on GKE's Shared VPC page
#: (https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-shared-vpc), and they are ranges of the named
#: subnetwork (IPAllocationPolicy: "an existing secondary range associated with the cluster subnetwork"): planb's
#: policy asks for the subnetwork with them, because without it GKE picks the network's subnet in the region, which
#: the day-0 check cannot read.
CLUSTER_RELATIONS: Relations = with_relations(
    AUTH_RELATIONS,
    required_together=[
        ("cluster_secondary_range_name", "services_secondary_range_name"),
        # default-pool's autoscaling bounds go together (NodePoolAutoscaling's minNodeCount and maxNodeCount).
        ("default_pool_min_node_count", "default_pool_max_node_count"),
    ],
    required_by={"cluster_secondary_range_name": ("subnetwork",), "services_secondary_range_name": ("subnetwork",)},
)


@dataclass(frozen=True)
class ClusterRequest:
    """gke_cluster's options, one field each (the credential's as ``access``), defaults from CLUSTER_ARGSPEC."""

    name: str
    location: str
    #: "" when neither the option nor GCP_PROJECT gives one (access.error says so).
    project: str
    access: Access
    state: str
    version: str
    default_pool_machine_type: str
    default_pool_node_count: int
    default_pool_min_node_count: int | None
    default_pool_max_node_count: int | None
    ray_operator: bool
    image_streaming: bool
    labels: dict[str, Any] | None
    cost_allocation: bool | None
    master_authorized_networks: list[str] | None
    workload_identity: bool | None
    dataplane_v2: bool
    network: str | None
    subnetwork: str | None
    private_nodes: bool
    master_ipv4_cidr: str | None
    node_service_account: str | None
    release_channel: str | None
    shielded_nodes: bool
    secure_boot: bool
    cluster_secondary_range_name: str | None
    services_secondary_range_name: str | None
    recreate_on_error: bool
    wait: bool
    validate_only: bool
    check_mode: bool = False

    @classmethod
    def of(cls, params: Params, check_mode: bool = False) -> ClusterRequest:
        """The request of gke_cluster's options (AnsibleModule's params); an option that is absent takes the argument
        spec's default. Nothing is checked here: validate.validate_cluster checks the request, access.error included."""
        given: Params = {name: params.get(name, CLUSTER_ARGSPEC[name].get("default")) for name in _OPTIONS}
        return cls(
            name=str(params.get("name") or ""),
            location=str(params.get("location") or ""),
            project=str(params.get("project") or ""),
            access=Access.of(params),
            check_mode=check_mode,
            **given,
        )


#: The fields read as the options of their name are (name, location, project and access are read above).
_OPTIONS = tuple(
    f.name for f in fields(ClusterRequest) if f.name not in ("name", "location", "project", "access", "check_mode")
)
