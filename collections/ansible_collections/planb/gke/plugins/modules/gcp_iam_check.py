#!/usr/bin/python
# planb: does the caller hold every permission the run uses on the project (Cloud Resource Manager v3)?

DOCUMENTATION = r"""
module: gcp_iam_check
short_description: Fail before anything is written when the caller lacks a permission the run uses
version_added: "0.1.0"
description:
  - Sends every IAM permission the run's O(needs) use in one Cloud Resource Manager v3 call,
    C(POST v3/projects/P:testIamPermissions)
    (U(https://cloud.google.com/resource-manager/reference/rest/v3/projects/testIamPermissions)), which answers the
    subset the caller holds on the project and itself needs no permission.
  - Fails naming each missing permission, the predefined role that grants it and what in the run needs it, so a
    missing right stops the play before its first write instead of failing the call that needs it half-way.
  - A permission Google checks on another resource (C(iam.serviceAccounts.actAs), on the nodes' service account;
    C(storage.buckets.get), on the checkpoint bucket) may be granted there alone; when the project does not grant
    it the module warns instead of failing.
  - When the calls name a quota project (C(x-goog-user-project), from O(quota_project) or the credential), the caller
    must hold C(serviceusage.services.use) on it (role C(roles/serviceusage.serviceUsageConsumer),
    U(https://cloud.google.com/docs/quotas/set-quota-project)); the module asks for it there too and fails without it.
  - The permissions and roles are one table in the collection (C(module_utils/iam.py)), which planb's
    docs/first-run.md prints.
  - Read-only; runs in check mode too.
options:
  needs:
    description:
      - What the run does, each naming the permissions it uses. V(cluster) the cluster and the plans' node pools,
        V(kubeconfig) the kubeconfig for C(gke-gcloud-auth-plugin), V(apis) the APIs' state read,
        V(enable_apis) APIs enabled, V(quota) plan A's quota read, V(reservations) a reservation plan's
        reservation read, V(recreate_on_error) a cluster or pool in ERROR recreated, V(bucket) the checkpoint
        bucket read, V(create_bucket) the checkpoint bucket created when missing, V(cloud_nat) Cloud NAT created.
    type: list
    elements: str
    required: true
    choices: [cluster, kubeconfig, apis, enable_apis, quota, reservations, recreate_on_error, bucket, create_bucket,
              cloud_nat]
  resourcemanager_endpoint:
    description:
      - Base URL of the Cloud Resource Manager API. Default C(https://cloudresourcemanager.googleapis.com), or
        C(<api_endpoint>/cloudresourcemanager) when O(api_endpoint) is a loopback address (planb's emulator).
    type: str
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - planb.gke.gke_auth
  - planb.gke.gke_auth.reader
notes:
  - The Cloud Resource Manager API (C(cloudresourcemanager.googleapis.com)) must be enabled on the project that bills
    the call; a 403 whose reason is C(SERVICE_DISABLED) names the command that enables it, one whose reason is
    C(USER_PROJECT_DENIED) the quota project's missing right, any other is reported as Google words it.
author:
  - planb engineers (@planb)
"""

EXAMPLES = r"""
- name: The caller may create the cluster, enable the APIs and read the quota, before any of it happens
  planb.gke.gcp_iam_check:
    project: my-project
    auth_kind: application
    needs: [cluster, kubeconfig, apis, enable_apis, quota]
"""

RETURN = r"""
checked:
  description: The permissions sent to testIamPermissions; C(serviceusage.services.use on project Q) when a quota
    project Q is named.
  returned: always
  type: list
  elements: str
  sample: [container.clusters.create, container.operations.get, iam.serviceAccounts.actAs]
missing:
  description: Each permission the caller lacks on the project; V([]) when none.
  returned: always
  type: list
  elements: dict
  sample:
    - permission: iam.serviceAccounts.actAs
      roles: [roles/iam.serviceAccountUser]
      task: create the nodes as their service account
      "on": the nodes' service account
  contains:
    permission:
      description: The permission.
      returned: always
      type: str
      sample: iam.serviceAccounts.actAs
    roles:
      description: Predefined roles that grant it, planb's recommendation first.
      returned: always
      type: list
      elements: str
      sample: [roles/iam.serviceAccountUser]
    task:
      description: What in the run uses it.
      returned: always
      type: str
      sample: create the nodes as their service account
    "on":
      description: Where Google checks it; a permission checked elsewhere than the project is a warning only.
      returned: always
      type: str
      sample: project
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.args import AUTH_ARGSPEC, AUTH_RELATIONS  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.converge import main_wrapper  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.iam import NEEDS, run_iam_check  # noqa: E402

ARGUMENT_SPEC = dict(
    AUTH_ARGSPEC,
    needs={"type": "list", "elements": "str", "required": True, "choices": list(NEEDS)},
    resourcemanager_endpoint={"type": "str"},
)
RELATIONS = AUTH_RELATIONS


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True, **RELATIONS)
    main_wrapper(module, run_iam_check)


if __name__ == "__main__":
    main()
