#!/usr/bin/python
# planb: read a Compute Engine reservation and check that a node pool can consume it (Compute Engine API v1).

DOCUMENTATION = r"""
module: gcp_reservation_info
short_description: Read a Compute Engine reservation and fail when a node pool could not consume it
version_added: "0.1.0"
description:
  - Reads C(projects/P/zones/Z/reservations/NAME) with the Compute Engine API v1 (or the planb GKE emulator's).
  - With O(machine_type) (and optionally O(vm_count), O(tpu_topology)) it also checks what a GKE node pool that
    consumes the reservation by name (SPECIFIC_RESERVATION) needs, and fails naming every problem and its fix - the
    reservation does not exist in O(location); it belongs to another project and is not shared with O(project)
    (SPECIFIC_PROJECTS naming it, or ORGANIZATION); its shape does not match the pool; planb's policy - it is not
    specificReservationRequired (see O(require_specific)), not READY, or holds fewer than O(vm_count) VMs (or their
    TPU chips). U(https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations)
  - Both shapes are matched as GKE's autoscaler matches them (GoogleCloudPlatform/cluster-autoscaler
    C(pkg/reservations/matcher.go)) - a C(specificReservation) reserves the pool's machine type; an
    C(aggregateReservation), how Google reserves TPUs, serves only a TPU pool, holds chips of the pool's machine
    family (C(acceleratorTypes/ct6e) for C(ct6e-standard-4t)) and at least one slice's chips, and is C(BATCH) for a
    multi-host slice (C(SERVING) for a single-host pool; C(UNSPECIFIED) for either).
  - Without O(machine_type) it only reads, and reports O(ignore:exists) false for a missing reservation.
  - Read-only; runs in check mode too. playbooks/cluster.yml runs it for every reservation plan before any change.
options:
  name:
    description:
      - The reservation's name (a reservation of O(project)), or C(projects/<owner project>/reservations/<name>) for
        one shared from another project.
    type: str
    required: true
  location:
    description: The zone of the reservation, which is the zone of the pool that consumes it (a zone, not a region).
    type: str
    required: true
  machine_type:
    description: The consuming pool's machine type, for example C(ct6e-standard-4t); given, the checks run.
    type: str
  vm_count:
    description:
      - VMs the consuming plan needs at most (its slices times the hosts of one slice); planb's policy. Against an
        aggregate reservation, their TPU chips.
    type: int
  tpu_topology:
    description:
      - The consuming pool's TPU slice topology, for example C(4x4); unset, a TPU pool is one VM (single-host). An
        aggregate reservation is matched against it (chips of one slice, BATCH for a multi-host slice).
    type: str
  require_specific:
    description:
      - Refuse a reservation whose C(specificReservationRequired) is false (planb's policy - VMs with the default
        affinity ANY_RESERVATION could drain it). V(false) accepts it.
    type: bool
    default: true
  compute_endpoint:
    description:
      - Base URL of the Compute Engine API. Default C(https://compute.googleapis.com/compute), or
        C(<api_endpoint>/compute) when O(api_endpoint) is a loopback address (planb's emulator).
    type: str
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - planb.gke.gke_auth
  - planb.gke.gke_auth.reader
notes:
  - O(project) is the project of the cluster that consumes the reservation; the reservation is read from the owner
    project its path names, which needs C(compute.reservations.get) there.
author:
  - planb engineers (@planb)
"""

EXAMPLES = r"""
- name: The reservation plan's pools can consume tpu-v6e-res (one 4x4 slice - 4 VMs of ct6e-standard-4t)
  planb.gke.gcp_reservation_info:
    name: tpu-v6e-res
    location: us-east5-b
    project: my-project
    auth_kind: application
    machine_type: ct6e-standard-4t
    tpu_topology: 4x4
    vm_count: 4
"""

RETURN = r"""
exists:
  description: Whether the reservation exists.
  returned: always
  type: bool
  sample: true
reservation:
  description: The reservation as Compute Engine returns it; V({}) when it does not exist.
  returned: always
  type: dict
  sample:
    name: v6e-reservation
    zone: https://www.googleapis.com/compute/v1/projects/my-project/zones/us-east5-b
    specificReservationRequired: true
    status: READY
    specificReservation:
      count: "4"
      inUseCount: "0"
      instanceProperties: {machineType: ct6e-standard-4t}
checked:
  description: Whether the consumption checks ran (O(machine_type) given) and passed.
  returned: always
  type: bool
  sample: true
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.args import AUTH_ARGSPEC, AUTH_RELATIONS  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.converge import main_wrapper  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.reservation import run_reservation_info  # noqa: E402

ARGUMENT_SPEC = dict(
    AUTH_ARGSPEC,
    name={"type": "str", "required": True},
    location={"type": "str", "required": True},
    machine_type={"type": "str"},
    vm_count={"type": "int"},
    tpu_topology={"type": "str"},
    require_specific={"type": "bool", "default": True},
    compute_endpoint={"type": "str"},
)
RELATIONS = AUTH_RELATIONS


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True, **RELATIONS)
    main_wrapper(module, run_reservation_info)


if __name__ == "__main__":
    main()
