"""RayHeads' launch template and worker tracking, against a fake API server (no sockets, no processes)."""

from __future__ import annotations

import base64
import copy
import posixpath
import re
from pathlib import Path
from typing import cast

import pytest

from planb.kube import Kube, Obj
from planb.local.rayhead import settings as settings_mod
from planb.local.rayhead.heads import MissingTokenError, RayHeads
from planb.local.rayhead.jobs import FAILED, RUNNING, RayJobRecord
from planb.local.rayhead.launch import LaunchRefusedError
from tests.support.shared.rayhead_cluster import HEAD, NS, OBJECTS, FakeKube, controller, feed, head_template, pod

RAYJOB = f"/apis/ray.io/v1/namespaces/{NS}/rayjobs/rj"
RAYCLUSTER = f"/apis/ray.io/v1/namespaces/{NS}/rayclusters/rc"
WORKER_LABELS = {"ray.io/cluster": "rc", "ray.io/node-type": "worker"}


def _objects() -> dict[str, Obj]:
    objects = copy.deepcopy(OBJECTS)
    objects[RAYJOB]["spec"]["rayClusterSpec"] = {"headGroupSpec": {"template": head_template(config_map="job-code")}}
    objects[RAYCLUSTER]["spec"]["headGroupSpec"]["template"] = head_template(
        env=[{"name": "FROM", "value": "the-raycluster"}], config_map="other"
    )
    objects[f"/api/v1/namespaces/{NS}/configmaps/job-code"] = {"data": {"train.py": "print('job code')\n"}}
    objects[f"/api/v1/namespaces/{NS}/configmaps/other"] = {"data": {"train.py": "print('other code')\n"}}
    return objects


def _heads(objects: dict[str, Obj], tmp_path: Path) -> RayHeads:
    return RayHeads(cast(Kube, FakeKube(objects)), state_dir=tmp_path)


def test_a_launch_takes_the_rayjobs_head_template_not_an_edited_rayclusters(tmp_path: Path) -> None:
    """KubeRay adopts a RayCluster by name and never reverts edits to its spec, so whoever writes
    RayClusters would choose the ConfigMap run; the launch takes the RayJob's spec.rayClusterSpec instead."""
    heads = _heads(_objects(), tmp_path)
    launch = heads.launch(HEAD, "rj", "python /app/train.py", {}, settings_mod.Payload(mode="run"))
    work = settings_mod.work_dir(NS, "rj", tmp_path)
    assert (work / "app" / "train.py").read_text() == "print('job code')\n"
    assert "FROM" not in launch.env


def test_a_launch_is_refused_without_the_rayjobs_head_template(tmp_path: Path) -> None:
    objects = _objects()
    del objects[RAYJOB]["spec"]["rayClusterSpec"]
    heads = _heads(objects, tmp_path)
    with pytest.raises(LaunchRefusedError, match=r"RayJob team-a/rj has no spec.rayClusterSpec.headGroupSpec"):
        heads.launch(HEAD, "rj", "python /app/train.py", {}, settings_mod.Payload(mode="run"))
    assert not (settings_mod.work_dir(NS, "rj", tmp_path) / "app").exists()


def test_a_launch_for_a_rayjob_that_did_not_make_the_cluster_is_refused(tmp_path: Path) -> None:
    heads = _heads(_objects(), tmp_path)
    with pytest.raises(LaunchRefusedError, match=r"not RayJob team-a/other"):
        heads.launch(HEAD, "other", "python /app/train.py", {}, settings_mod.Payload(mode="run"))


def _running_job(heads: RayHeads, tmp_path: Path) -> RayJobRecord:
    record = RayJobRecord(submission_id="s1", entrypoint="python train.py", log_file=tmp_path / "s1.log")
    job, _ = heads.table_for(HEAD).submit(record, settings_mod.Payload(seconds=30), None)
    assert job.status == RUNNING
    return job


def test_a_decoy_worker_without_the_raycluster_as_controller_is_ignored(tmp_path: Path) -> None:
    """Labels are whatever a pod's creator wrote; deleting a decoy with the worker labels (no owner, or
    another RayCluster's uid) does not fail the head's running jobs."""
    heads = _heads(_objects(), tmp_path)
    job = _running_job(heads, tmp_path)
    decoys = [
        pod("decoy-a", "decoy-a", WORKER_LABELS, ["ray-worker"], []),
        pod("decoy-b", "decoy-b", WORKER_LABELS, ["ray-worker"], [controller("RayCluster", "rc", "other-uid")]),
    ]
    feed(heads, HEAD, *decoys)
    feed(heads, HEAD)
    assert job.status == RUNNING
    heads.table_for(HEAD).stop("s1")


def test_a_real_worker_that_is_deleted_fails_the_running_jobs(tmp_path: Path) -> None:
    heads = _heads(_objects(), tmp_path)
    job = _running_job(heads, tmp_path)
    worker = pod("rc-worker", "worker-1", WORKER_LABELS, ["ray-worker"], [controller("RayCluster", "rc", "rc-uid")])
    feed(heads, HEAD, worker)
    feed(heads, HEAD)
    assert job.wait_terminal(5)
    assert job.status == FAILED and "rc-worker (deleted)" in job.message


