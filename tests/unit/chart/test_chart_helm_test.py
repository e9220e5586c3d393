"""`helm test` in both modes, as `helm template` renders it, and the job mode's check run for real.

* Job mode: a hook ConfigMap carries files/tests/check_job.py byte for byte; the test pod runs it on the job's
  script ConfigMap (mounted at /app as the head mounts it), with no ServiceAccount token (it reads no API).
* Queues mode: the pod runs files/tests/check_queues.py as a ServiceAccount of its own, whose hook Roles let it
  `get` the release's ClusterQueue and LocalQueue and nothing else. Its pod security is
  test_chart_pod_security.py's; the check against a real API server is tests/integration/chart/
  test_helm_test_queues.py's, and `helm test` on the local stack tests/e2e/topologies/test_helm_test.py's.
* Every test object is a `test` hook, deleted once the test passes; a failed pod's log is printed by helm.
* check_job.py passes the shipped scripts and fails, naming the file, one that does not compile or is missing.
* NOTES name `helm test` in both modes.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from planb.build import chart_files, golden
from tests.support.shared.chart.objects import by_kind

Render = Callable[..., list[dict[str, Any]]]
CHECKS = golden.CHART_DIR / "files" / "tests"
QUEUES = ("--set", "mode=queues", "--set", "queues.localQueue.namespace=team-a", "--set", "queues.clusterQueue=cq-1")


def hooks(objs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The test hooks by kind/name."""
    return {
        f"{o['kind']}/{o['metadata']['name']}": o
        for o in objs
        if (o["metadata"].get("annotations") or {}).get("helm.sh/hook") == "test"
    }


def test_the_job_test_runs_the_charts_check_on_the_jobs_scripts(template: Render) -> None:
    objs = template()
    found = hooks(objs)
    assert sorted(found) == ["ConfigMap/job-1-test-scripts", "Pod/job-1-test-script"]
    checks = found["ConfigMap/job-1-test-scripts"]
    assert checks["data"] == {"check_job.py": (CHECKS / "check_job.py").read_text()}
    assert checks["metadata"]["annotations"]["helm.sh/hook-weight"] == "-1"  # before the pod
    pod = found["Pod/job-1-test-script"]["spec"]
    (container,) = pod["containers"]
    assert container["command"] == ["python", "/planb-test/check_job.py", "/app", "train.py"]
    volumes = {v["name"]: v["configMap"]["name"] for v in pod["volumes"]}
    mounts = {m["mountPath"]: volumes[m["name"]] for m in container["volumeMounts"]}
    (scripts,) = [cm["metadata"]["name"] for cm in by_kind(objs, "ConfigMap") if cm not in found.values()]
    assert mounts == {"/app": scripts, "/planb-test": "job-1-test-scripts"}
    assert pod["automountServiceAccountToken"] is False


def test_the_smoke_jobs_test_checks_its_entry_script(template: Render) -> None:
    objs = template(
        "--set", "job.smoke.enabled=true",
        "--set", "job.training.checkpointDir=gs://planb-ckpt/checkpoints",
        "--set", "job.serviceAccountName=planb-job",
    )  # fmt: skip
    (pod,) = by_kind(objs, "Pod")
    assert pod["spec"]["containers"][0]["command"][-1] == "smoke.py"


def test_the_queues_test_reads_the_two_queues_with_get_rights_on_them_only(template: Render) -> None:
    found = hooks(template(*QUEUES))
    assert sorted(found) == [
        "ClusterRole/default-job-1-test",
        "ClusterRoleBinding/default-job-1-test",
        "ConfigMap/job-1-test-scripts",
        "Pod/job-1-test-queues",
        "Role/job-1-test",
        "RoleBinding/job-1-test",
        "ServiceAccount/job-1-test",
    ]
    assert found["ConfigMap/job-1-test-scripts"]["data"] == {
        "check_queues.py": (CHECKS / "check_queues.py").read_text()
    }
    rule = {"apiGroups": ["kueue.x-k8s.io"], "verbs": ["get"]}
    assert found["ClusterRole/default-job-1-test"]["rules"] == [
        {**rule, "resources": ["clusterqueues"], "resourceNames": ["cq-1"]}
    ]
    role = found["Role/job-1-test"]
    assert role["metadata"]["namespace"] == "team-a"
    assert role["rules"] == [{**rule, "resources": ["localqueues"], "resourceNames": ["user-queue"]}]
    subject = [{"kind": "ServiceAccount", "name": "job-1-test", "namespace": "default"}]
    for binding, ref in (("ClusterRoleBinding/default-job-1-test", "ClusterRole"), ("RoleBinding/job-1-test", "Role")):
        assert found[binding]["subjects"] == subject
        assert found[binding]["roleRef"]["kind"] == ref
    pod = found["Pod/job-1-test-queues"]["spec"]
    assert pod["serviceAccountName"] == "job-1-test"
    assert pod["containers"][0]["command"] == [
        "python",
        "/planb-test/check_queues.py",
        "--serviceaccount",
        "/var/run/secrets/kubernetes.io/serviceaccount",
        "--cluster-queue=cq-1",
        "--local-queue=team-a/user-queue",
    ]
    for name, obj in found.items():
        annotations = obj["metadata"]["annotations"]
        assert annotations["helm.sh/hook-delete-policy"] == "before-hook-creation,hook-succeeded", name
        if obj["kind"] == "Pod":
            assert annotations["helm.sh/hook-output-log-policy"] == "hook-failed"
        else:
            assert annotations["helm.sh/hook-weight"] == "-1", name


def check_job(directory: Path, entry: str = "train.py") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHECKS / "check_job.py"), str(directory), entry],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


@pytest.fixture()
def scripts(tmp_path: Path) -> Path:
    """The job's ConfigMap as the test pod mounts it (no items: each key a file): the chart's training files."""
    for name in chart_files.TRAIN_FILES:
        (tmp_path / chart_files.train_file_key(name)).write_bytes((golden.CHART_DIR / "files" / name).read_bytes())
    return tmp_path


def test_check_job_passes_the_shipped_scripts(scripts: Path) -> None:
    done = check_job(scripts)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "train.py OK" in done.stdout and done.stdout.rstrip().endswith("planb helm test: PASS")


def test_check_job_fails_a_script_that_does_not_compile(scripts: Path) -> None:
    (scripts / "planb_train.loop.py").write_text("def broken(:\n")
    done = check_job(scripts)
    assert done.returncode == 1
    assert "planb helm test: FAIL: planb_train.loop.py does not compile: invalid syntax" in done.stdout
    assert "train.py OK" in done.stdout  # the others were still checked


def test_check_job_fails_when_the_entry_script_is_not_mounted(tmp_path: Path) -> None:
    done = check_job(tmp_path)
    assert done.returncode == 1
    assert f"planb helm test: FAIL: train.py is not in {tmp_path}" in done.stdout


def test_notes_name_the_helm_test_of_each_mode(notes: Callable[..., str]) -> None:
    assert "Check the mounted scripts: helm test job-1 -n default" in notes()
    queues = notes("--set", "mode=queues")
    assert "Check the ClusterQueue is Active and the LocalQueue points at it:  helm test job-1 -n default" in queues
