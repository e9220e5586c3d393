"""`run` payloads through the stand-in: what reaches this machine as a process, where it runs, how it is recorded,
and the Ray token check in front of it (the chain KubeRay made, which it runs for: test_run_mode_chain.py). The cluster
is tests/support/shared/rayhead_cluster.py's fake API server, the stand-in tests/support/integration/rayhead_run.py's.
"""

from __future__ import annotations

import hmac
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from planb.kube import Obj
from planb.local.process import start_time
from planb.local.rayhead import payloads
from planb.local.rayhead import settings as settings_mod
from planb.local.rayhead.jobs import FAILED, SUCCEEDED
from tests.support.integration.rayhead_run import (
    AUTH,
    ENTRYPOINT,
    RAYJOB,
    SECRET,
    TOKEN,
    TRAIN,
    head_pod,
    run_objects,
    wait_job,
)
from tests.support.shared.rayhead_cluster import (
    NS,
    SUBMITTER,
    feed,
    proxied,
)


def test_a_rayjob_whose_entrypoint_is_bash_is_not_run_on_the_host(serve: Any, tmp_path: Path) -> None:
    marker = tmp_path / "owned"
    heads, kube, server = serve(run_objects(entrypoint=f"bash -c 'touch {marker}'"))
    feed(heads, head_pod(), SUBMITTER)
    deadline = time.monotonic() + 15
    while not kube.patches and time.monotonic() < deadline:
        time.sleep(0.05)
    job = wait_job(server, "rj-sub-id", AUTH)
    assert job["status"] == FAILED
    assert "planb's policy: the entrypoint \"bash -c 'touch" in job["message"], job["message"]
    assert "only 'python <file from a mounted ConfigMap or the image folder> [ARG ...]' runs" in job["message"]
    [log] = settings_mod.logs_dir(tmp_path).glob("*rj-sub-id.log")
    assert "was not run: planb's policy" in log.read_text()
    time.sleep(0.3)
    assert not marker.exists(), "the entrypoint ran on the host"


def test_the_job_api_runs_only_the_rayjobs_own_entrypoint_of_a_token_cluster(serve: Any, tmp_path: Path) -> None:
    heads, _, server = serve(run_objects(token=None))
    feed(heads, head_pod())
    code, answer = proxied(server, "POST", "/api/jobs/", {"submission_id": "s0", "entrypoint": ENTRYPOINT})
    assert code == 400 and "planb's policy: RayCluster team-a/rc has no token auth" in answer, answer

    heads, _, server = serve(run_objects())
    feed(heads, head_pod())
    marker = tmp_path / "owned"
    other = {"submission_id": "s1", "entrypoint": f"python /app/train.py && touch {marker}"}
    code, answer = proxied(server, "POST", "/api/jobs/", other, headers=AUTH)
    assert code == 400 and "is not RayJob team-a/rj's spec.entrypoint" in answer, answer
    own = {"submission_id": "s2", "entrypoint": ENTRYPOINT}
    assert proxied(server, "POST", "/api/jobs/", own, headers=AUTH)[0] == 200
    assert wait_job(server, "s2", AUTH)["status"] == SUCCEEDED
    assert [j["submission_id"] for j in proxied(server, "GET", "/api/jobs/", headers=AUTH)[1]] == ["s2"]
    assert not marker.exists()


def test_every_submission_of_a_rayjob_runs_in_the_rayjobs_work_directory(serve: Any, tmp_path: Path) -> None:
    """A KubeRay retry has a new submission id; it must find what the first run left (its checkpoints)."""
    heads, _, server = serve(run_objects())
    feed(heads, head_pod())
    work = settings_mod.work_dir(NS, "rj", tmp_path)
    for submission_id in ("rj-attempt-1", "rj-attempt-2"):
        body = {"submission_id": submission_id, "entrypoint": ENTRYPOINT}
        assert proxied(server, "POST", "/api/jobs/", body, headers=AUTH)[0] == 200
        assert wait_job(server, submission_id, AUTH)["status"] == SUCCEEDED
    first, second = (
        next(settings_mod.logs_dir(tmp_path).glob(f"*{s}.log")).read_text() for s in ("rj-attempt-1", "rj-attempt-2")
    )
    assert f"cwd {work} home {work} script {work / 'app' / 'train.py'}" in first, first
    assert "found -" in first and "found 1" in second, second


