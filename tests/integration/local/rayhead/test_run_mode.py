"""`run` payloads through the stand-in: what reaches this machine as a process, where it runs, how it is recorded,
and the Ray token check in front of it. The cluster is tests/support/shared/rayhead_cluster.py's fake API server."""

from __future__ import annotations

import base64
import copy
import hmac
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from planb.kube import Kube, Obj
from planb.local.process import start_time
from planb.local.rayhead import settings as settings_mod
from planb.local.rayhead.chain import ChainRefusedError
from planb.local.rayhead.heads import RayHeads
from planb.local.rayhead.jobs import FAILED, SUCCEEDED
from planb.local.rayhead.launch import LaunchRefusedError
from planb.local.rayhead.server import RayHeadServer
from planb.local.rayhead.submitter import Submitters
from tests.support.shared.rayhead_cluster import (
    NS,
    OBJECTS,
    SUBMITTER,
    FakeKube,
    controller,
    feed,
    head_template,
    proxied,
)

RAYJOB = f"/apis/ray.io/v1/namespaces/{NS}/rayjobs/rj"
RAYCLUSTER = f"/apis/ray.io/v1/namespaces/{NS}/rayclusters/rc"
SECRET = f"/api/v1/namespaces/{NS}/secrets/rc"
TOKEN = "s3cret-token"
AUTH = {"x-ray-authorization": f"Bearer {TOKEN}"}
#: The chart's payload shape: a ConfigMap mounted at /app, run as `python /app/train.py`.
ENTRYPOINT = "python /app/train.py"
TRAIN = (
    "import os, pathlib, sys\n"
    "print('cwd', os.getcwd(), 'home', os.environ['HOME'], 'script', __file__)\n"
    "seen = pathlib.Path('progress.txt')\n"
    "print('found', seen.read_text() if seen.exists() else '-')\n"
    "seen.write_text(os.environ.get('RUN', '?'))\n"
    "while os.environ.get('WAIT_FOR') and not os.path.exists(os.environ['WAIT_FOR']):\n"
    "    import time; time.sleep(0.05)\n"
)


def _head(env: list[Obj] | None = None) -> Obj:
    """The head pod KubeRay makes from the RayCluster's head template (`head_template`)."""
    return {
        "metadata": {
            "name": "rc-head",
            "namespace": NS,
            "uid": "head-1",
            "labels": {"ray.io/cluster": "rc", "ray.io/node-type": "head"},
            "ownerReferences": [controller("RayCluster", "rc", "rc-uid")],
        },
        "spec": head_template(env)["spec"],
        "status": {"phase": "Running", "startTime": "2026-01-01T00:00:00Z"},
    }


