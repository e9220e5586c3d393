#!/usr/bin/python
# planb: Cloud NAT for private nodes, a NAT gateway on a Cloud Router of the nodes' network (Compute Engine API v1).

DOCUMENTATION = r"""
module: gcp_router_nat
short_description: Give private nodes Cloud NAT, a NAT gateway on a Cloud Router of their network
version_added: "0.1.0"
description:
  - Reads the Cloud Router O(router) in the region of O(location) (C(routers.get)) in the network's project (a Shared
    VPC's host project owns it), and creates it on O(network) with the NAT gateway O(nat) (C(routers.insert)), or adds
    the NAT to a router of that network that has none (C(routers.patch)), waiting for the regional operation.
    U(https://cloud.google.com/compute/docs/reference/rest/v1/routers)
  - The NAT is Google's example for GKE private nodes, automatic external addresses for every subnet's ranges
    (U(https://cloud.google.com/nat/docs/gke-example)), so the nodes pull images and packages from the internet.
  - A router that already has a NAT gateway is left as it is (planb's policy - the organisation's ports and addresses
    are not planb's to change); one on another network is refused, naming the fix.
  - A router it creates carries the description C(Cloud NAT for GKE private nodes, created by planb
    (planb.gke.gcp_router_nat)). With O(state=absent) (teardown) such a router is deleted with its NAT
    (C(routers.delete)); from any other router only the NAT O(nat) with planb's settings is removed (C(routers.patch)),
    the router and its other NATs stay.
  - In check mode nothing is written; what would be is reported as a change, with a diff.
options:
  location:
    description: The cluster's zone or region; the router is in its region.
    type: str
    required: true
  network:
    description:
      - The nodes' VPC network, a name or C(projects/HOST/global/networks/NAME) (a Shared VPC's); default C(default).
    type: str
  router:
    description: The Cloud Router's name.
    type: str
    default: planb-nat-router
  nat:
    description: The NAT gateway's name on the router.
    type: str
    default: planb-nat
  state:
    description: V(present) makes the NAT, V(absent) removes what V(present) made (teardown).
    type: str
    choices: [present, absent]
    default: present
  compute_endpoint:
    description:
      - Base URL of the Compute Engine API. Default C(https://compute.googleapis.com), or O(api_endpoint) plus
        C(/compute) when that is a loopback address (planb's GKE emulator).
    type: str
attributes:
  check_mode:
    support: full
    details: Reads the router and reports what would be created, added or removed; writes nothing.
  diff_mode:
    support: full
    details: The router created or deleted, or the NAT added or removed.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - planb.gke.gke_auth
notes:
  - Needs C(compute.routers.get), C(compute.routers.create) and C(compute.routers.update) in the network's project
    (C(roles/compute.networkAdmin)); with O(state=absent) C(compute.routers.get), C(compute.routers.delete) and
    C(compute.routers.update).
author:
  - planb engineers (@planb)
"""

EXAMPLES = r"""
- name: Cloud NAT for the private nodes of the cluster in us-east5-b
  planb.gke.gcp_router_nat:
    project: my-project
    location: us-east5-b
    network: planb-vpc

- name: Remove that NAT at teardown (the router too, when planb created it)
  planb.gke.gcp_router_nat:
    project: my-project
    location: us-east5-b
    network: planb-vpc
    state: absent
"""

RETURN = r"""
router:
  description: The router as Compute Engine answers it, or the body created (in check mode, that would be).
  returned: always
  type: dict
  sample:
    name: planb-nat-router
    description: Cloud NAT for GKE private nodes, created by planb (planb.gke.gcp_router_nat)
    network: projects/my-project/global/networks/planb-vpc
    nats:
      - {name: planb-nat, natIpAllocateOption: AUTO_ONLY, sourceSubnetworkIpRangesToNat: ALL_SUBNETWORKS_ALL_IP_RANGES}
actions:
  description: >-
    V(create router), V(add nat), V(delete router) or V(remove nat) when written (or, in check mode, to be); empty
    otherwise.
  returned: always
  type: list
  elements: str
  sample: [create router]
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.args import AUTH_ARGSPEC, AUTH_RELATIONS  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.converge import main_wrapper  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.router_nat import run_router_nat  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.router_nat_removal import remove_router_nat  # noqa: E402

ARGUMENT_SPEC = dict(
    AUTH_ARGSPEC,
    location={"type": "str", "required": True},
    network={"type": "str"},
    router={"type": "str", "default": "planb-nat-router"},
    nat={"type": "str", "default": "planb-nat"},
    state={"type": "str", "choices": ["present", "absent"], "default": "present"},
    compute_endpoint={"type": "str"},
)
RELATIONS = AUTH_RELATIONS


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True, **RELATIONS)
    main_wrapper(module, run_router_nat if module.params["state"] == "present" else remove_router_nat)


if __name__ == "__main__":
    main()