def test_a_running_payload_is_recorded_with_a_temporary_folder_of_its_own_until_it_ends(
    serve: Any, tmp_path: Path
) -> None:
    """A container's /tmp is its own: a payload's TMPDIR (where Ray keeps its session) is a new folder, named in its
    record while it runs; the record and the folder go when it ends."""
    release = tmp_path / "release"
    wait_for = [{"name": "WAIT_FOR", "value": str(release)}]
    train = "import os, pathlib\npathlib.Path(os.environ['TMPDIR'], 'ray').mkdir()\n" + TRAIN
    heads, _, server = serve(run_objects(env=wait_for, train=train))
    feed(heads, head_pod(env=wait_for))
    body = {"submission_id": "s1", "entrypoint": ENTRYPOINT}
    assert proxied(server, "POST", "/api/jobs/", body, headers=AUTH)[0] == 200
    job = next(iter(heads.tables.values())).get("s1")
    assert job is not None and job.process is not None
    pid = job.process.pid
    record = settings_mod.payloads_dir(tmp_path) / f"{pid}.pid"
    pid_text, started, folder = record.read_text().split()
    assert (pid_text, started) == (str(pid), start_time(pid))
    tmp = Path(folder)
    assert tmp.name.startswith(payloads.TMP_PREFIX) and tmp.parent == Path(tempfile.gettempdir()), folder
    deadline = time.monotonic() + 10
    while not (tmp / "ray").is_dir() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (tmp / "ray").is_dir(), "the payload's TMPDIR is not the recorded folder"
    release.touch()
    assert wait_job(server, "s1", AUTH)["status"] == SUCCEEDED
    deadline = time.monotonic() + 5
    while (record.exists() or tmp.exists()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not record.exists() and not tmp.exists()


@pytest.mark.parametrize("secret", [None, {"data": {}}, {"data": {"auth_token": ""}}])
def test_a_token_cluster_without_its_token_answers_503(serve: Any, secret: Obj | None) -> None:
    objects = run_objects()
    objects.pop(SECRET)
    if secret is not None:
        objects[SECRET] = secret
    heads, _, server = serve(objects)
    feed(heads, head_pod())
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
    heads, _, server = serve(run_objects())
    feed(heads, head_pod())
    for header in ("Bearer ", "Bearer", "", "bearer " + TOKEN, "Bearer wrong"):
        assert proxied(server, "GET", "/api/jobs/", headers={"x-ray-authorization": header})[0] == 401, header
    assert proxied(server, "GET", "/api/jobs/", headers=AUTH)[0] == 200
    assert compared == [(b"wrong", TOKEN.encode()), (TOKEN.encode(), TOKEN.encode())]


def test_a_job_takes_its_environment_only_from_its_rayjob(serve: Any, tmp_path: Path) -> None:
    objects = run_objects()
    objects[RAYJOB]["spec"]["runtimeEnvYAML"] = "env_vars:\n  RUN: from-the-rayjob\n"
    heads, _, server = serve(objects)
    feed(heads, head_pod())
    other = {"submission_id": "s1", "entrypoint": ENTRYPOINT, "runtime_env": {"env_vars": {"PYTHONSTARTUP": "/x"}}}
    code, answer = proxied(server, "POST", "/api/jobs/", other, AUTH)
    assert code == 400 and "runtime_env.env_vars are not RayJob team-a/rj's spec.runtimeEnvYAML" in answer, answer
    own = {"submission_id": "s2", "entrypoint": ENTRYPOINT, "runtime_env": {"env_vars": {"RUN": "from-the-rayjob"}}}
    assert proxied(server, "POST", "/api/jobs/", own, AUTH)[0] == 200
    assert wait_job(server, "s2", AUTH)["status"] == SUCCEEDED
    assert heads.tables and next(iter(heads.tables.values())).get("s2").runtime_env == {  # type: ignore[union-attr]
        "env_vars": {"RUN": "from-the-rayjob"}
    }