def _objects(
    entrypoint: str = ENTRYPOINT, token: str | None = TOKEN, train: str = TRAIN, env: list[Obj] | None = None
) -> dict[str, Obj]:
    objects = copy.deepcopy(OBJECTS)
    objects[RAYJOB]["spec"]["entrypoint"] = entrypoint
    objects[RAYCLUSTER]["spec"]["headGroupSpec"]["template"] = head_template(env)
    objects[RAYJOB]["spec"]["rayClusterSpec"]["headGroupSpec"]["template"] = head_template(env)
    objects[f"/api/v1/namespaces/{NS}/configmaps/rj-app"] = {"data": {"train.py": train}}
    if token is not None:
        objects[RAYCLUSTER]["spec"]["authOptions"] = {"mode": "token"}
        objects[SECRET] = {"data": {"auth_token": base64.b64encode(token.encode()).decode()}}
    return objects


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    """serve(objects) -> (heads, kube, server), with default/rj's payload set to run."""
    made: list[tuple[RayHeads, RayHeadServer]] = []

    def start(objects: dict[str, Obj]) -> tuple[RayHeads, FakeKube, RayHeadServer]:
        settings_mod.set_payload(f"{NS}/rj", settings_mod.Payload(mode="run", env={"RUN": "1"}), tmp_path)
        kube = FakeKube(objects)
        heads = RayHeads(cast(Kube, kube), tmp_path)
        Submitters(heads)
        server = RayHeadServer(heads, port=0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        made.append((heads, server))
        return heads, kube, server

    yield start
    for heads, server in made:
        server.shutdown()
        server.server_close()
        for table in list(heads.tables.values()):
            table.close("test over")


def _wait_job(server: RayHeadServer, submission_id: str, headers: dict[str, str] | None = None) -> Obj:
    deadline = time.monotonic() + 30
    while True:
        code, job = proxied(server, "GET", f"/api/jobs/{submission_id}", headers=headers)
        assert code == 200, job
        if job["status"] in (SUCCEEDED, FAILED) or time.monotonic() > deadline:
            return cast(Obj, job)
        time.sleep(0.05)


def test_a_rayjob_whose_entrypoint_is_bash_is_not_run_on_the_host(serve: Any, tmp_path: Path) -> None:
    marker = tmp_path / "owned"
    heads, kube, server = serve(_objects(entrypoint=f"bash -c 'touch {marker}'"))
    feed(heads, _head(), SUBMITTER)
    deadline = time.monotonic() + 15
    while not kube.patches and time.monotonic() < deadline:
        time.sleep(0.05)
    job = _wait_job(server, "rj-sub-id", AUTH)
    assert job["status"] == FAILED
    assert "planb's policy: the entrypoint \"bash -c 'touch" in job["message"], job["message"]
    assert "only 'python <file from a mounted ConfigMap or the image folder> [ARG ...]' runs" in job["message"]
    [log] = settings_mod.logs_dir(tmp_path).glob("*rj-sub-id.log")
    assert "was not run: planb's policy" in log.read_text()
    time.sleep(0.3)
    assert not marker.exists(), "the entrypoint ran on the host"


def test_the_job_api_runs_only_the_rayjobs_own_entrypoint_of_a_token_cluster(serve: Any, tmp_path: Path) -> None:
    heads, _, server = serve(_objects(token=None))
    feed(heads, _head())
    code, answer = proxied(server, "POST", "/api/jobs/", {"submission_id": "s0", "entrypoint": ENTRYPOINT})
    assert code == 400 and "planb's policy: RayCluster team-a/rc has no token auth" in answer, answer

    heads, _, server = serve(_objects())
    feed(heads, _head())
    marker = tmp_path / "owned"
    other = {"submission_id": "s1", "entrypoint": f"python /app/train.py && touch {marker}"}
    code, answer = proxied(server, "POST", "/api/jobs/", other, headers=AUTH)
    assert code == 400 and "is not RayJob team-a/rj's spec.entrypoint" in answer, answer
    own = {"submission_id": "s2", "entrypoint": ENTRYPOINT}
    assert proxied(server, "POST", "/api/jobs/", own, headers=AUTH)[0] == 200
    assert _wait_job(server, "s2", AUTH)["status"] == SUCCEEDED
    assert [j["submission_id"] for j in proxied(server, "GET", "/api/jobs/", headers=AUTH)[1]] == ["s2"]
    assert not marker.exists()


def test_every_submission_of_a_rayjob_runs_in_the_rayjobs_work_directory(serve: Any, tmp_path: Path) -> None:
    """A KubeRay retry has a new submission id; it must find what the first run left (its checkpoints)."""
    heads, _, server = serve(_objects())
    feed(heads, _head())
    work = settings_mod.work_dir(NS, "rj", tmp_path)
    for submission_id in ("rj-attempt-1", "rj-attempt-2"):
        body = {"submission_id": submission_id, "entrypoint": ENTRYPOINT}
        assert proxied(server, "POST", "/api/jobs/", body, headers=AUTH)[0] == 200
        assert _wait_job(server, submission_id, AUTH)["status"] == SUCCEEDED
    first, second = (
        next(settings_mod.logs_dir(tmp_path).glob(f"*{s}.log")).read_text() for s in ("rj-attempt-1", "rj-attempt-2")
    )
    assert f"cwd {work} home {work} script {work / 'app' / 'train.py'}" in first, first
    assert "found -" in first and "found 1" in second, second


def test_a_running_payload_is_recorded_until_it_ends(serve: Any, tmp_path: Path) -> None:
    release = tmp_path / "release"
    wait_for = [{"name": "WAIT_FOR", "value": str(release)}]
    heads, _, server = serve(_objects(env=wait_for))
    feed(heads, _head(env=wait_for))
    body = {"submission_id": "s1", "entrypoint": ENTRYPOINT}
    assert proxied(server, "POST", "/api/jobs/", body, headers=AUTH)[0] == 200
    job = next(iter(heads.tables.values())).get("s1")
    assert job is not None and job.process is not None
    pid = job.process.pid
    record = settings_mod.payloads_dir(tmp_path) / f"{pid}.pid"
    assert record.read_text() == f"{pid} {start_time(pid)}\n"
    release.touch()
    assert _wait_job(server, "s1", AUTH)["status"] == SUCCEEDED
    deadline = time.monotonic() + 5
    while record.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not record.exists()


@pytest.mark.parametrize("secret", [None, {"data": {}}, {"data": {"auth_token": ""}}])
def test_a_token_cluster_without_its_token_answers_503(serve: Any, secret: Obj | None) -> None:
    objects = _objects()
    objects.pop(SECRET)
    if secret is not None:
        objects[SECRET] = secret
    heads, _, server = serve(objects)
    feed(heads, _head())
    for headers in ({"x-ray-authorization": "Bearer "}, {}, AUTH):
        code, answer = proxied(server, "GET", "/api/jobs/", headers=headers)
        assert code == 503 and "holds no auth_token" in answer, (code, answer)


def test_the_token_is_compared_in_constant_time_and_an_empty_bearer_fails(
    serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    compared: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    heads, _, server = serve(_objects())
    feed(heads, _head())
    for header in ("Bearer ", "Bearer", "", "bearer " + TOKEN, "Bearer wrong"):
        assert proxied(server, "GET", "/api/jobs/", headers={"x-ray-authorization": header})[0] == 401, header
    assert proxied(server, "GET", "/api/jobs/", headers=AUTH)[0] == 200
    assert compared == [(b"wrong", TOKEN.encode()), (TOKEN.encode(), TOKEN.encode())]


def _evil_train(marker: Path) -> str:
    return f"import pathlib\npathlib.Path({str(marker)!r}).write_text('owned')\n"


def test_a_decoy_pod_with_the_heads_labels_runs_nothing_of_its_own(serve: Any, tmp_path: Path) -> None:
    """A pod anyone may create, with the head service's labels and a ConfigMap of its own: refused, naming the
    mismatch, before a file of it is written or run."""
    marker = tmp_path / "owned"
    objects = _objects()
    objects[f"/api/v1/namespaces/{NS}/configmaps/evil-app"] = {"data": {"train.py": _evil_train(marker)}}
    decoy = _head()
    decoy["metadata"].update(name="decoy", uid="decoy-1", ownerReferences=[])
    decoy["spec"]["volumes"] = [{"name": "app", "configMap": {"name": "evil-app"}}]
    forged = copy.deepcopy(decoy)  # the right RayCluster's name, not its uid
    forged["metadata"].update(name="forged", uid="forged-1", ownerReferences=[controller("RayCluster", "rc", "x")])
    heads, _, server = serve(objects)
    feed(heads, decoy, forged)
    code, answer = proxied(server, "POST", "/api/jobs/", {"submission_id": "s1", "entrypoint": ENTRYPOINT}, AUTH)
    assert code == 403, answer
    assert "planb's policy: no pod behind service team-a/rc-head-svc is a Ray head KubeRay made" in answer
    assert "pod team-a/decoy is not the head RayCluster rc's status.head.podName names (rc-head)" in answer, answer
    assert "pod team-a/forged is not the head" in answer, answer
    assert heads.tables == {}
    assert not settings_mod.work_dir(NS, "rj", tmp_path).exists()  # not a file of the decoy's written
    # The real head beside them is the one that answers.
    feed(heads, decoy, _head())
    assert proxied(server, "POST", "/api/jobs/", {"submission_id": "s2", "entrypoint": ENTRYPOINT}, AUTH)[0] == 200
    assert _wait_job(server, "s2", AUTH)["status"] == SUCCEEDED
    time.sleep(0.3)
    assert not marker.exists(), "the decoy's ConfigMap ran on the host"


def test_a_decoy_pod_owned_by_the_clusters_uid_is_not_the_head_its_status_names(serve: Any, tmp_path: Path) -> None:
    """A decoy with the head's labels whose controller ownerReference carries the RayCluster's
    real name and uid (anyone who may create pods may write one) is still not the head: KubeRay's status subresource
    names the head pod, and only the pod of that name is taken, whichever the informer lists first."""
    marker = tmp_path / "owned"
    objects = _objects()
    objects[f"/api/v1/namespaces/{NS}/configmaps/evil-app"] = {"data": {"train.py": _evil_train(marker)}}
    decoy = _head()
    decoy["metadata"].update(name="a-decoy", uid="decoy-1")  # the same labels and ownerReferences as the head
    assert decoy["metadata"]["ownerReferences"] == [controller("RayCluster", "rc", "rc-uid")]
    decoy["spec"]["volumes"] = [{"name": "app", "configMap": {"name": "evil-app"}}]
    heads, _, server = serve(objects)
    feed(heads, decoy)  # alone: refused, naming the head KubeRay's status names
    code, answer = proxied(server, "POST", "/api/jobs/", {"submission_id": "s1", "entrypoint": ENTRYPOINT}, AUTH)
    assert code == 403, answer
    assert "pod team-a/a-decoy is not the head RayCluster rc's status.head.podName names (rc-head)" in answer, answer
    assert heads.tables == {}
    assert not settings_mod.work_dir(NS, "rj", tmp_path).exists()
    feed(heads, decoy, _head())  # beside the real head, listed first: the real head answers
    assert proxied(server, "POST", "/api/jobs/", {"submission_id": "s2", "entrypoint": ENTRYPOINT}, AUTH)[0] == 200
    assert _wait_job(server, "s2", AUTH)["status"] == SUCCEEDED
    assert [t.head for t in heads.tables.values()] == [f"{NS}/rc-head"]
    # The submitter pod's path (rayhead.submitter) takes the same head.
    assert heads.head_pod(NS, "rc-head-svc")["metadata"]["name"] == "rc-head"  # type: ignore[index]
    # No status yet (KubeRay has not seen a head): nothing is taken, the decoy included.
    del objects[RAYCLUSTER]["status"]
    with pytest.raises(ChainRefusedError, match=re.escape("status.head.podName names (none yet)")):
        heads.head_pod(NS, "rc-head-svc")
    time.sleep(0.3)
    assert not marker.exists(), "the decoy's ConfigMap ran on the host"


def test_a_decoy_the_status_names_runs_only_the_rayjobs_head_template(serve: Any, tmp_path: Path) -> None:
    """With no head pod, KubeRay adopts the one pod carrying the head labels and names it
    in status.head.podName (v1.6.2 common/association.go#L83-L91, raycluster_controller.go#L1801-L1812), so a decoy
    with a forged controller ownerReference passes as the head. The launch still takes its ConfigMap volumes and env
    from the RayJob's own spec.rayClusterSpec.headGroupSpec.template, never from the pod (nor from the RayCluster,
    whose spec KubeRay never reverts after an edit)."""
    marker = tmp_path / "owned"
    train = TRAIN + "print('from', os.environ.get('FROM'), 'startup', os.environ.get('PYTHONSTARTUP'))\n"
    objects = _objects(train=train, env=[{"name": "FROM", "value": "the-spec"}])
    objects[RAYCLUSTER]["status"]["head"]["podName"] = "decoy"
    objects[f"/api/v1/namespaces/{NS}/configmaps/evil-app"] = {"data": {"train.py": _evil_train(marker)}}
    decoy = _head(env=[{"name": "FROM", "value": "the-decoy"}, {"name": "PYTHONSTARTUP", "value": "/x.py"}])
    decoy["metadata"].update(name="decoy", uid="decoy-1")  # the head's labels, RayCluster rc uid rc-uid as controller
    decoy["spec"]["volumes"] = [{"name": "app", "configMap": {"name": "evil-app"}}]
    heads, _, server = serve(objects)
    feed(heads, decoy)
    assert heads.head_pod(NS, "rc-head-svc") is decoy  # what KubeRay's status names passes as the head
    assert proxied(server, "POST", "/api/jobs/", {"submission_id": "s1", "entrypoint": ENTRYPOINT}, AUTH)[0] == 200
    job = _wait_job(server, "s1", AUTH)
    [log] = settings_mod.logs_dir(tmp_path).glob("*s1.log")
    assert job["status"] == SUCCEEDED, log.read_text()
    work = settings_mod.work_dir(NS, "rj", tmp_path)
    assert f"script {work / 'app' / 'train.py'}" in log.read_text()
    assert "from the-spec startup None" in log.read_text(), log.read_text()
    assert (work / "app" / "train.py").read_text() == train
    time.sleep(0.3)
    assert not marker.exists(), "the decoy's ConfigMap ran on the host"
    # The RayCluster read at launch is the one the head's controller names by uid, not another of the same name.
    objects[RAYCLUSTER]["metadata"]["uid"] = "rc-uid-2"
    with pytest.raises(LaunchRefusedError, match=r"planb's policy: RayCluster team-a/rc's uid is rc-uid-2"):
        heads.launch(decoy, "rj", ENTRYPOINT, {}, settings_mod.Payload(mode="run"))


def test_a_raycluster_that_claims_the_rayjob_runs_nothing_of_its_own(serve: Any, tmp_path: Path) -> None:
    """A RayCluster of its own, with a token of its own, that names the RayJob as its controller (even by its real
    uid): the RayJob made another cluster, so its head's ConfigMap does not run."""
    marker = tmp_path / "owned"
    objects = _objects()
    evil_token = "evil-token"
    objects[f"/api/v1/namespaces/{NS}/services/evil-head-svc"] = {"spec": {"selector": {"ray.io/cluster": "evil"}}}
    objects[f"/apis/ray.io/v1/namespaces/{NS}/rayclusters/evil"] = {
        "metadata": {"name": "evil", "uid": "evil-uid", "ownerReferences": [controller("RayJob", "rj", "rj-uid")]},
        "spec": {"authOptions": {"mode": "token"}},
        "status": {"head": {"podName": "evil-head"}},
    }
    objects[f"/api/v1/namespaces/{NS}/secrets/evil"] = {
        "data": {"auth_token": base64.b64encode(b"evil-token").decode()}
    }
    objects[f"/api/v1/namespaces/{NS}/configmaps/evil-app"] = {"data": {"train.py": _evil_train(marker)}}
    head = _head()
    head["metadata"].update(
        name="evil-head",
        uid="evil-head-1",
        labels={"ray.io/cluster": "evil", "ray.io/node-type": "head"},
        ownerReferences=[controller("RayCluster", "evil", "evil-uid")],
    )
    head["spec"]["volumes"] = [{"name": "app", "configMap": {"name": "evil-app"}}]
    heads, _, server = serve(objects)
    feed(heads, head)
    body = {"submission_id": "s1", "entrypoint": ENTRYPOINT}
    conn_headers = {"x-ray-authorization": f"Bearer {evil_token}"}
    code, answer = _proxied_to(server, "evil-head-svc", body, conn_headers)
    assert code == 403, answer
    assert "RayCluster team-a/evil names a RayJob among its owners" in answer, answer
    assert "RayJob team-a/rj made RayCluster rc, not evil" in answer, answer
    assert all(table.list() == [] for table in heads.tables.values())  # no job taken
    assert not settings_mod.work_dir(NS, "rj", tmp_path).exists()
    time.sleep(0.3)
    assert not marker.exists(), "the claiming cluster's ConfigMap ran on the host"


def test_a_job_takes_its_environment_only_from_its_rayjob(serve: Any, tmp_path: Path) -> None:
    objects = _objects()
    objects[RAYJOB]["spec"]["runtimeEnvYAML"] = "env_vars:\n  RUN: from-the-rayjob\n"
    heads, _, server = serve(objects)
    feed(heads, _head())
    other = {"submission_id": "s1", "entrypoint": ENTRYPOINT, "runtime_env": {"env_vars": {"PYTHONSTARTUP": "/x"}}}
    code, answer = proxied(server, "POST", "/api/jobs/", other, AUTH)
    assert code == 400 and "runtime_env.env_vars are not RayJob team-a/rj's spec.runtimeEnvYAML" in answer, answer
    own = {"submission_id": "s2", "entrypoint": ENTRYPOINT, "runtime_env": {"env_vars": {"RUN": "from-the-rayjob"}}}
    assert proxied(server, "POST", "/api/jobs/", own, AUTH)[0] == 200
    assert _wait_job(server, "s2", AUTH)["status"] == SUCCEEDED
    assert heads.tables and next(iter(heads.tables.values())).get("s2").runtime_env == {  # type: ignore[union-attr]
        "env_vars": {"RUN": "from-the-rayjob"}
    }


def _proxied_to(server: RayHeadServer, service: str, body: Obj, headers: dict[str, str]) -> tuple[int, Any]:
    """A POST through the stand-in to another head service than the fake cluster's own."""
    import http.client
    import json

    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    try:
        conn.request("POST", f"http://{service}.{NS}.svc.cluster.local:8265/api/jobs/", json.dumps(body), headers)
        answer = conn.getresponse()
        return answer.status, answer.read().decode()
    finally:
        conn.close()
