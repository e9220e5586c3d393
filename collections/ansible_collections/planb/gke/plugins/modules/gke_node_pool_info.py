#!/usr/bin/python
# planb: read GKE node pools (GKE REST API v1), e.g. to verify config.flexStart.

DOCUMENTATION = r"""
module: gke_node_pool_info
short_description: Read one GKE node pool or list the node pools of a cluster
version_added: "0.1.0"
description:
  - Read-only; runs in check mode too.
options:
  name:
    description: Node pool name; omit to list every pool of O(cluster).
    type: str
  cluster:
    description: Cluster name.
    type: str
    required: true
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - planb.gke.gke_auth
  - planb.gke.gke_auth.reader
  - planb.gke.gke_auth.info
author:
  - planb engineers (@planb)
"""

EXAMPLES = r"""
- name: Read the DWS pool
  planb.gke.gke_node_pool_info:
    name: dws-pool
    cluster: tpu-cluster
    location: us-east5-b
"""

RETURN = r"""
node_pools:
  description: The node pools found (GKE v1 NodePool bodies); V([]) when the named one does not exist.
  returned: always
  type: list
  elements: dict
  sample:
    - name: dws-pool
      status: RUNNING
      version: 1.34.1-gke.1829001
      config: {machineType: ct6e-standard-4t, flexStart: true}
      queuedProvisioning: {enabled: true}
  contains:
    name:
      description: The node pool's name.
      returned: always
      type: str
      sample: dws-pool
    status:
      description: GKE's status of the node pool (C(PROVISIONING), C(RUNNING), C(RECONCILING), C(STOPPING), C(ERROR)).
      returned: always
      type: str
      sample: RUNNING
    config:
      description: The nodes' configuration; C(config.flexStart) tells a flex-start pool.
      returned: always
      type: dict
      sample: {machineType: ct6e-standard-4t, flexStart: true}
exists:
  description: Whether the named node pool exists.
  returned: when O(name) is given
  type: bool
  sample: true
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.args import AUTH_ARGSPEC, AUTH_RELATIONS  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.converge import main_wrapper  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.info import run_info  # noqa: E402

ARGUMENT_SPEC = dict(
    AUTH_ARGSPEC,
    name={"type": "str"},
    cluster={"type": "str", "required": True},
    location={"type": "str", "required": True},
)
RELATIONS = AUTH_RELATIONS


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True, **RELATIONS)
    main_wrapper(module, run_info, "node_pool")


if __name__ == "__main__":
    main()
