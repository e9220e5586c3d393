"""The host failover controller of local mode acts on what the queues release says, as the in-cluster one does: with
teams, every team's ClusterQueue and namespace (the chart's planb.clusterQueues and planb.failoverNamespaces, on the
failover ServiceAccount the role renders), else the one ClusterQueue and the LocalQueue's namespace. The role's
preflight and render.yml run for real (the pinned helm renders the chart); no cluster is asked anything."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from planb import paths
from tests.support.shared.kueue.role_playbook import failures_by_host, run_for_hosts

PLAYBOOK = """\
- name: The host failover controller's command line as roles/kueue_queues builds it in local mode
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Derive the chart values
      ansible.builtin.include_role:
        name: kueue_queues
        tasks_from: preflight.yml
    - name: Read what the release gives the controller
      ansible.builtin.include_role:
        name: kueue_queues
        tasks_from: render.yml
        public: true  # its vars (vars/main.yml: the command line) to the next task
    - name: Hand the command line to the test
      ansible.builtin.copy:
        content: "{{ kueue_queues_failover_host_argv | to_json }}"
        dest: "{{ planb_test_out }}"
        mode: "0600"
"""

PLAN_A = {"cpu": 32, "memory": "64Gi", "accelerator": 16}
TEAMS = [
    {"name": "research", "namespaces": ["research"], "quotas": {"on-demand": PLAN_A}},
    {"name": "serving", "namespaces": ["serving", "serving-canary"], "quotas": {}},
]


def _flags(folder: Path, inputs: dict[str, dict[str, Any]]) -> dict[str, dict[str, str]]:
    """Per input (one host each, one Ansible run): the host controller's --cluster-queues and --namespaces."""
    common = {
        "kueue_queues_helm_binary": str(paths.tool("helm")),
        "kueue_queues_failover_in_cluster": False,
        "kueue_queues_failover_after_minutes": 0.25,
        "kueue_queues_kuberay_observed": "",
    }
    outs = {name: folder / f"{name}.json" for name in inputs}
    hosts = {name: {**common, "planb_test_out": str(outs[name]), **extra} for name, extra in inputs.items()}
    done = run_for_hosts(folder, PLAYBOOK, hosts)
    assert failures_by_host(done) == {}, (done.stdout + done.stderr)[-4000:]
    found = {}
    for name, out in outs.items():
        argv = json.loads(out.read_text())
        flags = dict(a[2:].split("=", 1) for a in argv if a.startswith("--"))
        found[name] = {k: flags[k] for k in ("cluster-queues", "namespaces")}
    return found


def test_the_host_controller_is_given_every_team_s_queue_and_namespace(tmp_path: Path) -> None:
    extra = {"failover": {"extraNamespaces": ["ml-infra"]}}
    got = _flags(
        tmp_path,
        {
            "teams": {"kueue_queues_teams": TEAMS},
            "teams-and-extra": {"kueue_queues_teams": TEAMS, "kueue_queues_values": extra},
            "no-teams": {},
        },
    )
    teams = {"cluster-queues": "research,serving", "namespaces": "research,serving,serving-canary"}
    assert got == {
        "teams": teams,
        "teams-and-extra": {**teams, "namespaces": "research,serving,serving-canary,ml-infra"},
        "no-teams": {"cluster-queues": "cluster-queue", "namespaces": "default"},
    }
