#!/usr/bin/python
# planb: the inventory variables a play acts on, resolved by one task (action plugin: plugins/action).

DOCUMENTATION = r"""
module: inventory_vars
short_description: Resolve the inventory variables a play acts on, failing with the inventory's own sentence
version_added: "0.1.0"
description:
  - Templates each variable of O(names) on the controller before the play uses any of them. An inventory that
    refuses a value while it is templated (C(inventories/gke) reads C(PROJECT_ID) and C(ZONE) with
    C(lookup('ansible.builtin.env', ...) or undef(hint=...))) fails this task with that sentence alone, instead of
    the refusal surfacing wrapped in Ansible's words about a later task's arguments.
  - A name the inventory does not set at all is refused, naming where it is set.
  - Runs on the controller only; sends nothing, never reports a change, supports check mode.
options:
  names:
    description: The variables to resolve, in order; the first that cannot be resolved fails the task.
    type: list
    elements: str
    required: true
requirements:
  - nothing beyond ansible-core on the controller, where the action runs
attributes:
  check_mode:
    support: full
    details: Reads variables only.
  diff_mode:
    support: N/A
    details: Changes nothing, so there is no diff.
  platform:
    platforms: all
  action:
    description: Runs on the controller as an action plugin; there is no module code.
    support: full
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
notes:
  - An action plugin; this file documents it for C(ansible-doc).
author:
  - planb engineers (@planb)
"""

EXAMPLES = r"""
- name: Check that the inventory names the project and the zone to act on
  planb.gke.inventory_vars:
    names: [planb_project_id, planb_zone, planb_cluster_name]
"""

RETURN = r"""
resolved:
  description: The names resolved, in order.
  returned: success
  type: list
  elements: str
  sample: [planb_project_id, planb_zone, planb_cluster_name]
"""
