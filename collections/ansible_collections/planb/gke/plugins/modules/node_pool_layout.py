#!/usr/bin/python
# planb: one node pool's catalog sizing and zones, checked by a task (action plugin: plugins/action).

DOCUMENTATION = r"""
module: node_pool_layout
short_description: One node pool's catalog sizing and zones, checked by a task
version_added: "0.1.0"
description:
  - Runs the P(planb.gke.node_pool#filter) and P(planb.gke.node_locations#filter) filters on the controller, in that
    order, and returns their results.
  - A refusal (an unknown profile, more than one slice in a multi-host pool, flex-start on a generation GKE offers
    it for none, a regional cluster without the TPU zone, a zone Google's TPU list does not name for the
    generation) fails the task with the filter's sentence alone, naming the input and the fix.
  - Sends nothing, never reports a change, supports check mode.
options:
  profile:
    description: A planb profile such as C(tpu-v6e-4x4); empty for a pool sized by hand (O(machine_type)).
    type: str
    default: ""
  slices:
    description: Slices in this pool (exactly 1 for a multi-host profile).
    type: int
    default: 1
  flex_start:
    description: The pool uses flex-start (refused for generations GKE offers no flex-start on).
    type: bool
    default: false
  machine_type:
    description: Another machine type of the generation that forms the same topology, or the hand-sized pool's.
    type: str
    default: ""
  location:
    description: The cluster's zone (zonal cluster) or region (regional cluster).
    type: str
    required: true
  tpu_zone:
    description: The one zone of a TPU pool in a regional cluster.
    type: str
    default: ""
  check_tpu_zone:
    description: Refuse a zone Google's TPU zone list does not name for the generation (planb's policy).
    type: bool
    default: true
  state:
    description: The pool's state; zones are worked out for V(present) only.
    type: str
    default: present
requirements:
  - nothing beyond ansible-core on the controller, where the action runs
attributes:
  check_mode:
    support: full
    details: Computes only.
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
- name: Size and place a pool of plan B in a regional cluster
  planb.gke.node_pool_layout:
    profile: tpu-v6e-4x4
    flex_start: true
    location: us-east5
    tpu_zone: us-east5-b
  register: layout
  # layout.catalog.max_nodes: 4, layout.node_locations: [us-east5-b]
"""

RETURN = r"""
catalog:
  description: P(planb.gke.node_pool#filter)'s settings of the profile's pool; V({}) without a profile.
  returned: success
  type: dict
  sample: {profile: tpu-v6e-4x4, machine_type: ct6e-standard-4t, tpu_topology: 4x4, multi_host: true, max_nodes: 4}
node_locations:
  description: The pool's zones - V([]) in a zonal cluster or for V(absent), the one TPU zone in a regional one.
  returned: success
  type: list
  elements: str
  sample: [us-east5-b]
"""
