#!/usr/bin/python
# planb: the day-0 check - every blocker of a project for planb, read at once, reported once; writes nothing.

DOCUMENTATION = r"""
module: gcp_project_check
short_description: Report every blocker of a project for planb at once, before anything is created
version_added: "0.1.0"
description:
  - Reads, and never writes or enables, everything that would stop planb's run on a project, and fails once with one
    report listing every blocker, each with its fix. Without a blocker it passes and lists what it could not read as
    warnings.
  - V(apis) the APIs planb needs that are off (Service Usage C(services.get)); when Service Usage itself is off, one
    blocker says to turn on C(serviceusage.googleapis.com) first, and the command that turns on the rest.
  - The caller's rights (the table and the call of P(planb.gke.gcp_iam_check#module), plus the rights of this check's
    own reads), with C(serviceusage.services.use) on a quota project when the calls name one.
  - Quotas (Cloud Quotas API, as P(planb.gke.gcp_quota_check#module) reads them) - one slice's accelerator quota for
    each kind of rung, on-demand (an on-demand rung) and preemptible (DWS and Spot rungs), and the CPU quotas of the
    default pool's machine family and of all regions; each blocker links the quota request and says that Google's
    approval can take days.
  - Organisation policies planb's bodies would break, read with the Org Policy API v2 effective policy
    (C(projects.policies.getEffectivePolicy)) - C(constraints/compute.requireShieldedVm) (without O(secure_boot)),
    C(constraints/compute.vmExternalIpAccess) (without O(private_nodes)), C(constraints/gcp.resourceLocations)
    (the cluster's zone) and, with O(master_ipv4_cidr), C(constraints/compute.restrictVpcPeering) - the control
    plane's range asks GKE for the VPC Network Peering form, which GKE refuses under a policy that forbids peering
    only after it accepted the create call; the fix is the Private Service Connect form (no O(master_ipv4_cidr)).
  - C(constraints/compute.trustedImageProjects) without C(projects/gke-node-images), where GKE's node images come
    from, and C(constraints/gcp.restrictNonCmekServices) requiring a customer-managed key of GKE, Compute Engine or
    Cloud Storage, which planb's cluster, boot disks and bucket are made without; each names the policy and the fix.
  - The network (the project's C(default) unless O(network) names one), the O(subnetwork) and its O(secondary_ranges);
    with O(private_nodes), a Cloud NAT gateway in the region (Compute Engine C(routers.list); planb's policy, see
    O(cloud_nat)) and, with O(master_ipv4_cidr), a note naming the firewall rule for Kueue's webhook on TCP 9443.
  - The nodes' service account (O(node_service_account), else the Compute Engine default one) holds
    C(roles/container.defaultNodeServiceAccount) on the project (Cloud Resource Manager v3 C(projects.getIamPolicy)).
  - Each DWS rung's zone is one GKE's flex-start page lists for the generation (the catalog's dated copy).
  - Each blocker says whose rule it is, Google's (Google refuses or requires it) or planb's policy, with its reason.
options:
  location:
    description: The cluster's zone or region.
    type: str
    required: true
  tpu_zone:
    description: The TPU pools' zone of a regional cluster; V("") for a zonal one.
    type: str
    default: ""
  machine_type:
    description: The machine type of the profile's pools, for example C(ct6e-standard-4t).
    type: str
    required: true
  needed:
    description: TPU chips or GPUs of one slice.
    type: int
    required: true
  rungs:
    description: The ladder's rungs, each C({name, kind}); V(kind) decides the quota a rung draws on.
    type: list
    elements: dict
    default: []
  default_pool_machine_type:
    description: The CPU pool's machine type; its vCPUs are checked against the CPU quotas.
    type: str
    default: n2-standard-16
  default_pool_node_count:
    description: Nodes of the CPU pool.
    type: int
    default: 1
  apis:
    description: The APIs the run needs besides those this check always reads (Service Usage, Cloud Resource
      Manager, Compute Engine, Cloud Quotas, Org Policy).
    type: list
    elements: str
    default: [container.googleapis.com, tpu.googleapis.com]
  needs:
    description: What the run does, as in P(planb.gke.gcp_iam_check#module)'s O(planb.gke.gcp_iam_check#module:needs).
    type: list
    elements: str
    default: [cluster, apis]
    choices: [cluster, kubeconfig, apis, enable_apis, quota, reservations, recreate_on_error, bucket, create_bucket,
              cloud_nat]
  network:
    description: The VPC network (a name, or C(projects/HOST/global/networks/NAME)); V("") the project's default.
    type: str
    default: ""
  subnetwork:
    description: The subnetwork in the cluster's region (a name, or C(projects/HOST/regions/R/subnetworks/NAME)).
    type: str
    default: ""
  secondary_ranges:
    description: Secondary range names the subnetwork must hold (the pods' and services' ranges of a Shared VPC).
    type: list
    elements: str
    default: []
  private_nodes:
    description: Whether the cluster's nodes have no external IP address.
    type: bool
    default: false
  cloud_nat:
    description: With O(private_nodes), require a Cloud NAT gateway on the network in the cluster's region (false - a
      mirror serves the images and packages).
    type: bool
    default: true
  master_ipv4_cidr:
    description: The control plane's range with O(private_nodes) (GKE's VPC Network Peering form); set, a note names
      the firewall rule Kueue's webhook (TCP 9443) needs, and C(constraints/compute.restrictVpcPeering) is read.
    type: str
    default: ""
  secure_boot:
    description: Whether the pools' nodes boot with Shielded VM secure boot (what the cluster play sends, by default).
    type: bool
    default: true
  node_service_account:
    description: The nodes' service account; V("") the Compute Engine default one.
    type: str
    default: ""
  serviceusage_endpoint:
    description: Base URL of the Service Usage API (default Google's, or under a loopback O(api_endpoint)).
    type: str
  quota_endpoint:
    description: Base URL of the Cloud Quotas API (default Google's, or under a loopback O(api_endpoint)).
    type: str
  resourcemanager_endpoint:
    description: Base URL of the Cloud Resource Manager API (default Google's, or under a loopback O(api_endpoint)).
    type: str
  orgpolicy_endpoint:
    description: Base URL of the Organization Policy API (default Google's, or under a loopback O(api_endpoint)).
    type: str
  compute_endpoint:
    description: Base URL of the Compute Engine API (default Google's, or under a loopback O(api_endpoint)).
    type: str
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - planb.gke.gke_auth
  - planb.gke.gke_auth.reader
notes:
  - Needs Cloud Resource Manager on the project billed for the calls; every other API it reads may be off, and is
    then a blocker naming it.
  - Read-only; runs in check mode too.
author:
  - planb engineers (@planb)
"""

