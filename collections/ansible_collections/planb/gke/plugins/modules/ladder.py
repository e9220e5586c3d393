#!/usr/bin/python
# planb: the capacity ladder (planb_plans) checked and laid out by a task (action plugin: plugins/action).

DOCUMENTATION = r"""
module: ladder
short_description: The capacity ladder (planb_plans) checked and laid out as node pools, as a task
version_added: "0.1.0"
description:
  - Runs the check and the layout of the P(planb.gke.plans#filter) filter on the controller and returns its list of
    plans, each with its GKE node pool settings (by kind) and its pools.
  - A refusal (a plan name that is no label value, an unknown kind, slices not a whole number of at least 1, pool
    names that name each other's pools, a reservation missing or given to another kind, planb's one-plan-per-kind
    policy, an unknown profile) fails the task with the filter's sentence alone, naming the entry and the fix.
  - Sends nothing, never reports a change, supports check mode.
options:
  plans:
    description: The plans, in the order Kueue tries them; each C({name, kind, slices, nodepool}) and, for kind
      C(reservation), C(reservation) and optionally C(reservation_project).
    type: raw
    required: true
  profile:
    description: The planb accelerator profile every plan's pools are sized from (C(planb_profile)).
    type: str
    required: true
  project:
    description: The cluster's project; a reservation_project equal to it is targeted by name alone.
    type: str
    default: ""
  machine_type:
    description: Another machine type of the generation that forms the same topology.
    type: str
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
seealso:
  - plugin: planb.gke.plans
    plugin_type: filter
author:
  - planb engineers (@planb)
"""

EXAMPLES = r"""
- name: Check the ladder and lay out every plan's node pools
  planb.gke.ladder:
    plans:
      - {name: on-demand, kind: on-demand, slices: 2, nodepool: on-demand-pool}
      - {name: dws, kind: dws, slices: 1, nodepool: dws-pool}
    profile: tpu-v6e-4x4
    project: my-project
  register: checked
  # checked.ladder: pools on-demand-pool, on-demand-pool-2 (plan on-demand) and dws-pool (plan dws, flex-start)
"""

RETURN = r"""
ladder:
  description: One dict per plan, in the order Kueue tries them.
  returned: success
  type: list
  elements: dict
  sample:
    - name: on-demand
      kind: on-demand
      slices: 2
      nodepool: on-demand-pool
      reservation: ""
      reservation_project: ""
      rung: 1
      settings: {reservation_affinity: NO_RESERVATION, queued_provisioning: false, flex_start: false, spot: false}
      pools:
        - {name: on-demand-pool, index: 1, plan: on-demand, plan_kind: on-demand}
        - {name: on-demand-pool-2, index: 2, plan: on-demand, plan_kind: on-demand}
  contains:
    name:
      description: The plan's name (a Kueue ResourceFlavor and a node label value).
      returned: always
      type: str
      sample: on-demand
    kind:
      description: C(reservation), C(on-demand), C(dws) or C(spot).
      returned: always
      type: str
      sample: on-demand
    slices:
      description: Slices of the profile this plan provides.
      returned: always
      type: int
      sample: 2
    nodepool:
      description: The plan's first node pool's name.
      returned: always
      type: str
      sample: on-demand-pool
    reservation:
      description: The reservation a C(reservation) plan consumes; empty for the other kinds.
      returned: always
      type: str
      sample: ""
    reservation_project:
      description: The project of a shared reservation; empty otherwise.
      returned: always
      type: str
      sample: ""
    rung:
      description: The plan's place on the ladder, 1 for the first.
      returned: always
      type: int
      sample: 1
    settings:
      description: >-
        The GKE node pool settings of its kind (reservation_affinity, reservation, queued_provisioning, flex_start,
        spot, auto_repair, location_policy, taints).
      returned: always
      type: dict
      sample: {reservation_affinity: NO_RESERVATION, flex_start: false, spot: false}
    pools:
      description: Each pool of P(planb.gke.node_pools#filter), plus plan_kind and settings.
      returned: always
      type: list
      elements: dict
      sample: [{name: on-demand-pool, plan_kind: on-demand}]
"""
