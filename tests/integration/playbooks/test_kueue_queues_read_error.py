"""The kueue_queues role's wait for an Active ClusterQueue, when kubernetes.core.k8s_info cannot ask at all: the
controller's Python lacks the `kubernetes` library (the collection's own install line once left it out). The play
must name k8s_info's reason and the fix, not report a ClusterQueue that is "not Active within 120 s"."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.support.integration.gke.modules import ansible_playbook

PLAY = """\
- name: The role's wait on its own, after a release that changed the queues
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Wait for the ClusterQueue as install.yml does
      ansible.builtin.include_role:
        name: planb.gke.kueue_queues
        tasks_from: active.yml
      vars:
        kueue_queues_kubeconfig: {kubeconfig}
        kueue_queues_cluster_queues: [cluster-queue]
        kueue_queues_release: {{changed: true}}
        kueue_queues_existing_queues: []
"""


def test_a_missing_kubernetes_library_is_named_not_taken_for_an_inactive_queue(tmp_path: Path) -> None:
    # A Python where `import kubernetes` fails, as in a virtual environment without the library: a package of that
    # name first on its path that raises ImportError (the module's own import guard then answers).
    shadow = tmp_path / "shadow" / "kubernetes"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('No module named kubernetes')\n")
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nPYTHONPATH={shadow.parent} exec {sys.executable} "$@"\n')
    python.chmod(0o755)
    playbook = tmp_path / "wait.yml"
    playbook.write_text(PLAY.format(kubeconfig=tmp_path / "kubeconfig"))
    run = ansible_playbook(str(playbook), "-i", "localhost,", "-e", f"ansible_python_interpreter={python}")
    out = " ".join((run.stdout + run.stderr).split())
    assert run.returncode != 0, out[-3000:]
    assert "Could not read ClusterQueue cluster-queue" in out, out[-3000:]
    assert "kubernetes" in out.split("k8s_info failed with", 1)[1][:400], out[-3000:]
    assert "pip install kubernetes" in out
    assert "not Active within" not in out, out[-3000:]
