#!/usr/bin/python
# planb: read GKE clusters (GKE REST API v1).

DOCUMENTATION = r"""
module: gke_cluster_info
short_description: Read one GKE cluster or list the clusters of a location
description:
  - Read-only; runs in check mode too.
options:
  name:
    description: Cluster name; omit to list every cluster in O(location).
    type: str
extends_documentation_fragment:
  - planb.gke.gke_auth
  - planb.gke.gke_auth.info
author:
  - planb engineers (@planb)
"""

EXAMPLES = r"""
- name: Read the cluster
  planb.gke.gke_cluster_info:
    name: tpu-cluster
    location: us-east5-b
"""

RETURN = r"""
clusters:
  description: The clusters found (GKE v1 Cluster bodies).
  returned: always
  type: list
  elements: dict
exists:
  description: Whether the named cluster exists.
  returned: when name is given
  type: bool
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.args import AUTH_ARGSPEC  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.converge import main_wrapper  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.info import run_info  # noqa: E402

ARGUMENT_SPEC = dict(AUTH_ARGSPEC, name={"type": "str"}, location={"type": "str", "required": True})


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    main_wrapper(module, run_info, "cluster")


if __name__ == "__main__":
    main()
