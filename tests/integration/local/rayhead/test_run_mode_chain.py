"""`run` payloads through the stand-in run only for the chain KubeRay made, RayJob → its RayCluster → that cluster's
head pod (planb.local.rayhead.chain): a decoy pod, a forged controller reference, a pod the status names with another
template, a RayCluster that claims the RayJob, each runs nothing of its own. The cluster is
tests/support/shared/rayhead_cluster.py's fake API server, the stand-in tests/support/integration/rayhead_run.py's."""

from __future__ import annotations

import base64
import copy
import re
import time
from pathlib import Path
from typing import Any

import pytest

from planb.kube import Obj
from planb.local.rayhead import settings as settings_mod
from planb.local.rayhead.chain import ChainRefusedError
from planb.local.rayhead.jobs import SUCCEEDED
from planb.local.rayhead.launch import LaunchRefusedError
from planb.local.rayhead.server import RayHeadServer
from tests.support.integration.rayhead_run import (
    AUTH,
    ENTRYPOINT,
    RAYCLUSTER,
    TRAIN,
    head_pod,
    run_objects,
    wait_job,
)
from tests.support.shared.rayhead_cluster import (
    NS,
    controller,
    feed,
    proxied,
)


def _evil_train(marker: Path) -> str:
    return f"import pathlib\npathlib.Path({str(marker)!r}).write_text('owned')\n"


def test_a_decoy_pod_with_the_heads_labels_runs_nothing_of_its_own(serve: Any, tmp_path: Path) -> None:
    """A pod anyone may create, with the head service's labels and a ConfigMap of its own: refused, naming the
    mismatch, before a file of it is written or run."""
    marker = tmp_path / "owned"
    objects = run_objects()
    objects[f"/api/v1/namespaces/{NS}/configmaps/evil-app"] = {"data": {"train.py": _evil_train(marker)}}
    decoy = head_pod()
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
    feed(heads, decoy, head_pod())
    assert proxied(server, "POST", "/api/jobs/", {"submission_id": "s2", "entrypoint": ENTRYPOINT}, AUTH)[0] == 200
    assert wait_job(server, "s2", AUTH)["status"] == SUCCEEDED
    time.sleep(0.3)
    assert not marker.exists(), "the decoy's ConfigMap ran on the host"


def test_a_decoy_pod_owned_by_the_clusters_uid_is_not_the_head_its_status_names(serve: Any, tmp_path: Path) -> None:
    """A decoy with the head's labels whose controller ownerReference carries the RayCluster's
    real name and uid (anyone who may create pods may write one) is still not the head: KubeRay's status subresource
    names the head pod, and only the pod of that name is taken, whichever the informer lists first."""
    marker = tmp_path / "owned"
    objects = run_objects()
    objects[f"/api/v1/namespaces/{NS}/configmaps/evil-app"] = {"data": {"train.py": _evil_train(marker)}}
    decoy = head_pod()
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
    feed(heads, decoy, head_pod())  # beside the real head, listed first: the real head answers
    assert proxied(server, "POST", "/api/jobs/", {"submission_id": "s2", "entrypoint": ENTRYPOINT}, AUTH)[0] == 200
    assert wait_job(server, "s2", AUTH)["status"] == SUCCEEDED
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
    objects = run_objects(train=train, env=[{"name": "FROM", "value": "the-spec"}])
    objects[RAYCLUSTER]["status"]["head"]["podName"] = "decoy"
    objects[f"/api/v1/namespaces/{NS}/configmaps/evil-app"] = {"data": {"train.py": _evil_train(marker)}}
    decoy = head_pod(env=[{"name": "FROM", "value": "the-decoy"}, {"name": "PYTHONSTARTUP", "value": "/x.py"}])
    decoy["metadata"].update(name="decoy", uid="decoy-1")  # the head's labels, RayCluster rc uid rc-uid as controller
    decoy["spec"]["volumes"] = [{"name": "app", "configMap": {"name": "evil-app"}}]
    heads, _, server = serve(objects)
    feed(heads, decoy)
    assert heads.head_pod(NS, "rc-head-svc") is decoy  # what KubeRay's status names passes as the head
    assert proxied(server, "POST", "/api/jobs/", {"submission_id": "s1", "entrypoint": ENTRYPOINT}, AUTH)[0] == 200
    job = wait_job(server, "s1", AUTH)
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
    objects = run_objects()
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
    head = head_pod()
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
