"""The Ray head stand-in serving `run` payloads over tests/support/shared/rayhead_cluster.py's fake API server: the
RayJob, its RayCluster and token Secret, the chart's payload (a ConfigMap mounted at /app), the head pod KubeRay makes,
and the ``serve`` fixture that starts the stand-in on them (tests/integration/local/rayhead's conftest brings it in).
"""

from __future__ import annotations

import base64
import copy
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from planb.kube import Kube, Obj
from planb.local.rayhead import settings as settings_mod
from planb.local.rayhead.heads import RayHeads
from planb.local.rayhead.jobs import FAILED, SUCCEEDED
from planb.local.rayhead.server import RayHeadServer
from planb.local.rayhead.submitter import Submitters
from tests.support.shared.rayhead_cluster import NS, OBJECTS, FakeKube, controller, head_template, proxied

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


def head_pod(env: list[Obj] | None = None) -> Obj:
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


def run_objects(
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


def wait_job(server: RayHeadServer, submission_id: str, headers: dict[str, str] | None = None) -> Obj:
    deadline = time.monotonic() + 30
    while True:
        code, job = proxied(server, "GET", f"/api/jobs/{submission_id}", headers=headers)
        assert code == 200, job
        if job["status"] in (SUCCEEDED, FAILED) or time.monotonic() > deadline:
            return cast(Obj, job)
        time.sleep(0.05)
