#!/usr/bin/python
# planb: Google APIs enabled on a project (Service Usage API v1), reachable at planb's emulator too.

DOCUMENTATION = r"""
module: gcp_service
short_description: Make sure Google APIs are enabled on a project (the tutorial's "before you begin")
version_added: "0.1.0"
description:
  - Reads the state of each API with the Service Usage API v1 (C(GET projects/P/services/S)) and enables the
    disabled ones (C(POST projects/P/services/S:enable)), waiting for each long-running operation.
  - The google.cloud collection's C(gcp_serviceusage_service) does the same against Google only (its URLs are
    fixed); this module takes O(serviceusage_endpoint), or derives it from a loopback O(api_endpoint), so it
    also runs against planb's GKE emulator.
  - Idempotent; supports check mode (reads only) and diff.
  - With O(enable=false) it only checks, and fails naming the C(gcloud services enable) command that fixes it.
options:
  services:
    description: APIs that must be enabled, for example C(container.googleapis.com), C(tpu.googleapis.com).
    type: list
    elements: str
    required: true
  enable:
    description: Enable the disabled ones; V(false) fails instead, naming the fix.
    type: bool
    default: true
  serviceusage_endpoint:
    description:
      - Base URL of the Service Usage API. Default C(https://serviceusage.googleapis.com), or
        C(<api_endpoint>/serviceusage) when O(api_endpoint) is a loopback address (planb's emulator).
    type: str
attributes:
  check_mode:
    support: full
    details: Reads each API's state and reports which would be enabled; enables none.
  diff_mode:
    support: full
    details: Each API's state before and after.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - planb.gke.gke_auth
notes:
  - The Service Usage API itself is enabled on new projects; reading needs C(serviceusage.services.get)
    (C(roles/serviceusage.serviceUsageViewer)), enabling C(serviceusage.services.enable)
    (C(roles/serviceusage.serviceUsageAdmin)). A refusal names both and the C(gcloud) command.
author:
  - planb engineers (@planb)
"""

EXAMPLES = r"""
- name: Enable the Kubernetes Engine and Cloud TPU APIs (the tutorial's "before you begin")
  planb.gke.gcp_service:
    project: my-project
    auth_kind: application
    services: [container.googleapis.com, tpu.googleapis.com, containerfilesystem.googleapis.com]
"""

RETURN = r"""
services:
  description: Each API's state (ENABLED or DISABLED) after the module ran (before it, in check mode).
  returned: always
  type: dict
  sample: {container.googleapis.com: ENABLED, compute.googleapis.com: ENABLED}
enabled:
  description: The APIs that were (or in check mode would be) enabled.
  returned: always
  type: list
  elements: str
  sample: [container.googleapis.com]
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.args import AUTH_ARGSPEC, AUTH_RELATIONS  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.converge import main_wrapper  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.project_apis import run_service  # noqa: E402

ARGUMENT_SPEC = dict(
    AUTH_ARGSPEC,
    services={"type": "list", "elements": "str", "required": True},
    enable={"type": "bool", "default": True},
    serviceusage_endpoint={"type": "str"},
)
RELATIONS = AUTH_RELATIONS


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True, **RELATIONS)
    main_wrapper(module, run_service)


if __name__ == "__main__":
    main()
