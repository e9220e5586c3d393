"""The chart's `helm test` pods on the local stack (planb.local.rayhead.testpods): the job mode's pod as `helm
template` renders it, run for real as a host process (the chart's check_job.py on the ConfigMaps' files), and
what planb's policy refuses to run. The API server is a dict (FakeKube of tests/support/shared/rayhead_cluster.py);
tests/e2e/topologies/test_helm_test.py runs both modes' tests against the real stack."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

from planb.kube import Kube, Obj
from planb.local.rayhead.heads import RayHeads
from planb.local.rayhead.testpods import CHECKS, HelmTestPods, is_test_hook, write_projected
from tests.support.shared.chart.objects import by_kind
from tests.support.shared.rayhead_cluster import FakeKube

Render = Callable[..., list[dict[str, Any]]]
NS = "default"
MARKER = "planb-test-ran-this"
API = "https://127.0.0.1:6443"


class TokenKube(FakeKube):
    """FakeKube that issues a token for a TokenRequest, as the API server's TokenRequest API does."""

    def create(self, path: str, body: Obj) -> Obj:
        if path.endswith("/token"):
            self.patches.append((path, body))
            return {**body, "status": {"token": "issued-token"}}
        return super().create(path, body)


def job_release(template: Render) -> tuple[Obj, dict[str, Obj]]:
    """The job mode's test pod (running, on a node) and the API's objects: both ConfigMaps it mounts."""
    objs = template()
    (pod,) = by_kind(objs, "Pod")
    pod["metadata"].update(namespace=NS, uid="test-uid")
    pod["status"] = {"phase": "Running", "startTime": "2026-01-01T00:00:00Z"}
    objects = {f"/api/v1/namespaces/{NS}/configmaps/{cm['metadata']['name']}": cm for cm in by_kind(objs, "ConfigMap")}
    return pod, objects


def run(pod: Obj, objects: dict[str, Obj], tmp_path: Path) -> tuple[str, str]:
    """Run the pod as the stand-in does: (the phase it wrote, the pod's log as served)."""
    kube = FakeKube(objects)
    heads = RayHeads(cast(Kube, kube), state_dir=tmp_path)
    heads.pods.items = {f"{NS}/{pod['metadata']['name']}": pod}
    HelmTestPods(heads, API).run(pod)
    (status,) = [body["status"] for path, body in kube.patches if path.endswith("/status")]
    logs = [body for path, body in objects.items() if "/logs/" in path]
    served = Path(logs[0]["spec"]["logs"][0]["logsFile"]).read_text() if logs else ""
    return status["phase"], served


def test_the_job_test_pod_runs_the_charts_check_on_the_mounted_scripts(template: Render, tmp_path: Path) -> None:
    pod, objects = job_release(template)
    assert is_test_hook(pod)
    phase, log = run(pod, objects, tmp_path)
    assert phase == "Succeeded", log
    assert "stdout F train.py OK" in log and "stdout F planb helm test: PASS" in log
    assert not list((tmp_path / "rayhead" / "work" / "helm-tests").iterdir())  # the volumes went with the run


def test_a_train_py_that_does_not_compile_fails_the_pod_naming_it(template: Render, tmp_path: Path) -> None:
    pod, objects = job_release(template)
    (scripts,) = [cm for name, cm in objects.items() if name.endswith("-train-script")]
    scripts["data"]["train.py"] += "\ndef broken(:\n"
    phase, log = run(pod, objects, tmp_path)
    assert phase == "Failed"
    assert "planb helm test: FAIL: train.py does not compile: invalid syntax (train.py, line" in log


def test_a_script_that_is_not_the_charts_check_never_runs(template: Render, tmp_path: Path) -> None:
    pod, objects = job_release(template)
    (checks,) = [cm for name, cm in objects.items() if name.endswith("-test-scripts")]
    marker = tmp_path / MARKER
    checks["data"]["check_job.py"] = f"open({str(marker)!r}, 'w').write('ran')\n"
    phase, log = run(pod, objects, tmp_path)
    assert phase == "Failed"
    assert "planb's policy: check_job.py is not one of the chart's test scripts" in log
    assert not marker.exists()


@pytest.mark.parametrize(
    ("change", "refusal"),
    [
        (lambda p: p["spec"]["containers"][0].update(command=["sh", "-c", f"touch {MARKER}"]), "is refused"),
        (
            lambda p: (
                p["spec"]["volumes"].append({"name": "host", "hostPath": {"path": "/"}})
                or p["spec"]["containers"][0]["volumeMounts"].append({"name": "host", "mountPath": "/host"})
            ),
            "the volume 'host' of kind ['hostPath']",
        ),
        (
            lambda p: p["spec"]["containers"][0].update(env=[{"name": "X", "valueFrom": {"fieldRef": {}}}]),
            "env 'X' from valueFrom",
        ),
        (lambda p: p["spec"]["containers"].append(copy.deepcopy(p["spec"]["containers"][0])), "one container"),
        (lambda p: p["spec"].update(activeDeadlineSeconds="soon"), "invalid literal for int()"),
    ],
    ids=["a shell", "a hostPath", "env from elsewhere", "two containers", "a spec of another shape"],
)
def test_what_the_policy_refuses_fails_the_pod_and_says_why(
    template: Render, tmp_path: Path, change: Callable[[Obj], object], refusal: str
) -> None:
    pod, objects = job_release(template)
    change(pod)
    phase, log = run(pod, objects, tmp_path)
    assert phase == "Failed"
    assert "did not run" in log and refusal in log, log


def test_only_running_test_hooks_are_taken(template: Render, tmp_path: Path) -> None:
    pod, _ = job_release(template)
    plain = copy.deepcopy(pod)
    plain["metadata"]["annotations"] = {"helm.sh/hook": "pre-install"}
    pending = copy.deepcopy(pod)
    pending["status"] = {"phase": "Pending"}
    assert not is_test_hook(plain) and is_test_hook(pending)
    heads = RayHeads(cast(Kube, FakeKube({})), state_dir=tmp_path)
    runner = HelmTestPods(heads, API)

    def run(pod: Obj) -> None:
        raise AssertionError(f"ran {pod['metadata']}")

    runner.run = run  # type: ignore[method-assign]
    runner.reconcile([plain, pending])
    assert runner.handled == set()


def test_the_service_account_volume_is_written_as_the_kubelet_writes_it(tmp_path: Path) -> None:
    """The projected volume the ServiceAccount admission plugin adds: a token the TokenRequest API issues for the
    pod's account, bound to the pod; the cluster's CA from kube-root-ca.crt; the namespace."""
    kube = TokenKube({f"/api/v1/namespaces/{NS}/configmaps/kube-root-ca.crt": {"data": {"ca.crt": "CA PEM"}}})
    pod = {"metadata": {"name": "p", "namespace": NS, "uid": "u"}, "spec": {"serviceAccountName": "q-test"}}
    projected = {
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"fieldPath": "metadata.namespace"}}]}},
        ]
    }
    write_projected(cast(Kube, kube), pod, tmp_path, projected)
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == {
        "token": "issued-token",
        "ca.crt": "CA PEM",
        "namespace": NS,
    }
    ((path, request),) = kube.patches
    assert path == f"/api/v1/namespaces/{NS}/serviceaccounts/q-test/token"
    assert request["spec"]["boundObjectRef"] == {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u"}
    assert (tmp_path / "token").stat().st_mode & 0o077 == 0


def test_the_checks_the_stand_in_runs_are_the_charts_files() -> None:
    assert sorted(p.name for p in CHECKS.glob("*.py")) == ["check_job.py", "check_queues.py"]
