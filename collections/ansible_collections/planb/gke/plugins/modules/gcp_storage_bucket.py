#!/usr/bin/python
# planb: the checkpoint bucket exists in the cluster's region with uniform access (Cloud Storage JSON API v1).

DOCUMENTATION = r"""
module: gcp_storage_bucket
short_description: Check (or create) the checkpoint bucket before anything else is written
version_added: "0.1.0"
description:
  - Reads the Cloud Storage bucket O(name) (C(GET storage/v1/b/NAME),
    U(https://cloud.google.com/storage/docs/json_api/v1/buckets/get)).
  - When it exists, fails unless its location is the region of O(location) and it has uniform bucket-level access,
    planb's policy (checkpoints that cross a region boundary pay egress and latency,
    U(https://cloud.google.com/storage/docs/locations); with uniform access IAM is the only grant,
    U(https://cloud.google.com/storage/docs/uniform-bucket-level-access)), naming the bucket and the fix. An existing
    bucket is never changed.
  - When it does not exist, creates it with O(create=true) (C(POST storage/v1/b?project=P),
    U(https://cloud.google.com/storage/docs/json_api/v1/buckets/insert)) in that region, with uniform bucket-level
    access and STANDARD storage, in O(project); otherwise fails naming the C(gcloud storage buckets create) command.
  - With O(state=absent) (teardown, only when the operator asks) the bucket is deleted (C(DELETE storage/v1/b/NAME),
    U(https://cloud.google.com/storage/docs/json_api/v1/buckets/delete)); one that still holds objects is refused by
    Cloud Storage, and the failure names the command that empties and deletes it. No bucket, nothing to do.
  - In check mode nothing is created or deleted; what would be is reported as a change, with a diff.
options:
  name:
    description: The bucket's name, or C(gs://NAME).
    type: str
    required: true
  location:
    description: The cluster's zone or region; the bucket must be in (or is created in) its region.
    type: str
    required: true
  state:
    description: V(present) checks (or creates) the bucket, V(absent) deletes it.
    type: str
    choices: [present, absent]
    default: present
  create:
    description: Create the bucket when it does not exist, instead of failing.
    type: bool
    default: false
  labels:
    description:
      - Resource labels the bucket is created with (C(labels)), so the billing export splits its cost by them; Google's
        label rules are checked before any call. An existing bucket that lacks one is not changed, only warned about,
        naming the C(gcloud storage buckets update) command.
    type: dict
  storage_endpoint:
    description:
      - Base URL of the Cloud Storage JSON API. Default C(https://storage.googleapis.com), or O(api_endpoint) itself
        when that is a loopback address (planb's emulator serves the API at Google's paths).
    type: str
attributes:
  check_mode:
    support: full
    details: Reads the bucket and reports the body that would be created; creates none.
  diff_mode:
    support: full
    details: The bucket's body after a creation; an existing bucket is never changed, so no diff.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - planb.gke.gke_auth
notes:
  - Needs C(storage.buckets.get) on the bucket (C(roles/storage.bucketViewer) or C(roles/storage.admin)), and with
    O(create=true) C(storage.buckets.create) on O(project) (C(roles/storage.admin)); with O(state=absent)
    C(storage.buckets.delete) on the bucket (C(roles/storage.admin)).
  - The job's access to the bucket (its Workload Identity binding) is not granted here.
author:
  - planb engineers (@planb)
"""

EXAMPLES = r"""
- name: The checkpoint bucket is in the cluster's region with uniform access, created if missing
  planb.gke.gcp_storage_bucket:
    project: my-project
    auth_kind: application
    name: my-checkpoints
    location: us-east5-b
    create: true
"""

RETURN = r"""
bucket:
  description: The Bucket as Cloud Storage answers it; in check mode, before it exists, the body that would be sent.
  returned: always
  type: dict
  sample:
    name: my-project-planb-checkpoints
    location: US-EAST5
    storageClass: STANDARD
    iamConfiguration: {uniformBucketLevelAccess: {enabled: true}}
actions:
  description: >-
    V(create) or V(delete) when the bucket was (or, in check mode, would be) created or deleted; empty otherwise.
  returned: always
  type: list
  elements: str
  sample: [create]
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.args import AUTH_ARGSPEC, AUTH_RELATIONS  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.bucket_removal import remove_storage_bucket  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.converge import main_wrapper  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.storage import run_storage_bucket  # noqa: E402

ARGUMENT_SPEC = dict(
    AUTH_ARGSPEC,
    name={"type": "str", "required": True},
    location={"type": "str", "required": True},
    state={"type": "str", "choices": ["present", "absent"], "default": "present"},
    create={"type": "bool", "default": False},
    storage_endpoint={"type": "str"},
    labels={"type": "dict"},
)
RELATIONS = AUTH_RELATIONS


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True, **RELATIONS)
    main_wrapper(module, run_storage_bucket if module.params["state"] == "present" else remove_storage_bucket)


if __name__ == "__main__":
    main()
