"""job.command: a team's own program, its code inside job.image, instead of planb's training script (docs/your-code.md).

The RayJob's entrypoint is the command, each item quoted for the shell Ray's job manager runs it with; nothing of the
training-files ConfigMap is rendered or mounted, nor the `helm test` pod that checks it; everything else a job gets
(the stop-notice volume and hook, the training environment) stays.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from typing import Any

import pytest

from planb.build import golden

Render = Callable[..., list[dict[str, Any]]]
PROFILE = ["-f", str(golden.CHART_DIR / "values" / "tpu-v6e-4x4.yaml")]
COMMAND = ["python", "-m", "team.train", "--note", "it's a $HOME test", "--steps=100"]


def by_kind(objs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objs if o["kind"] == kind]


def pods(job: dict[str, Any]) -> list[dict[str, Any]]:
    cluster = job["spec"]["rayClusterSpec"]
    return [cluster["headGroupSpec"]["template"]["spec"], *(g["template"]["spec"] for g in cluster["workerGroupSpecs"])]


def own(template: Render, *args: str) -> list[dict[str, Any]]:
    return template(*PROFILE, "--set-json", f"job.command={json.dumps(COMMAND)}", *args)


def test_the_command_is_the_entrypoint_each_item_quoted_for_the_shell(template: Render) -> None:
    (job,) = by_kind(own(template), "RayJob")
    entrypoint = job["spec"]["entrypoint"]
    # The shell Ray runs it with gets back the items exactly, the quote and the $ included.
    assert shlex.split(entrypoint) == COMMAND, entrypoint
    assert entrypoint.startswith("python -m team.train "), entrypoint


def test_no_configmap_script_is_rendered_or_mounted(template: Render) -> None:
    objs = own(template)
    assert not by_kind(objs, "ConfigMap"), [o["metadata"]["name"] for o in by_kind(objs, "ConfigMap")]
    # No `helm test` pod checks a script that is not there.
    assert not by_kind(objs, "Pod")
    (job,) = by_kind(objs, "RayJob")
    for spec in pods(job):
        assert [v["name"] for v in spec["volumes"]] == ["stop-notice"]
        (container,) = spec["containers"]
        assert [m["mountPath"] for m in container["volumeMounts"]] == ["/var/run/planb-notice"]
        env = {e["name"]: e.get("value") for e in container["env"]}
        assert env["PLANB_NOTICE_FILE"] == "/var/run/planb-notice/stop"
        assert "PLANB_CHECKPOINT_DIR" in env


def test_the_workers_keep_the_stop_notice_hook(template: Render) -> None:
    (job,) = by_kind(own(template), "RayJob")
    (group,) = job["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    (worker,) = group["template"]["spec"]["containers"]
    assert "$PLANB_NOTICE_FILE" in " ".join(worker["lifecycle"]["preStop"]["exec"]["command"])


def test_a_baked_image_with_the_command_needs_no_runtime_environment(template: Render) -> None:
    (job,) = by_kind(own(template, "--set", "job.image=registry.example/team/train:1", "--set-json", "job.pip=[]"),
                     "RayJob")  # fmt: skip
    assert "runtimeEnvYAML" not in job["spec"]
    assert {c["image"] for spec in pods(job) for c in spec["containers"]} == {"registry.example/team/train:1"}


@pytest.mark.parametrize("args", [[], ["--set", "job.smoke.enabled=true", "--set", "job.training.checkpointDir=/c"]])
def test_without_the_command_or_for_the_smoke_job_the_script_configmap_stays(template: Render, args: list[str]) -> None:
    extra = args and ["--set-json", f"job.command={json.dumps(COMMAND)}"]
    objs = template(*PROFILE, *args, *extra)
    names = [o["metadata"]["name"] for o in by_kind(objs, "ConfigMap")]
    assert any(n.endswith("-train-script") for n in names), names
    (job,) = by_kind(objs, "RayJob")
    assert job["spec"]["entrypoint"] == ("python /app/smoke.py" if args else "python /app/train.py")
    head = job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
    assert "train-script" in [v["name"] for v in head["volumes"]]