EXAMPLES = r"""
- name: Every blocker of the project for the tutorial's two rungs, in one report
  planb.gke.gcp_project_check:
    project: my-project
    auth_kind: application
    location: us-east5-b
    machine_type: ct6e-standard-4t
    needed: 16
    rungs: [{name: on-demand, kind: on-demand}, {name: dws, kind: dws}]
"""

RETURN = r"""
blockers:
  description: Every blocker found; the module fails when there is one.
  returned: always
  type: list
  elements: dict
  sample:
    - area: quota
      what: project p has 0 chips of on-demand quota 'TPUs per TPU family' (tpu_family=CT6E) in us-east5
      fix: request an increase ...
      by: google
      service: ""
  contains:
    area:
      description: V(apis), V(rights), V(quota), V(org_policy), V(network), V(node_service_account) or V(flex_start).
      returned: always
      type: str
      sample: quota
    what:
      description: What blocks the run, and whose rule it is.
      returned: always
      type: str
      sample: the API container.googleapis.com is off on project p
    fix:
      description: The fix - a command, a link, the role to grant.
      returned: always
      type: str
      sample: gcloud services enable container.googleapis.com --project p
    by:
      description: V(google) when Google refuses or requires it, V(planb) for planb's policy.
      returned: always
      type: str
      sample: google
    service:
      description: The API an V(apis) blocker names, else V("").
      returned: always
      type: str
      sample: container.googleapis.com
notes:
  description: What the check could not read or decide, in the same shape as RV(blockers); warnings, not failures.
  returned: always
  type: list
  elements: dict
  sample: []
"""

from typing import Any  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.args import AUTH_ARGSPEC, AUTH_RELATIONS  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.converge import main_wrapper  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.iam import NEEDS  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.project_check import run_project_check  # noqa: E402

ARGUMENT_SPEC = dict(
    AUTH_ARGSPEC,
    location={"type": "str", "required": True},
    tpu_zone={"type": "str", "default": ""},
    machine_type={"type": "str", "required": True},
    needed={"type": "int", "required": True},
    rungs={"type": "list", "elements": "dict", "default": []},
    default_pool_machine_type={"type": "str", "default": "n2-standard-16"},
    default_pool_node_count={"type": "int", "default": 1},
    apis={"type": "list", "elements": "str", "default": ["container.googleapis.com", "tpu.googleapis.com"]},
    needs={"type": "list", "elements": "str", "default": ["cluster", "apis"], "choices": list(NEEDS)},
    network={"type": "str", "default": ""},
    subnetwork={"type": "str", "default": ""},
    secondary_ranges={"type": "list", "elements": "str", "default": []},
    private_nodes={"type": "bool", "default": False},
    secure_boot={"type": "bool", "default": True},
    cloud_nat={"type": "bool", "default": True},
    master_ipv4_cidr={"type": "str", "default": ""},
    node_service_account={"type": "str", "default": ""},
    serviceusage_endpoint={"type": "str"},
    quota_endpoint={"type": "str"},
    resourcemanager_endpoint={"type": "str"},
    orgpolicy_endpoint={"type": "str"},
    compute_endpoint={"type": "str"},
)
RELATIONS = AUTH_RELATIONS


def _check(module: AnsibleModule) -> dict[str, Any]:
    """The check's result; any blocker fails the module with the whole result (the report is its msg)."""
    result = run_project_check(module)
    if result["blockers"]:
        module.fail_json(**result)
    return result


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True, **RELATIONS)
    main_wrapper(module, _check)


if __name__ == "__main__":
    main()
