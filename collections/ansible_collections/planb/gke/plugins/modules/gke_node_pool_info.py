#!/usr/bin/python
# planb: read GKE node pools (GKE REST API v1), e.g. to verify config.flexStart.

DOCUMENTATION = r"""
module: gke_node_pool_info
short_description: Read one GKE node pool or list the node pools of a cluster
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
  - planb.gke.gke_auth
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
  description: The node pools found (GKE v1 NodePool bodies).
  returned: always
  type: list
  elements: dict
exists:
  description: Whether the named node pool exists.
  returned: when name is given
  type: bool
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.args import AUTH_ARGSPEC  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.converge import main_wrapper  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.info import run_info  # noqa: E402

ARGUMENT_SPEC = dict(
    AUTH_ARGSPEC,
    name={"type": "str"},
    cluster={"type": "str", "required": True},
    location={"type": "str", "required": True},
)


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    main_wrapper(module, run_info, "node_pool")


if __name__ == "__main__":
    main()
