#!/usr/bin/python
# planb: read GKE clusters (GKE REST API v1).

DOCUMENTATION = r"""
module: gke_cluster_info
short_description: Read one GKE cluster or list the clusters of a location
version_added: "0.1.0"
description:
  - Read-only; runs in check mode too.
options:
  name:
    description: Cluster name; omit to list every cluster in O(location).
    type: str
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - planb.gke.gke_auth
  - planb.gke.gke_auth.reader
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
  description: The clusters found (GKE v1 Cluster bodies); V([]) when the named one does not exist.
  returned: always
  type: list
  elements: dict
  sample:
    - name: tpu-cluster
      location: us-east5-b
      status: RUNNING
      currentMasterVersion: 1.34.1-gke.1829001
  contains:
    name:
      description: The cluster's name.
      returned: always
      type: str
      sample: tpu-cluster
    status:
      description: GKE's status of the cluster (C(PROVISIONING), C(RUNNING), C(RECONCILING), C(STOPPING), C(ERROR)).
      returned: always
      type: str
      sample: RUNNING
    currentMasterVersion:
      description: The control plane's GKE version.
      returned: always
      type: str
      sample: 1.34.1-gke.1829001
    location:
      description: The cluster's zone or region.
      returned: always
      type: str
      sample: us-east5-b
exists:
  description: Whether the named cluster exists.
  returned: when O(name) is given
  type: bool
  sample: true
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.args import AUTH_ARGSPEC, AUTH_RELATIONS  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.converge import main_wrapper  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.info import run_info  # noqa: E402

ARGUMENT_SPEC = dict(AUTH_ARGSPEC, name={"type": "str"}, location={"type": "str", "required": True})
RELATIONS = AUTH_RELATIONS


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True, **RELATIONS)
    main_wrapper(module, run_info, "cluster")


if __name__ == "__main__":
    main()
