"""`helm test` in both modes on the local stack, against the site topology's queues release and a job release.

KWOK runs no container, so the Ray head stand-in runs a `helm test` pod's check as its kubelet would
(planb.local.rayhead.testpods): the chart's own script, with the pod's ConfigMaps and ServiceAccount token,
against the stack's real API server; its exit code is the pod's phase. Each mode's check is shown to pass,
then to fail with its own message when what it checks is wrong, then to pass again once that is put back
(the second run also removes the failed pod: before-hook-creation).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from planb.kube import Kube
from planb.kube_objects import is_true
from tests.support.e2e.jobs import install_job
from tests.support.e2e.topologies import Run
from tests.support.e2e.waits import wait_until

pytestmark = [pytest.mark.slow]

CLUSTER_QUEUES = "/apis/kueue.x-k8s.io/v1beta2/clusterqueues"


def helm_test(helm: Run, release: str) -> subprocess.CompletedProcess[str]:
    """`helm test RELEASE` (a failed check's log comes on stderr: the pods' hook-output-log-policy)."""
    return helm("test", release, "-n", "default", "--timeout", "120s", check=False)


def phase(out: str, hook: str) -> str:
    """The phase `helm test` prints for one test hook (its "TEST SUITE:" block); '' when it printed none."""
    block = out.partition(f"TEST SUITE:     {hook}\n")[2]
    return next((line.split()[-1] for line in block.splitlines() if line.startswith("Phase:")), "")


def test_helm_test_of_the_queues_release_checks_the_cluster_queue_is_active(site: Path, helm: Run) -> None:
    kube = Kube(site)
    values = json.loads(helm("get", "values", "planb-queues", "--all", "-o", "json").stdout)
    cluster_queue = values["queues"]["clusterQueue"]
    local_queue = f"{values['queues']['localQueue']['namespace']}/{values['queues']['localQueue']['name']}"
    path = f"{CLUSTER_QUEUES}/{cluster_queue}"

    passed = helm_test(helm, "planb-queues")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert phase(passed.stdout, "planb-queues-test-queues") == "Succeeded", passed.stdout
    assert kube.get("/api/v1/namespaces/default/pods/planb-queues-test-queues") is None  # hook-succeeded

    # A ClusterQueue Kueue holds (stopPolicy Hold: Active False, reason Stopped) fails the test, saying so.
    kube.merge_patch(path, {"spec": {"stopPolicy": "Hold"}})
    try:
        wait_until(lambda: not is_true(kube.get(path) or {}, "Active"), f"ClusterQueue {cluster_queue} inactive", 60)
        failed = helm_test(helm, "planb-queues")
        assert failed.returncode != 0, failed.stdout + failed.stderr
        assert phase(failed.stdout, "planb-queues-test-queues") == "Failed", failed.stdout
        assert f"planb helm test: FAIL: ClusterQueue {cluster_queue} is not Active: Stopped" in failed.stderr
        assert f"OK: LocalQueue {local_queue} points at ClusterQueue {cluster_queue}" in failed.stderr
        pod = kube.get("/api/v1/namespaces/default/pods/planb-queues-test-queues") or {}
        assert (pod.get("status") or {}).get("phase") == "Failed", pod.get("status")
    finally:
        kube.merge_patch(path, {"spec": {"stopPolicy": None}})
        wait_until(lambda: is_true(kube.get(path) or {}, "Active"), f"ClusterQueue {cluster_queue} active again", 60)

    again = helm_test(helm, "planb-queues")
    assert again.returncode == 0, again.stdout + again.stderr
    assert kube.get("/api/v1/namespaces/default/pods/planb-queues-test-queues") is None


def test_helm_test_of_a_job_release_checks_its_scripts_compile(site: Path, helm: Run) -> None:
    kube = Kube(site)
    install_job(helm, "job-1")
    passed = helm_test(helm, "job-1")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert phase(passed.stdout, "job-1-test-script") == "Succeeded", passed.stdout

    # The job's ConfigMap with a train.py that does not compile fails the test, naming the file and the line.
    scripts = "/api/v1/namespaces/default/configmaps/job-1-train-script"
    good = (kube.get(scripts) or {})["data"]["train.py"]
    kube.merge_patch(scripts, {"data": {"train.py": good + "\ndef broken(:\n"}})
    failed = helm_test(helm, "job-1")
    assert failed.returncode != 0, failed.stdout + failed.stderr
    assert "planb helm test: FAIL: train.py does not compile: invalid syntax" in failed.stderr, failed.stderr
    assert "planb_train.loop.py OK" in failed.stderr  # the other modules were checked too

    kube.merge_patch(scripts, {"data": {"train.py": good}})
    again = helm_test(helm, "job-1")
    assert again.returncode == 0, again.stdout + again.stderr
    assert kube.get("/api/v1/namespaces/default/pods/job-1-test-script") is None