class RecordingKube(FakeKube):
    """Every path read, answered as urllib3 would send it: with '../' resolved on the client side."""

    def __init__(self, objects: dict[str, Obj]) -> None:
        super().__init__(objects)
        self.read: list[str] = []

    def get(self, path: str) -> Obj | None:
        self.read.append(path)
        return super().get(posixpath.normpath(path))


def test_a_configmap_volume_named_with_a_path_is_refused_and_never_read(tmp_path: Path) -> None:
    """A ConfigMap source named '../../kube-system/configmaps/x' reached kube-system's ConfigMap
    (urllib3 resolves '../'), whose files the launch wrote and ran. It is refused, nothing of it read or written."""
    objects = _objects()
    evil = "../../kube-system/configmaps/x"
    objects[RAYJOB]["spec"]["rayClusterSpec"]["headGroupSpec"]["template"] = head_template(config_map=evil)
    objects["/api/v1/namespaces/kube-system/configmaps/x"] = {"data": {"train.py": "print('kube-system code')\n"}}
    kube = RecordingKube(objects)
    heads = RayHeads(cast(Kube, kube), state_dir=tmp_path)
    with pytest.raises(LaunchRefusedError, match=re.escape(f"ConfigMap volume names {evil!r}, which is not a DNS")):
        heads.launch(HEAD, "rj", "python /app/train.py", {}, settings_mod.Payload(mode="run"))
    assert [p for p in kube.read if "configmaps" in p] == []
    assert not (settings_mod.work_dir(NS, "rj", tmp_path) / "app").exists()


@pytest.mark.parametrize("secret", ["../../kube-system/secrets/x", "../rc", "a/b"])
def test_an_auth_secret_named_with_a_path_is_refused_and_never_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], secret: str
) -> None:
    """The RayCluster's authOptions Secret named with '../' reached another namespace's Secret, whose
    token then opened the head's job API. No token is taken (MissingTokenError: no request is answered), and no
    Secret is read."""
    objects = _objects()
    objects[RAYCLUSTER]["spec"]["authOptions"] = {"mode": "token", "secretName": secret}
    known = {"data": {"auth_token": base64.b64encode(b"known").decode()}}
    objects["/api/v1/namespaces/kube-system/secrets/x"] = objects[f"/api/v1/namespaces/{NS}/secrets/rc"] = known
    objects["/api/v1/namespaces/team-a/secrets/a/b"] = known
    kube = RecordingKube(objects)
    with pytest.raises(MissingTokenError, match=re.escape(f"Secret names {secret!r}, which is not a DNS-1123")):
        RayHeads(cast(Kube, kube), state_dir=tmp_path).auth_token(NS, "rc")
    assert [p for p in kube.read if "secrets" in p] == []
    assert f"names {secret!r}, which is not a DNS-1123 subdomain" in capsys.readouterr().out


def test_a_controller_named_with_a_path_is_no_maker_and_its_rayjob_is_never_read(tmp_path: Path) -> None:
    """The API server does not check an ownerReference's name, and the head read
    `rayjobs/<name>` with it as it was, so a RayCluster in team-a whose controller names
    '../../team-b/rayjobs/victim' (with the victim's uid) had team-b's RayJob as its maker, and that RayJob's
    entrypoint ran under team-a's run setting. It is no maker, and nothing is read by that name."""
    objects = _objects()
    evil = "../../team-b/rayjobs/victim"
    objects[RAYCLUSTER]["metadata"]["ownerReferences"] = [controller("RayJob", evil, "victim-uid")]
    objects["/apis/ray.io/v1/namespaces/team-b/rayjobs/victim"] = {
        "metadata": {"name": "victim", "namespace": "team-b", "uid": "victim-uid"},
        "spec": {"entrypoint": "python victim.py"},
    }
    kube = RecordingKube(objects)
    made = RayHeads(cast(Kube, kube), state_dir=tmp_path).maker(NS, "rc")
    assert made.rayjob is None
    assert f"names {evil!r}, which is not a DNS-1123 subdomain" in made.why
    assert [p for p in kube.read if "rayjobs" in p] == []


def test_each_launch_gets_its_own_private_empty_dir_and_the_env_points_into_it(tmp_path: Path) -> None:
    """The chart keeps the stop-notice file in an emptyDir (PLANB_NOTICE_FILE inside it): on this machine each launch
    gets a new 0700 directory for it, so one job's notice never reaches another run."""
    objects = _objects()
    template = objects[RAYJOB]["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]
    template["spec"]["volumes"].append({"name": "stop-notice", "emptyDir": {}})
    container = template["spec"]["containers"][0]
    container["volumeMounts"].append({"name": "stop-notice", "mountPath": "/var/run/planb-notice"})
    container["env"] = [{"name": "PLANB_NOTICE_FILE", "value": "/var/run/planb-notice/stop"}]
    heads = _heads(objects, tmp_path)
    work = settings_mod.work_dir(NS, "rj", tmp_path)
    files = []
    for _ in range(2):
        launch = heads.launch(HEAD, "rj", "python /app/train.py", {}, settings_mod.Payload(mode="run"))
        notice = Path(launch.env["PLANB_NOTICE_FILE"])
        assert notice.name == "stop" and notice.parent.parent == work
        assert notice.parent.is_dir() and notice.parent.stat().st_mode & 0o777 == 0o700
        files.append(notice)
    assert files[0] != files[1]
