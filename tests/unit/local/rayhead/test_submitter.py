"""The submitter pods' path (planb.local.rayhead.submitter) against a fake API server: which head a RayJob's
submitter pod may submit to (no sockets, no processes: a submission is recorded, never run)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, cast

import pytest

from planb.kube import Kube, Obj
from planb.local.rayhead import settings as settings_mod
from planb.local.rayhead.chain import Maker
from planb.local.rayhead.heads import RayHeads
from planb.local.rayhead.submitter import Submitters
from tests.support.shared.rayhead_cluster import HEAD, HEAD_HOST, NS, OBJECTS, SUBMITTER, FakeKube, controller

OTHER = "team-b"


def _submitters(objects: dict[str, Obj], tmp_path: Path) -> tuple[Submitters, list[tuple[Any, ...]]]:
    """The submitters on `objects`, the head and the submitter pods listed; team-a/rj's payload set to run. Every
    submission is recorded instead of made."""
    settings_mod.set_payload(f"{NS}/rj", settings_mod.Payload(mode="run"), tmp_path)
    heads = RayHeads(cast(Kube, FakeKube(objects)), state_dir=tmp_path)
    submitters = Submitters(heads)
    submitted: list[tuple[Any, ...]] = []

    def submit(*args: Any) -> Any:
        submitted.append(args)
        raise AssertionError(f"submitted {args}")

    heads.submit = submit  # type: ignore[method-assign,assignment]
    heads.pods.items = {f"{NS}/rc-head": HEAD}
    return submitters, submitted


def _other_namespace(objects: dict[str, Obj]) -> Obj:
    """team-b's own chain (RayJob rj, its submitter Job and pod, its RayCluster rc, all as KubeRay makes them),
    its RayJob's status.dashboardURL naming team-a's head; team-b's submitter pod is returned."""
    rayjob_uid = "rj-b-uid"
    objects[f"/apis/batch/v1/namespaces/{OTHER}/jobs/rj"] = {
        "metadata": {"name": "rj", "uid": "job-b-uid", "ownerReferences": [controller("RayJob", "rj", rayjob_uid)]}
    }
    objects[f"/apis/ray.io/v1/namespaces/{OTHER}/rayjobs/rj"] = {
        "metadata": {"name": "rj", "namespace": OTHER, "uid": rayjob_uid},
        "spec": {"entrypoint": "python /app/not-team-as.py"},
        "status": {"dashboardURL": HEAD_HOST, "jobId": "b-sub-id", "rayClusterName": "rc"},
    }
    objects[f"/apis/ray.io/v1/namespaces/{OTHER}/rayclusters/rc"] = {
        "metadata": {"name": "rc", "uid": "rc-b-uid", "ownerReferences": [controller("RayJob", "rj", rayjob_uid)]}
    }
    submitter = copy.deepcopy(SUBMITTER)
    submitter["metadata"].update(namespace=OTHER, uid="sub-b")
    submitter["metadata"]["ownerReferences"] = [controller("Job", "rj", "job-b-uid")]
    return submitter


def test_a_rayjob_whose_dashboard_url_names_another_namespaces_head_runs_nothing(tmp_path: Path) -> None:
    """team-b's RayJob rj names team-a's head in its status.dashboardURL. Its own RayCluster of
    the head's name was made by it, so the maker check in team-b passes; without comparing namespaces its
    entrypoint ran under team-a/rj's `run` setting, with team-a's head template. It is refused, naming why."""
    objects = copy.deepcopy(OBJECTS)
    submitter = _other_namespace(objects)
    submitters, submitted = _submitters(objects, tmp_path)
    code, why = submitters._follow(submitter)
    assert (code, submitted) == (1, [])
    assert f"status.dashboardURL {HEAD_HOST} names a head in namespace {NS}, not {OTHER}" in why
    assert submitters.heads.tables == {}
    assert not settings_mod.work_dir(NS, "rj", tmp_path).exists()
    # team-a's own submitter pod still reaches its submission.
    with pytest.raises(AssertionError, match="submitted"):
        submitters._follow(SUBMITTER)
    assert [args[1:4] for args in submitted] == [("rj", "rj-sub-id", "python train.py")]


def test_a_rayjob_that_is_not_the_heads_maker_by_uid_runs_nothing(tmp_path: Path) -> None:
    """The head's maker must be this RayJob by uid, not by name only: a RayJob of the same name made again between
    the reads (a new uid) is not the one whose submitter pod this is."""
    submitters, submitted = _submitters(copy.deepcopy(OBJECTS), tmp_path)
    again: Obj = {"metadata": {"name": "rj", "namespace": NS, "uid": "rj-uid-2"}}
    submitters.heads.maker = lambda namespace, cluster: Maker(again)  # type: ignore[method-assign]
    code, why = submitters._follow(SUBMITTER)
    assert (code, submitted) == (1, [])
    assert "is not RayJob rj's (uid rj-uid): it belongs to RayJob rj uid rj-uid-2" in why


@pytest.mark.parametrize("which", ["job", "rayjob"])
def test_owner_names_with_a_path_are_never_followed(tmp_path: Path, which: str) -> None:
    """The API server does not check ownerReference names, and `jobs/<name>` and
    `rayjobs/<name>` were read with them as they were, so '../../team-b/...' reached another namespace's objects.
    Such a pod or Job has no RayJob, and nothing is read by that name."""
    objects = copy.deepcopy(OBJECTS)
    evil = f"../../{OTHER}/{'jobs' if which == 'job' else 'rayjobs'}/rj"
    pod = copy.deepcopy(SUBMITTER)
    if which == "job":
        pod["metadata"]["ownerReferences"] = [controller("Job", evil, "job-uid")]
    else:
        job = objects[f"/apis/batch/v1/namespaces/{NS}/jobs/rj"]
        job["metadata"]["ownerReferences"] = [controller("RayJob", evil, "rj-uid")]
    objects[f"/apis/batch/v1/namespaces/{OTHER}/jobs/rj"] = objects[f"/apis/batch/v1/namespaces/{NS}/jobs/rj"]
    objects[f"/apis/ray.io/v1/namespaces/{OTHER}/rayjobs/rj"] = objects[f"/apis/ray.io/v1/namespaces/{NS}/rayjobs/rj"]
    submitters, _ = _submitters(objects, tmp_path)
    read: list[str] = []
    original = submitters.heads.kube.get

    def get(path: str) -> Obj | None:
        read.append(path)
        return original(path)

    submitters.heads.kube.get = get  # type: ignore[method-assign]
    assert submitters.rayjob_of_submitter(pod) is None
    assert not any(OTHER in p or ".." in p for p in read), read
