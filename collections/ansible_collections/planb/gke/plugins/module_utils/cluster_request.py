# planb.gke: what the gke_cluster module is asked: its argument spec, and the options read into a typed request.
"""gke_cluster's argument spec, and ClusterRequest: its options read once into a frozen, typed request, defaults
applied from that spec and the credential resolved (``credentials.Access``). validate.py checks it, bodies.py builds
the Cluster body from it, and the converge reads it; nothing below gke_cluster's logic (cluster.py) reads the module
or its options again."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from ansible_collections.planb.gke.plugins.module_utils.args import AUTH_ARGSPEC, CONVERGE_ARGSPEC, Spec
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
    ray_operator={"type": "bool", "default": True},
    image_streaming={"type": "bool", "default": True},
    labels={"type": "dict"},
    workload_identity={"type": "bool"},
    dataplane_v2={"type": "bool", "default": True},
    network={"type": "str"},
    subnetwork={"type": "str"},
    private_nodes={"type": "bool", "default": False},
    master_ipv4_cidr={"type": "str"},
    node_service_account={"type": "str"},
    release_channel={"type": "str"},
    recreate_on_error={"type": "bool", "default": False},
    **CONVERGE_ARGSPEC,
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
    ray_operator: bool
    image_streaming: bool
    labels: dict[str, Any] | None
    workload_identity: bool | None
    dataplane_v2: bool
    network: str | None
    subnetwork: str | None
    private_nodes: bool
    master_ipv4_cidr: str | None
    node_service_account: str | None
    release_channel: str | None
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
