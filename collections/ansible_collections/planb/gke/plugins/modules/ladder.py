#!/usr/bin/python
# planb: the capacity ladder (planb_plans) checked and laid out by a task (action plugin: plugins/action).

DOCUMENTATION = r"""
module: ladder
short_description: The capacity ladder (planb_plans) checked and laid out as node pools, as a task
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
attributes:
  action:
    support: full
    description: Runs on the controller as an action plugin; there is no module code.
  check_mode:
    support: full
    description: Computes only.
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
  description: >-
    One dict per plan, in order - name, kind, slices (int), nodepool, reservation, reservation_project, rung
    (1 for the first), settings (reservation_affinity, reservation, queued_provisioning, flex_start, spot,
    auto_repair, location_policy, taints) and pools (each pool of planb.gke.node_pools plus plan_kind and settings).
  returned: success
  type: list
  elements: dict
"""
