"""Each job release checkpoints into a directory of its own, and tells train.py whose run it is.

`helm template` for real: `job.training.checkpointDir` is a root, and the chart gives the RayJob's
containers <root>/<namespace>/<release name> as PLANB_CHECKPOINT_DIR, the run's identity as
PLANB_RUN_ID and `job.training.resume` as PLANB_RESUME. Relative roots are refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from planb.build import golden
from tests.support.shared.chart.helm import Helm

Render = Callable[..., list[dict[str, Any]]]
ROOT = "gs://planb-ckpt/runs"


def envs(objs: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The environment of the head and of every worker group's container."""
    (job,) = [o for o in objs if o["kind"] == "RayJob"]
    cluster = job["spec"]["rayClusterSpec"]
    pods = [cluster["headGroupSpec"]["template"]] + [g["template"] for g in cluster["workerGroupSpecs"]]
    return [{e["name"]: e["value"] for e in pod["spec"]["containers"][0]["env"]} for pod in pods]


def train_env(objs: list[dict[str, Any]]) -> dict[str, str]:
    head, *workers = envs(objs)
    assert all(w == head for w in workers), "head and workers must read the same run"
    return head


def test_two_releases_with_the_same_values_checkpoint_apart(template: Render) -> None:
    args = ("--set", f"job.training.checkpointDir={ROOT}")
    one = train_env(template(*args, release="job-1"))
    two = train_env(template(*args, release="job-2"))
    elsewhere = train_env(template(*args, "--namespace", "team-a", release="job-1"))
    assert one["PLANB_CHECKPOINT_DIR"] == f"{ROOT}/default/job-1"
    assert two["PLANB_CHECKPOINT_DIR"] == f"{ROOT}/default/job-2"
    assert elsewhere["PLANB_CHECKPOINT_DIR"] == f"{ROOT}/team-a/job-1"
    assert (one["PLANB_RUN_ID"], two["PLANB_RUN_ID"], elsewhere["PLANB_RUN_ID"]) == (
        "default/job-1",
        "default/job-2",
        "team-a/job-1",
    )


def test_a_trailing_slash_and_a_local_root(template: Render) -> None:
    env = train_env(template("--set", f"job.training.checkpointDir={ROOT}/"))
    assert env["PLANB_CHECKPOINT_DIR"] == f"{ROOT}/default/job-1"
    env = train_env(template("--set", "job.training.checkpointDir=/mnt/ckpt"))
    assert env["PLANB_CHECKPOINT_DIR"] == "/mnt/ckpt/default/job-1"


def test_no_root_no_checkpoints_and_resume_is_passed(template: Render) -> None:
    env = train_env(template())
    assert (env["PLANB_CHECKPOINT_DIR"], env["PLANB_RESUME"]) == ("", "auto")
    env = train_env(template("--set", "job.training.resume=force"))
    assert env["PLANB_RESUME"] == "force"


@pytest.mark.parametrize(
    ("args", "where"),
    [
        (("--set", "job.training.checkpointDir=checkpoints/run"), "/job/training/checkpointDir"),
        (("--set", "job.training.checkpointDir=./ckpt"), "/job/training/checkpointDir"),
        (("--set", "job.training.checkpointDir=s3://bucket/x"), "/job/training/checkpointDir"),
        (("--set", "job.training.resume=sometimes"), "/job/training/resume"),
    ],
    ids=["relative", "dot-relative", "not gs", "unknown resume mode"],
)
def test_refused(helm: Helm, args: tuple[str, ...], where: str) -> None:
    done = helm("template", "job-1", str(golden.CHART_DIR), *args)
    assert done.returncode != 0, done.stdout[:2000]
    assert where in done.stderr, done.stderr


def test_notes_name_the_release_s_checkpoints(notes: Callable[..., str]) -> None:
    text = notes("--set", f"job.training.checkpointDir={ROOT}")
    assert f"Checkpoints of this release: {ROOT}/default/job-1 (job.training.resume=auto)." in text
    assert "Checkpoints of this release" not in notes()
