# planb.gke: what the gke_node_pool module is asked, typed.
"""NodePoolRequest: gke_node_pool's options read once into a frozen, typed request, defaults applied from its argument
spec (``node_pool_spec.NODE_POOL_ARGSPEC``) and the credential resolved (``credentials.Access``). validate.py checks
it, reservation.py checks the reservation it consumes, bodies.py builds the NodePool body from it, and the converge
reads it; nothing below gke_node_pool's logic (node_pool.py) reads the module or its options again."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from ansible_collections.planb.gke.plugins.module_utils.credentials import Access
from ansible_collections.planb.gke.plugins.module_utils.node_pool_spec import NODE_POOL_ARGSPEC

Params = dict[str, Any]


@dataclass(frozen=True)
class NodePoolRequest:
    """gke_node_pool's options, one field each (the credential's as ``access``), defaults from NODE_POOL_ARGSPEC."""

    name: str
    cluster: str
    location: str
    #: None when neither the option nor GCP_PROJECT gives one (access.error says so).
    project: str | None
    access: Access
    state: str
    machine_type: str | None
    tpu_topology: str | None
    placement_policy: str | None
    initial_node_count: int | None
    #: The autoscaling option's suboptions as given (enabled, min/max or total counts, location_policy).
    autoscaling: dict[str, Any] | None
    reservation_affinity: str | None
    reservation: str | None
    reservation_require_specific: bool
    compute_endpoint: str | None
    queued_provisioning: bool | None
    flex_start: bool | None
    spot: bool | None
    auto_repair: bool
    auto_upgrade: bool
    maintenance_exclusion: bool | None
    labels: dict[str, Any] | None
    resource_labels: dict[str, Any] | None
    #: Each taint's key, value and effect, as given.
    taints: list[dict[str, Any]] | None
    max_run_duration: str | None
    cluster_version: str | None
    node_locations: list[str] | None
    check_tpu_zone: bool
    workload_metadata_mode: str | None
    node_service_account: str | None
    secure_boot: bool
    accelerator_type: str | None
    accelerator_count: int | None
    gpu_driver_version: str | None
    recreate_on_error: bool
    wait: bool
    validate_only: bool
    check_mode: bool = False

    @classmethod
    def of(cls, params: Params, check_mode: bool = False) -> NodePoolRequest:
        """The request of gke_node_pool's options (AnsibleModule's params); an option that is absent takes the
        argument spec's default. Nothing is checked here: validate.validate_node_pool checks the request, access.error
        included."""
        given: Params = {name: params.get(name, NODE_POOL_ARGSPEC[name].get("default")) for name in _OPTIONS}
        return cls(access=Access.of(params), check_mode=check_mode, **given)


#: The fields read as the options of their name are (access is the credential's options, resolved above).
_OPTIONS = tuple(f.name for f in fields(NodePoolRequest) if f.name not in ("access", "check_mode"))
