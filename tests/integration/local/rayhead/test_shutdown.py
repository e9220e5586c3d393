"""A preempted Spot node's Ray worker pods, terminated as GKE's kubelet does (planb.local.rayhead.shutdown): the chart's
preStop hook's notice file where the payload's workers poll it, then SIGTERM to the payload's Ray Train worker
processes alone, SIGKILL at the end of the grace period; never the driver, the head's other processes, the head pod
or the submitter. The cluster is tests/support/shared/rayhead_cluster.py's fake API server; the processes are real
(bash's ``exec -a`` gives a process the title Ray gives a Ray Train worker)."""

from __future__ import annotations

import copy
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from planb.kube import Kube, Obj
from planb.local.capacity.spot import NOTICE_ANNOTATION
from planb.local.process import is_alive
from planb.local.rayhead.heads import RayHeads
from planb.local.rayhead.jobs import RUNNING, RayJobRecord
from planb.local.rayhead.launch import Launch
from planb.local.rayhead.shutdown import NodeShutdown, hook_notice_file, ray_train_workers
from tests.support.shared.rayhead_cluster import HEAD, NS, OBJECTS, SUBMITTER, FakeKube, controller, pod

NOTICE_DIR = "/var/run/planb-notice"
SPOT_NODE, CPU_NODE = "spot-node-1", "cpu-node-1"


@pytest.fixture(scope="module")
def chart_worker(template: Callable[..., list[dict[str, Any]]]) -> Obj:
    """The chart's worker pod template (what KubeRay gives each worker pod), for the ladder's profile."""
    objs = template("-f", "charts/planb/values/tpu-v6e-4x4.yaml")
    (rayjob,) = [o for o in objs if o.get("kind") == "RayJob"]
    (group,) = rayjob["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    return dict(group["template"])


def _worker(chart_worker: Obj, name: str, uid: str, node: str, cluster_uid: str = "rc-uid") -> Obj:
    worker = pod(name, uid, {"ray.io/cluster": "rc", "ray.io/node-type": "worker"}, [], [])
    worker["metadata"]["ownerReferences"] = [controller("RayCluster", "rc", cluster_uid)]
    worker["spec"] = {**copy.deepcopy(chart_worker["spec"]), "nodeName": node}
    return worker


def _launch(tmp_path: Path) -> Launch:
    notice = tmp_path / "emptydir-head"
    notice.mkdir(mode=0o700)
    return Launch(argv=[], env={}, cwd=tmp_path, empty_dirs={NOTICE_DIR: notice})


def test_the_charts_worker_hook_creates_its_file_in_the_launchs_emptydir(chart_worker: Obj, tmp_path: Path) -> None:
    """The worker's PLANB_NOTICE_FILE lies under its emptyDir, at the mountPath the head's launch made its own
    directory for: the file the payload's workers poll on this host."""
    launch = _launch(tmp_path)
    found, why = hook_notice_file(_worker(chart_worker, "w", "w", SPOT_NODE), launch)
    assert (found, why) == (launch.empty_dirs[NOTICE_DIR] / "stop", "")


def _edited(chart_worker: Obj, edit: Callable[[Obj], None]) -> Obj:
    worker = _worker(chart_worker, "w", "w", SPOT_NODE)
    edit(worker["spec"]["containers"][0])
    return worker


def _env(container: Obj, value: str) -> None:
    (entry,) = [e for e in container["env"] if e["name"] == "PLANB_NOTICE_FILE"]
    entry["value"] = value


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (lambda c: c["lifecycle"]["preStop"]["exec"].update(command=["/bin/sh", "-c", "sleep 5"]), "names no"),
        (lambda c: _env(c, f"{NOTICE_DIR}/../../../../etc/stop"), "'..' would leave the work directory"),
        (lambda c: _env(c, "/tmp/stop"), "under none of its emptyDir volumes"),
        (lambda c: c.pop("lifecycle"), "no container of it has a preStop hook"),
    ],
)
def test_no_file_is_made_for_another_hook_or_a_path_outside_the_emptydir(
    chart_worker: Obj, tmp_path: Path, edit: Callable[[Obj], None], why: str
) -> None:
    found, said = hook_notice_file(_edited(chart_worker, edit), _launch(tmp_path))
    assert found is None and why in said, said


def test_a_launch_without_the_emptydir_gets_no_file(chart_worker: Obj, tmp_path: Path) -> None:
    launch = Launch(argv=[], env={}, cwd=tmp_path)
    found, why = hook_notice_file(_worker(chart_worker, "w", "w", SPOT_NODE), launch)
    assert found is None and f"no emptyDir at {NOTICE_DIR}" in why


