"""The queues release's record of the KubeRay operator follows the cluster at the next run of the kueue playbook:
the kueue_queues role reads what the record rests on and passes it as queues.kuberay.observed, so
a changed operator upgrades the release, which reads the cluster again. Here the stack switches to the hosted layout
(GKE's Ray Operator add-on: the CRDs, no operator Deployment; planb.local.stack.kuberay_layout) after the `site`
converge, and one run of playbooks/kueue.yml with the add-on chosen (planb_ray_operator_addon, so the kuberay role
leaves the operator to it rather than show its own again) records it. That an unchanged operator changes
nothing is the molecule scenario's converge on the same topology (test_molecule_local.py, changed=0). The stack's
layout and the release's revision are put back at the end.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from planb import paths
from planb.kube import Kube
from planb.local.rayhead import settings as rayhead_settings
from planb.local.stack import kuberay_layout
from tests.support.e2e.jobs import wait_jobs
from tests.support.e2e.topologies import Run, ansible_playbook
from tests.support.e2e.waits import wait_until

pytestmark = [pytest.mark.slow]

RECORD = f"/api/v1/namespaces/{kuberay_layout.NAMESPACE}/configmaps/planb-kuberay"


def _revision(helm: Run) -> int:
    return int(json.loads(helm("history", "planb-queues", "-o", "json").stdout)[-1]["revision"])


def test_a_changed_operator_is_recorded_at_the_next_run(site: Path, helm: Run) -> None:
    kube = Kube(site)
    before = (kube.get(RECORD) or {}).get("data") or {}
    assert before.get("layout") == "in-cluster" and before.get("namespace") == "ray-system", before
    revision = _revision(helm)
    try:
        assert kuberay_layout.apply(kube, "hosted", kuberay_layout.from_env({})[1])
        done = ansible_playbook("playbooks/kueue.yml", "-e", "planb_ray_operator_addon=true")
        recap = re.findall(r"localhost\s*:\s*ok=\d+\s+changed=(\d+)", done.stdout)
        assert recap and int(recap[-1]) >= 1, done.stdout[-3000:]
        after = (kube.get(RECORD) or {}).get("data") or {}
        assert (after.get("layout"), after.get("namespace"), after.get("authOptions")) == ("hosted", "", "true")
        assert _revision(helm) == revision + 1
        values = json.loads(helm("get", "values", "planb-queues", "-o", "json").stdout)
        assert values["queues"]["kuberay"]["observed"] == "|object"
    finally:
        kuberay_layout.apply(kube, *kuberay_layout.from_env({}))
        helm("rollback", "planb-queues", str(revision))


def test_a_job_with_no_values_runs_on_the_default_layout(site: Path, helm: Run) -> None:
    """site.yml's defaults (KubeRay in ray-system, shown by the kuberay role as its chart makes it) and
    `helm install job-1 charts/planb` with no values: the job's NetworkPolicy admits the recorded operator and the
    RayJob succeeds."""
    kube = Kube(site)
    rayhead_settings.set_payload("job-1", rayhead_settings.Payload(seconds=2))
    helm("install", "job-1", str(paths.REPO / "charts" / "planb"))
    try:
        wait_jobs(kube, {"job-1": "on-demand"})
        policy = kube.get("/apis/networking.k8s.io/v1/namespaces/default/networkpolicies/job-1-ray") or {}
        peers = [p for rule in policy["spec"]["ingress"] if rule.get("ports") for p in rule["from"]]
        assert peers == [
            {
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": kuberay_layout.NAMESPACE}},
                "podSelector": {"matchLabels": {"app.kubernetes.io/name": "kuberay-operator"}},
            }
        ]

        def outcome() -> tuple[str, str]:
            found = kube.get("/apis/ray.io/v1/namespaces/default/rayjobs/job-1") or {}
            st = found.get("status") or {}
            return str(st.get("jobDeploymentStatus", "")), str(st.get("jobStatus", ""))

        wait_until(lambda: outcome() == ("Complete", "SUCCEEDED"), "job 1 to succeed", 120)
    finally:
        helm("uninstall", "job-1", "--wait")
