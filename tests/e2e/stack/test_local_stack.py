"""The foundation on the real stack: API server version, Kueue's webhooks, queues, admission checks, down."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from planb.kube import Kube
from planb.local.process import is_alive
from planb.local.stack.crds import applied as crds_applied
from planb.local.stack.crds import digest as crds_digest
from planb.local.stack.crds import files as crd_files
from planb.local.stack.crds import served
from planb.local.stack.parts import CRDS_STAMP
from planb.local.stack.stack import LocalStack
from tests.support.e2e.stack import Kubectl, get_json
from tests.support.e2e.waits import wait_until


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    for cond in obj.get("status", {}).get("conditions", []):
        if cond["type"] == kind:
            return dict(cond)
    return None


def apply(kubectl: Kubectl, *docs: dict[str, Any], check: bool = True) -> Any:
    return kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(docs), check=check)


def test_api_server_reports_pinned_1_34(kubectl: Kubectl) -> None:
    version = json.loads(kubectl("version", "-o", "json").stdout)["serverVersion"]
    assert version["gitVersion"].startswith("v1.34."), version
    assert (version["major"], version["minor"]) == ("1", "34")


def test_every_crd_is_established_and_in_discovery_once_up_returns(kubectl: Kubectl, local_stack: Path) -> None:
    # `up` waits on discovery instead of the CRDs' conditions (planb.local.stack.crds.wait_served): the two agree.
    crds = get_json(kubectl, "crd")["items"]
    names = {crd["metadata"]["name"] for crd in crds}
    assert {"rayjobs.ray.io", "workloads.kueue.x-k8s.io", "provisioningrequests.autoscaling.x-k8s.io"} <= names
    for crd in crds:
        established = condition(crd, "Established")
        assert established and established["status"] == "True", crd["metadata"]["name"]
    kube = Kube(local_stack)
    assert served(kube, names) == names
    # Whether from etcd's snapshot or applied by this up: each CRD file's versions, as the file has them.
    by_name = {crd["metadata"]["name"]: crd for crd in crds}
    for path in crd_files():
        wanted = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        versions = [(v["name"], v["served"], v["storage"]) for v in wanted["spec"]["versions"]]
        got = by_name[wanted["metadata"]["name"]]["spec"]["versions"]
        assert [(v["name"], v["served"], v["storage"]) for v in got] == versions, path.name
    # The stamp a later `up` trusts instead of applying them again names exactly these CRDs, for these files.
    assert crds_applied(LocalStack().state / CRDS_STAMP, crds_digest(crd_files())) == frozenset(names)
    assert served(kube, {"nothings.example.com"}) == set()
    assert served(kube, {"nothings.ray.io", "rayjobs.ray.io"}) == {"rayjobs.ray.io"}  # a served group, one not


def test_invalid_cluster_queue_is_refused_by_kueue_webhook(kubectl: Kubectl) -> None:
    bad = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "planb-test-negative-quota"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "x", "resources": [{"name": "cpu", "nominalQuota": "-1"}]}],
                }
            ]
        },
    }
    proc = apply(kubectl, bad, check=False)
    assert proc.returncode != 0
    # The refusal comes from Kueue's validating webhook, not from the CRD schema.
    assert 'admission webhook "vclusterqueue.kb.io" denied the request' in proc.stderr, proc.stderr
    assert "nominalQuota" in proc.stderr
    assert kubectl("get", "clusterqueue", "planb-test-negative-quota", check=False).returncode != 0


def test_valid_cluster_queue_and_local_queue_become_active(kubectl: Kubectl) -> None:
    flavor = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "t-flavor"}}
    cq = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "t-cq"},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory"],
                    "flavors": [
                        {
                            "name": "t-flavor",
                            "resources": [
                                {"name": "cpu", "nominalQuota": "4"},
                                {"name": "memory", "nominalQuota": "8Gi"},
                            ],
                        }
                    ],
                }
            ],
        },
    }
    lq = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "t-lq", "namespace": "default"},
        "spec": {"clusterQueue": "t-cq"},
    }
    try:
        apply(kubectl, flavor, cq, lq)
        # The defaulting webhook ran: Kueue filled in what the user left out.
        stored = get_json(kubectl, "clusterqueue", "t-cq")
        assert stored["spec"]["queueingStrategy"] == "BestEffortFIFO"

        def active(*ref: str) -> bool:
            cond = condition(get_json(kubectl, *ref), "Active")
            return cond is not None and cond["status"] == "True"

        wait_until(lambda: active("clusterqueue", "t-cq"), "ClusterQueue t-cq Active", timeout=60)
        wait_until(lambda: active("localqueue", "t-lq", "-n", "default"), "LocalQueue t-lq Active", timeout=60)
    finally:
        kubectl("delete", "--ignore-not-found", "localqueue", "t-lq", "-n", "default", check=False)
        kubectl("delete", "--ignore-not-found", "clusterqueue", "t-cq", check=False)
        kubectl("delete", "--ignore-not-found", "resourceflavor", "t-flavor", check=False)


def test_provisioning_admission_check_becomes_active(kubectl: Kubectl) -> None:
    prc = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ProvisioningRequestConfig",
        "metadata": {"name": "t-prc"},
        "spec": {"provisioningClassName": "queued-provisioning.gke.io", "managedResources": ["google.com/tpu"]},
    }
    check = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "AdmissionCheck",
        "metadata": {"name": "t-prov"},
        "spec": {
            "controllerName": "kueue.x-k8s.io/provisioning-request",
            "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "t-prc"},
        },
    }
    try:
        apply(kubectl, prc, check)

        def active() -> bool:
            cond = condition(get_json(kubectl, "admissioncheck", "t-prov"), "Active")
            return cond is not None and cond["status"] == "True"

        # Only Kueue's provisioning controller sets Active on this check, and it only runs
        # when the ProvisioningRequest CRD existed when Kueue started.
        wait_until(active, "AdmissionCheck t-prov Active", timeout=60)
    finally:
        kubectl("delete", "--ignore-not-found", "admissioncheck", "t-prov", check=False)
        kubectl("delete", "--ignore-not-found", "provisioningrequestconfig", "t-prc", check=False)


def _stack_processes(*roots: Path, state: Path) -> list[int]:
    """Every live process of the stack kept in `state`: its executable lies under one of `roots` (the pinned
    binaries, and the copies kwokctl runs from the stack's state directory, deleted or not), and its command line or
    environment names `state` (a second stack beside this one, as `make test` runs, starts the same binaries)."""
    prefixes = [str(root.resolve()) for root in roots]
    mark = str(state.resolve()).encode()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            exe = os.readlink(proc / "exe")
            names_state = mark in (proc / "cmdline").read_bytes() or mark in (proc / "environ").read_bytes()
        except OSError:
            continue
        if any(exe.startswith(prefix) for prefix in prefixes) and names_state and is_alive(int(proc.name)):
            found.append(int(proc.name))
    return found


@pytest.mark.stack_teardown(order=2)  # first of the tests that take the stack down
def test_down_leaves_no_process(local_stack: Path) -> None:
    from planb import paths

    stack = LocalStack()
    before = stack.pids()
    # etcd, apiserver, controller-manager, scheduler, kwok; Kueue, KubeRay, Ray head stand-in, simulator, emulator;
    # and the failover controller while the last converge's inventory switches failover on (the site topology's does)
    failover = stack.failover.pid()
    assert len(before) == 10 + (failover is not None), before
    assert failover is None or failover in before, (failover, before)
    stack.down()
    assert [pid for pid in before if is_alive(pid)] == []
    assert _stack_processes(paths.tools_dir() / "bin", stack.state, state=stack.state) == []
    assert not stack.state.exists()


def test_helm_and_kueue_report_the_pinned_versions(local_stack: Path) -> None:
    from planb import paths
    from planb.local.stack.stack import component_versions

    pinned = paths.versions()
    versions = component_versions(local_stack)
    assert versions["helm"].startswith(pinned["HELM_VERSION"]), versions["helm"]
    # Kueue logs its own gitVersion at start-up (the version ldflag of the build).
    assert versions["kueue"] == pinned["KUEUE_VERSION"]
    assert versions["kube-apiserver"] == pinned["KUBERNETES_VERSION"]


def test_status_says_clearly_when_no_job_is_found(local_stack: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "planb.cli", "status", "--kubeconfig", str(local_stack), "-n", "planb-empty"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stdout.strip() == (
        "no RayJob found in namespace 'planb-empty'. Submit one with: helm install job-1 charts/planb"
    )
    one = subprocess.run(
        [sys.executable, "-m", "planb.cli", "status", "job-9", "--kubeconfig", str(local_stack), "-n", "planb-empty"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert one.returncode == 1
    assert one.stdout.startswith("no RayJob 'job-9' found in namespace 'planb-empty'.")


def _tools_copy(tmp_path: Path, leave_out: str = "") -> Path:
    """The toolchain as symlinks, without the binary `leave_out`; its manifests a tree of their own."""
    from planb import paths

    tools = tmp_path / "tools"
    (tools / "bin").mkdir(parents=True)
    for binary in (paths.tools_dir() / "bin").iterdir():
        if binary.name != leave_out:
            (tools / "bin" / binary.name).symlink_to(binary.resolve())
    shutil.copytree(paths.manifests_dir(), tools / "manifests", symlinks=True)
    return tools


def _run_up(tools: Path, state: Path | None = None, **extra_env: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PLANB_TOOLS_DIR": str(tools), **extra_env}
    if state is not None:
        env["PLANB_STATE_DIR"] = str(state)
    return subprocess.run(
        [sys.executable, "-m", "planb.cli", "local", "up"], env=env, capture_output=True, text=True, timeout=300,
        check=False,
    )  # fmt: skip


@pytest.mark.stack_teardown(order=4)  # last: it needs no running stack, and leaves none
def test_failed_up_leaves_nothing_half_created(tmp_path: Path) -> None:
    """A start from nothing that fails part-way (here: the API server refuses a CRD) stops what it started."""
    from planb import paths

    LocalStack().down()
    tools = _tools_copy(tmp_path)
    broken = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
              "metadata": {"name": "broken.planb.dev"}, "spec": {}}  # fmt: skip
    (tools / "manifests" / "kueue" / "crds" / "zz-broken.yaml").write_text(json.dumps(broken))
    # From an empty etcd, where the API server refuses the CRD as up applies it: an etcd snapshot of this one-off
    # set of CRDs (planb.local.stack.snapshot) would be made first, for nothing (about 9 s).
    done = _run_up(tools, PLANB_ETCD_SNAPSHOT="off")
    assert done.returncode == 2, done.stderr
    assert "broken.planb.dev" in done.stderr, done.stderr[-3000:]
    assert "(the partly started stack was stopped and removed)" in done.stderr
    # Its state (logs included) is gone, so the error keeps the newest logs' last lines (planb.local.stack.logtails).
    assert "the last lines of its newest logs:" in done.stderr, done.stderr[-3000:]
    assert "creating the control plane" in done.stderr  # it got that far before failing
    assert not LocalStack().state.exists()
    assert (
        _stack_processes(tools / "bin", paths.tools_dir() / "bin", LocalStack().state, state=LocalStack().state) == []
    )


@pytest.mark.stack_teardown(order=5)  # needs the stack's ports free: after the teardown tests
def test_a_missing_binary_is_named_before_anything_starts(tmp_path: Path) -> None:
    """Every tool up will use is checked before it starts anything, so a missing one changes nothing, not even
    the state directory."""
    tools = _tools_copy(tmp_path, leave_out="kueue")
    state = tmp_path / "state"
    done = _run_up(tools, state)
    assert done.returncode == 2, done.stderr
    assert f"the Kueue binary {tools}/bin/kueue is missing. Fix: run 'make tools'" in done.stderr
    assert "(nothing was started)" in done.stderr
    assert "creating the control plane" not in done.stderr
    assert not (state / "local").exists()