@pytest.fixture
def payload() -> Iterator[subprocess.Popen[bytes]]:
    """A driver in a session of its own, as the stand-in starts a payload, with two processes beside it as Ray starts
    them: a Ray Train worker (titled as Ray titles it) and the Train controller (the head's)."""
    script = (
        "(exec -a ray::RayTrainWorker sleep 60) & (exec -a ray::TrainController.run sleep 60) & "
        "trap 'exit 0' TERM; wait"
    )
    proc = subprocess.Popen(["bash", "-c", script], start_new_session=True)
    deadline = time.monotonic() + 10
    while len(ray_train_workers(proc.pid)) < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    yield proc
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _session(proc: subprocess.Popen[bytes]) -> dict[str, int]:
    """The session's processes by title: the driver is `bash`."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getsid(int(entry.name)) != proc.pid or not is_alive(int(entry.name)):
                continue
            title = (entry / "cmdline").read_bytes().split(b"\0", 1)[0].decode()
        except OSError:
            continue
        found[title] = int(entry.name)
    return found


def _stack(chart_worker: Obj, proc: subprocess.Popen[bytes], tmp_path: Path) -> tuple[NodeShutdown, RayJobRecord]:
    """A head whose job runs `proc` as a `run` payload, its pods fed, and a preemption notice 13 s ago on SPOT_NODE
    (2 s of the grace period left)."""
    heads = RayHeads(cast(Kube, FakeKube(copy.deepcopy(OBJECTS))), state_dir=tmp_path)
    record = RayJobRecord(submission_id="s1", entrypoint="python /app/train.py", log_file=tmp_path / "s1.log")
    record.status, record.process, record.launch = RUNNING, proc, _launch(tmp_path)
    table = heads.table_for(HEAD)
    table.jobs["s1"] = record
    head, submitter = copy.deepcopy(HEAD), copy.deepcopy(SUBMITTER)
    head["spec"]["nodeName"] = submitter["spec"]["nodeName"] = CPU_NODE
    pods = [
        head,
        submitter,
        _worker(chart_worker, "rc-worker-a", "w-a", SPOT_NODE),
        _worker(chart_worker, "rc-worker-b", "w-b", CPU_NODE),  # a worker on a node without a notice
        _worker(chart_worker, "decoy", "w-decoy", SPOT_NODE, cluster_uid="other-uid"),  # not the cluster's
    ]
    heads.pods.items = {f"{NS}/{p['metadata']['name']}": p for p in pods}
    shutdown = NodeShutdown(heads)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(time.time() - 13))
    shutdown.nodes.items = {
        f"/{SPOT_NODE}": {"metadata": {"name": SPOT_NODE, "annotations": {NOTICE_ANNOTATION: stamp}}},
        f"/{CPU_NODE}": {"metadata": {"name": CPU_NODE}},
    }
    return shutdown, record


def test_the_noticed_nodes_worker_gets_the_hook_then_sigterm_reaches_the_ray_train_worker_alone(
    chart_worker: Obj, payload: subprocess.Popen[bytes], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutdown, record = _stack(chart_worker, payload, tmp_path)
    due = shutdown.due()
    assert [(r.submission_id, p["metadata"]["name"]) for r, p, _ in due] == [("s1", "rc-worker-a")]
    assert shutdown.due() == []  # each pod once
    before = _session(payload)
    assert set(before) == {"bash", "ray::RayTrainWorker", "ray::TrainController.run"}, before
    notice = tmp_path / "emptydir-head" / "stop"

    def worker_saves() -> None:  # the payload's side: train.py acknowledges its save beside the notice file
        deadline = time.monotonic() + 10
        while not notice.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        Path(f"{notice}.saved").write_text("2001\n")

    saver = threading.Thread(target=worker_saves)
    saver.start()
    _, worker, at = due[0]
    shutdown.terminate(record, worker, at)  # returns once the grace period (15 s from the notice) is over
    saver.join()
    after = _session(payload)
    assert set(after) == {"bash", "ray::TrainController.run"}, after
    assert payload.poll() is None  # the driver, told nothing
    out = capsys.readouterr().out
    assert f"pod {NS}/rc-worker-a: Spot preemption notice; its preStop hook created {notice}" in out, out
    assert f"pod {NS}/rc-worker-a: preStop hook ended, stop.saved found" in out, out
    trainer = before["ray::RayTrainWorker"]
    assert f"pod {NS}/rc-worker-a: SIGTERM to the payload's Ray Train worker process(es) {trainer}\n" in out, out
    assert "rc-worker-b" not in out and "decoy" not in out and "rc-head" not in out and "rj-sub" not in out, out


def test_a_worker_that_ignores_sigterm_is_killed_at_the_end_of_the_grace_period(
    chart_worker: Obj, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = (
        "(exec -a ray::RayTrainWorker python3 -c "
        '"import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)") & wait'
    )
    proc = subprocess.Popen(["bash", "-c", script], start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while not ray_train_workers(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        (trainer,) = ray_train_workers(proc.pid)
        time.sleep(0.5)  # its SIGTERM handler set
        shutdown, record = _stack(chart_worker, proc, tmp_path)
        worker = shutdown.heads.pods.items[f"{NS}/rc-worker-a"]
        worker["spec"]["containers"][0].pop("lifecycle")  # no hook: SIGTERM at once (the kubelet's order)
        shutdown.terminate(record, worker, time.time() - 13)
        deadline = time.monotonic() + 5
        while is_alive(trainer) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not is_alive(trainer)
        out = capsys.readouterr().out
        assert "no container of it has a preStop hook" in out, out
        assert f"SIGKILL to Ray Train worker process {trainer}, still running at the end of the grace period" in out
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_a_plain_payload_has_no_worker_process_to_signal(
    chart_worker: Obj, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The plain runner trains in the driver: the hook's file is its notice, and no process gets SIGTERM."""
    proc = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        shutdown, record = _stack(chart_worker, proc, tmp_path)
        notice = tmp_path / "emptydir-head" / "stop"
        threading.Timer(0.3, lambda: Path(f"{notice}.saved").write_text("7\n")).start()
        _, worker, at = shutdown.due()[0]
        shutdown.terminate(record, worker, at)
        assert notice.is_file() and proc.poll() is None
        assert "SIGTERM to no process: no Ray Train worker of the payload runs" in capsys.readouterr().out
    finally:
        proc.kill()
        proc.wait()
