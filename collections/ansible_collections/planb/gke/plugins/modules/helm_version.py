#!/usr/bin/python
# planb: the helm binary kubernetes.core.helm will run, checked before any write (action plugin: plugins/action).

DOCUMENTATION = r"""
module: helm_version
short_description: Refuse a helm binary the pinned kubernetes.core cannot drive, before any write
version_added: "0.1.0"
description:
  - Runs C(BINARY version --short) on the task's host, where C(kubernetes.core.helm) runs helm, and returns the version.
  - A helm outside C(>=3.0.0,<4.0.0), the range the kubernetes.core 6.2.0 that planb pins drives, fails the task with
    one sentence naming the binary, the version it printed, why and the fix (install a helm 3 release, the one planb
    tests is v3.19.5, and point O(variable) at it). With helm 4, that kubernetes.core's helm module fails on every
    re-run of an installed release while it parses C(helm plugin list)
    (U(https://github.com/ansible-collections/kubernetes.core/issues/1041)); later kubernetes.core releases enforce
    the same range themselves (U(https://github.com/ansible-collections/kubernetes.core/pull/1039)).
  - A binary that does not run, or prints no version, fails the task the same way.
  - Reads only, never reports a change, supports check mode.
options:
  binary:
    description: The helm executable the roles hand to C(kubernetes.core.helm) as C(binary_path); a name is looked up
      on the host's PATH.
    type: str
    default: helm
  variable:
    description: The variable that names O(binary), which the fix tells the user to set.
    type: str
    default: planb_helm_binary
requirements:
  - the helm binary on the task's host
attributes:
  check_mode:
    support: full
    details: Runs C(helm version) only, in check mode too.
  diff_mode:
    support: N/A
    details: Changes nothing, so there is no diff.
  platform:
    platforms: posix
  action:
    description: Runs as an action plugin that executes the command over the task's connection; there is no module code.
    support: full
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
notes:
  - An action plugin; this file documents it for C(ansible-doc).
author:
  - planb engineers (@planb)
"""

EXAMPLES = r"""
- name: Check that the pinned kubernetes.core can drive the helm the roles run
  planb.gke.helm_version:
    binary: "{{ kueue_queues_helm_binary }}"
    variable: kueue_queues_helm_binary
"""

RETURN = r"""
version:
  description: The version C(helm version --short) printed, without its leading C(v) and build metadata.
  returned: success
  type: str
  sample: 3.19.5
"""
