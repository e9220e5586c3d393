#!/usr/bin/python
# planb: does the project's on-demand or preemptible Compute Engine quota in the region fit one slice (Cloud Quotas)?

DOCUMENTATION = r"""
module: gcp_quota_check
short_description: Fail before anything is created when the project's accelerator quota cannot fit one slice
version_added: "0.1.0"
description:
  - GKE TPU and GPU node pools consume Compute Engine quota (U(https://cloud.google.com/tpu/docs/consumption-options)).
    The module lists the project's Compute Engine QuotaInfos with the Cloud Quotas API v1
    (C(projects/P/locations/global/services/compute.googleapis.com/quotaInfos)), finds the O(quota_type) quota a
    pool of O(machine_type) consumes by its display name and dimensions (from planb's catalog; no quota ID is
    assumed), takes the value in effect for the region of O(location), and fails when it is below O(needed),
    naming the number found, the number needed and the fix.
  - Google names the v6e and TPU7x preemptible quotas "Preemptible TPU slices ..." without saying whether one unit
    is a chip or a slice, so for them only 0 fails; a value of at least O(needed) passes, and one between warns
    that it cannot tell.
  - When the catalog names no sourced quota for the machine type, or the project's list holds none of that name,
    it does not fail and says it could not check.
  - Read-only; runs in check mode too.
options:
  location:
    description: The cluster's zone or region; the quota of its region is read.
    type: str
    required: true
  machine_type:
    description: The pool's machine type, for example C(ct6e-standard-4t).
    type: str
    required: true
  needed:
    description: TPU chips or GPUs that must fit (one slice).
    type: int
    required: true
  quota_type:
    description:
      - V(on-demand), the quota an on-demand pool (plan A) draws on, or V(preemptible), the quota Spot pools and
        flex-start pools with queued provisioning (DWS, plan B) draw on
        (U(https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest),
        U(https://cloud.google.com/kubernetes-engine/docs/how-to/tpus#ensure-quota)).
    type: str
    choices: [on-demand, preemptible]
    default: on-demand
  fail_when_short:
    description:
      - V(true) fails when one slice does not fit. V(false) reports it instead (RV(short), a warning naming the quota,
        the request link and that Google's approval can take days), for a play that creates what needs no such quota
        and leaves the pools that do (the cluster play, where the quota gates the pools that draw on it, not the
        cluster).
    type: bool
    default: true
  quota_endpoint:
    description:
      - Base URL of the Cloud Quotas API. Default C(https://cloudquotas.googleapis.com), or
        C(<api_endpoint>/cloudquotas) when O(api_endpoint) is a loopback address (planb's emulator).
    type: str
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - planb.gke.gke_auth
  - planb.gke.gke_auth.reader
notes:
  - Needs the Cloud Quotas API (C(cloudquotas.googleapis.com)) enabled and C(cloudquotas.quotas.get)
    (C(roles/cloudquotas.viewer)).
  - A reservation plan's VMs took their quota when the reservation was made; its quota is not checked here.
author:
  - planb engineers (@planb)
"""

EXAMPLES = r"""
- name: One slice of tpu-v6e-4x4 (16 chips) must fit plan A's quota in us-east5
  planb.gke.gcp_quota_check:
    project: my-project
    auth_kind: application
    location: us-east5-b
    machine_type: ct6e-standard-4t
    needed: 16

- name: And the preemptible quota, which plan B (DWS flex-start) and Spot pools draw on
  planb.gke.gcp_quota_check:
    project: my-project
    auth_kind: application
    location: us-east5-b
    machine_type: ct6e-standard-4t
    needed: 16
    quota_type: preemptible
"""

RETURN = r"""
checked:
  description: Whether a quota was found and compared.
  returned: always
  type: bool
  sample: true
region:
  description: The region whose quota was read.
  returned: always
  type: str
  sample: us-east5
needed:
  description: The number that must fit.
  returned: always
  type: int
  sample: 16
quota_type:
  description: The type of quota read, on-demand or preemptible.
  returned: always
  type: str
  sample: on-demand
short:
  description: Whether one slice does not fit the quota (only with O(fail_when_short=false); else the module fails).
  returned: always
  type: bool
  sample: false
request_url:
  description: Google's page on requesting a quota increase.
  returned: when short
  type: str
  sample: https://cloud.google.com/docs/quotas/help/request_increase
quota:
  description: The quota compared; V({}) when not checked.
  returned: always
  type: dict
  sample:
    display_name: TPUs per TPU family
    quota_id: TPUS-PER-TPU-FAMILY-per-project-region
    dimensions: {region: us-east5, tpu_family: CT6E}
    value: 32
    unit: chips
  contains:
    display_name:
      description: The quota's name in the Cloud console.
      returned: when checked
      type: str
      sample: TPUs per TPU family
    quota_id:
      description: The Cloud Quotas API's quota ID.
      returned: when checked
      type: str
      sample: TPUS-PER-TPU-FAMILY-per-project-region
    dimensions:
      description: The dimensions the value applies to.
      returned: when checked
      type: dict
      sample: {region: us-east5, tpu_family: CT6E}
    value:
      description: The quota's value; negative means no limit.
      returned: when checked
      type: int
      sample: 32
    unit:
      description: What the value counts.
      returned: when checked
      type: str
      sample: chips
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.args import AUTH_ARGSPEC, AUTH_RELATIONS  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.converge import main_wrapper  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.project_apis import run_quota_check  # noqa: E402

ARGUMENT_SPEC = dict(
    AUTH_ARGSPEC,
    location={"type": "str", "required": True},
    machine_type={"type": "str", "required": True},
    needed={"type": "int", "required": True},
    quota_type={"type": "str", "choices": ["on-demand", "preemptible"], "default": "on-demand"},
    fail_when_short={"type": "bool", "default": True},
    quota_endpoint={"type": "str"},
)
RELATIONS = AUTH_RELATIONS


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True, **RELATIONS)
    main_wrapper(module, run_quota_check)


if __name__ == "__main__":
    main()
