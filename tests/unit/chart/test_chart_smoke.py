"""job.smoke.enabled: the CPU-only smoke job that proves Kueue, KubeRay, the job's identity and a checkpoint write
before any TPU scales up (docs/first-run.md, section 10).

Rendered with a TPU profile's values, as an operator would (`-f values/tpu-v6e-4x4.yaml`): the smoke job still asks
for no accelerator, selects the CPU pool, names the queue and the account, and runs smoke.py against the release's
checkpoint directory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from planb.build import golden
from tests.support.shared.chart.helm import Helm
from tests.support.shared.chart.objects import release_objects

Render = Callable[..., list[dict[str, Any]]]
RELEASE = "job-smoke"
TPU_VALUES = ("-f", str(golden.CHART_DIR / "values" / "tpu-v6e-4x4.yaml"))
SMOKE = (
    *TPU_VALUES,
    "--set", "job.smoke.enabled=true",
    "--set", "job.training.checkpointDir=gs://planb-ckpt/checkpoints",
    "--set", "job.serviceAccountName=planb-job",
)  # fmt: skip


def _rayjob(objs: list[dict[str, Any]]) -> dict[str, Any]:
    (rayjob,) = [o for o in objs if o["kind"] == "RayJob"]
    return rayjob


def _pods(rayjob: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each PodSet's pod spec by Kueue's PodSet name (head, the worker group's name, submitter)."""
    cluster = rayjob["spec"]["rayClusterSpec"]
    pods = {
        "head": cluster["headGroupSpec"]["template"]["spec"],
        "submitter": rayjob["spec"]["submitterPodTemplate"]["spec"],
    }
    for group in cluster["workerGroupSpecs"]:
        pods[group["groupName"]] = group["template"]["spec"]
    return pods


def test_the_smoke_job_replaces_the_training_job(template: Render) -> None:
    objs = template(*SMOKE, release=RELEASE)
    rayjob = _rayjob(objs)
    assert rayjob["metadata"]["name"] == RELEASE
    assert rayjob["metadata"]["labels"]["planb.dev/smoke"] == "true"
    assert rayjob["spec"]["entrypoint"] == "python /app/smoke.py"
    (config_map,) = [o for o in release_objects(objs) if o["kind"] == "ConfigMap"]
    assert "smoke.py" in config_map["data"]
    assert "planb.dev/smoke" not in _rayjob(template(*TPU_VALUES))["metadata"]["labels"]


def test_it_requests_no_accelerator_and_selects_the_cpu_pool(template: Render) -> None:
    rayjob = _rayjob(template(*SMOKE, "--set", "nodePools.cpu=cpu-pool", release=RELEASE))
    pods = _pods(rayjob)
    assert sorted(pods) == ["cpu-smoke", "head", "submitter"]
    for name, spec in pods.items():
        assert spec["nodeSelector"] == {"cloud.google.com/gke-nodepool": "cpu-pool"}, name
        assert "tolerations" not in spec and "affinity" not in spec, name
        for container in spec["containers"]:
            for kind in ("requests", "limits"):
                assert set(container["resources"][kind]) == {"cpu", "memory"}, (name, kind)
            assert all(
                not env["name"].startswith(("PLANB_TOPOLOGY", "PLANB_ACCELERATOR")) for env in container.get("env", [])
            )
    (group,) = rayjob["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    assert (group["replicas"], group["minReplicas"], group["maxReplicas"]) == (1, 1, 1)
    assert "numOfHosts" not in group
    assert pods["cpu-smoke"]["containers"][0]["resources"]["requests"] == {"cpu": "1", "memory": "2Gi"}
    # The head offers Ray no CPU, so the write runs on the worker: a PASS proves the worker joined.
    assert rayjob["spec"]["rayClusterSpec"]["headGroupSpec"]["rayStartParams"] == {"num-cpus": "0"}
    assert "provreq.kueue.x-k8s.io/maxRunDurationSeconds" not in rayjob["metadata"].get("annotations", {})


def test_its_default_pod_sets_fit_the_cpu_flavor_s_default_quota(template: Render) -> None:
    """Head, worker and submitter together within queues.quotas.defaultCpu (10 cpu, 20Gi): Kueue admits it there."""
    units = {"": 1.0, "m": 1e-3, "Mi": 2.0**20, "Gi": 2.0**30}

    def amount(quantity: str) -> float:
        number = quantity.rstrip("mMiG")
        return float(number) * units[quantity[len(number) :]]

    pods = _pods(_rayjob(template(*SMOKE, release=RELEASE)))
    requests = [c["resources"]["requests"] for spec in pods.values() for c in spec["containers"]]
    (queues,) = [o for o in template("--set", "mode=queues") if o["kind"] == "ClusterQueue"]
    cpu_flavor = queues["spec"]["resourceGroups"][0]["flavors"][0]
    assert cpu_flavor["name"] == "default-cpu"
    quota = {r["name"]: str(r["nominalQuota"]) for r in cpu_flavor["resources"]}
    assert sum(amount(str(r["cpu"])) for r in requests) <= amount(quota["cpu"])
    assert sum(amount(str(r["memory"])) for r in requests) <= amount(quota["memory"])


def test_it_names_the_queue_and_the_account(template: Render) -> None:
    rayjob = _rayjob(template(*SMOKE, "--set", "job.queueName=team-queue", release=RELEASE))
    assert rayjob["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-queue"
    assert {name: spec["serviceAccountName"] for name, spec in _pods(rayjob).items()} == dict.fromkeys(
        ("head", "cpu-smoke", "submitter"), "planb-job"
    )


def test_it_writes_under_the_release_s_checkpoint_directory(template: Render) -> None:
    rayjob = _rayjob(template(*SMOKE, "--set", "job.smoke.timeoutSeconds=120", release=RELEASE))
    (head,) = _pods(rayjob)["head"]["containers"]
    env = {e["name"]: e["value"] for e in head["env"]}
    assert env == {
        "PLANB_CHECKPOINT_DIR": f"gs://planb-ckpt/checkpoints/default/{RELEASE}",
        "PLANB_RUN_ID": f"default/{RELEASE}",
        "PLANB_SMOKE_TIMEOUT": "120",
    }
    assert head["volumeMounts"] == [{"mountPath": "/app", "name": "train-script"}]
    # The training job's image and packages: the smoke job proves they install on the cluster.
    assert "gcsfs==" in rayjob["spec"]["runtimeEnvYAML"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--set", "job.training.checkpointDir="), "job.smoke.enabled=true needs job.training.checkpointDir"),
        (("--set", "job.ladderMode=concurrent"), "a concurrent ClusterQueue has no CPU flavor"),
        (("--set", "job.smoke.worker.resources.gpu=1"), "additional properties 'gpu' not allowed"),
        (("--set", "job.smoke.timeoutSeconds=0"), "timeoutSeconds"),
    ],
    ids=["no-checkpoint-dir", "concurrent", "accelerator", "timeout"],
)
def test_values_it_cannot_run_with_are_refused(helm: Helm, args: tuple[str, ...], message: str) -> None:
    done = helm("template", RELEASE, str(golden.CHART_DIR), *SMOKE, *args)
    assert done.returncode != 0 and message in done.stderr, done.stderr


def test_notes_say_what_it_proves_and_where_to_read_the_verdict(notes: Callable[..., str]) -> None:
    text = notes(*SMOKE)
    assert "Kueue admits it on the CPU flavor (default-cpu): no TPU scales up" in text
    assert "gs://planb-ckpt/checkpoints/default/job-1" in text and "planb smoke: PASS" in text
    assert "ServiceAccount planb-job" in text and "Kueue gives it plan A" not in text
