"""The job chart's training defaults against the catalog: each profile's transformer fits its accelerator's memory
with margin and is a size measured on the chip; the workers' grace period covers a save on notice of its state at
the measured rate, and their preStop hook hands train.py the notice it polls."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from planb.build import golden
from planb.catalog import training, values

Render = Callable[..., list[dict[str, Any]]]
BENCH = Path(__file__).resolve().parents[3] / "docs" / "tpu-v5e-bench-2026-12-04.jsonl"


def worker_pod(objs: list[dict[str, Any]]) -> dict[str, Any]:
    (job,) = [o for o in objs if o["kind"] == "RayJob"]
    (group,) = job["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    return dict(group["template"]["spec"])


def bench_lines() -> dict[str, dict[str, Any]]:
    return {line["measure"]: line for line in map(json.loads, BENCH.read_text().splitlines())}


@pytest.mark.parametrize("profile", values.SHIPPED)
def test_each_profile_s_transformer_is_measured_and_fits_a_quarter_of_its_memory(profile: str) -> None:
    size = training.default_transformer(profile)
    assert size in training.MEASURED_ON_V5E  # trained on a 16 GiB chip (BENCHMARKS.md)
    assert training.hbm_gib(profile) >= 16
    assert size.state_bytes <= training.MAX_STATE_SHARE * training.hbm_gib(profile) * 2**30
    shipped = yaml.safe_load((golden.CHART_DIR / "values" / f"{profile}.yaml").read_text())
    assert shipped["job"]["training"]["transformer"] == size.values()


def test_the_catalog_s_sizes_and_figures_are_the_chip_s() -> None:
    """State sizes as train.py reported them on the chip, and the MFU and save rate the catalog quotes."""
    lines = bench_lines()
    for size, measured in training.MEASURED_ON_V5E.items():
        line = lines[measured.measure]
        assert line["ok"] and line["state_bytes"] == size.state_bytes
        assert line["mfu"] == pytest.approx(measured.mfu, abs=5e-4)
        assert line["env"]["PLANB_REMAT"] == size.remat and int(line["env"]["PLANB_D_MODEL"]) == size.d_model
    save = lines["save"]
    assert pytest.approx(save["state_bytes"] / max(save["committed_s"]), 1e-3) == training.MEASURED_SAVE_BYTES_PER_S


@pytest.mark.parametrize("profile", values.SHIPPED)
def test_workers_get_the_grace_period_a_save_of_their_state_needs(template: Render, profile: str) -> None:
    grace = training.grace_period_seconds(profile)
    write_s = training.default_transformer(profile).state_bytes / training.MEASURED_SAVE_BYTES_PER_S
    assert grace >= training.GRACE_FIXED_S + training.GRACE_WRITE_FACTOR * write_s > 30  # above Kubernetes' 30 s
    shipped = ("-f", str(golden.CHART_DIR / "values" / f"{profile}.yaml"))
    assert worker_pod(template(*shipped))["terminationGracePeriodSeconds"] == 30  # the linear model: no state
    pod = worker_pod(template(*shipped, "--set", "job.training.model=transformer"))
    assert pod["terminationGracePeriodSeconds"] == grace
    (container,) = pod["containers"]
    env = {e["name"]: e["value"] for e in container["env"]}
    size = training.default_transformer(profile)
    assert (env["PLANB_D_MODEL"], env["PLANB_SEQ_LEN"], env["PLANB_REMAT"]) == (
        str(size.d_model),
        str(size.seq_len),
        size.remat,
    )
    hook = " ".join(container["lifecycle"]["preStop"]["exec"]["command"])
    assert env["PLANB_NOTICE_FILE"].startswith("/")
    assert 'touch "$PLANB_NOTICE_FILE"' in hook and '"$PLANB_NOTICE_FILE.saved"' in hook
    (limit,) = re.findall(r"-lt (\d+)", hook)
    assert int(limit) < grace  # the hook gives up before the kubelet's SIGKILL


@pytest.mark.parametrize("d_model,layers,seq", [(1024, 12, 1024), (1792, 10, 2048), (4096, 32, 2048)])
def test_the_workers_grace_period_follows_the_model_the_job_trains(
    template: Render, d_model: int, layers: int, seq: int
) -> None:
    """Not the profile's default model's: the chart computes the catalog's policy from job.training.transformer."""
    size = training.TransformerSize(d_model, layers, 16, seq, 8)
    model = (
        "--set", "job.training.model=transformer",
        "--set", f"job.training.transformer.dModel={d_model}",
        "--set", f"job.training.transformer.numLayers={layers}",
        "--set", f"job.training.transformer.seqLen={seq}",
    )  # fmt: skip
    pod = worker_pod(template(*model))
    assert pod["terminationGracePeriodSeconds"] == training.grace_period_for(size) > 30
    (limit,) = re.findall(r"-lt (\d+)", " ".join(pod["containers"][0]["lifecycle"]["preStop"]["exec"]["command"]))
    assert int(limit) == training.grace_period_for(size) - 5
    chosen = worker_pod(template(*model, "--set", "job.workers.terminationGracePeriodSeconds=600"))
    assert chosen["terminationGracePeriodSeconds"] == 600  # a value set wins


def test_the_mesh_and_the_scan_reach_train_py(template: Render) -> None:
    def env(*args: str) -> dict[str, str]:
        (container,) = worker_pod(template(*args))["containers"]
        return {e["name"]: e["value"] for e in container["env"]}

    assert (env()["PLANB_MESH"], env()["PLANB_SCAN_LAYERS"]) == ("", "0")  # the default mesh, unrolled blocks
    chosen = env(
        "--set", "job.training.transformer.mesh=data=2\\,fsdp=-1", "--set", "job.training.transformer.scanLayers=true"
    )
    assert (chosen["PLANB_MESH"], chosen["PLANB_SCAN_LAYERS"]) == ("data=2,fsdp=-1", "1")


def test_the_compilation_cache_is_the_release_s_own_beside_the_checkpoints_unless_set(template: Render) -> None:
    """A cache entry is a compiled program the job runs: by default no two releases, in one namespace or in two,
    share a cache folder, and none is a checkpoint directory (<checkpointDir>/<namespace>/<release>)."""

    def env(*args: str, release: str = "job-1") -> dict[str, str]:
        (container,) = worker_pod(template(*args, release=release))["containers"]
        return {e["name"]: e["value"] for e in container["env"]}

    assert env()["PLANB_COMPILATION_CACHE_DIR"] == ""
    root = ("--set", "job.training.checkpointDir=gs://planb-ckpt/runs/")
    caches = {
        env(*root, "--namespace", namespace, release=release)["PLANB_COMPILATION_CACHE_DIR"]
        for namespace in ("team-a", "team-b", "jax-cache")
        for release in ("job-1", "job-2")
    }
    assert len(caches) == 6
    assert "gs://planb-ckpt/runs/jax_cache/team-a/job-1" in caches
    checkpoints = env(*root, "--namespace", "team-a")["PLANB_CHECKPOINT_DIR"]
    assert checkpoints == "gs://planb-ckpt/runs/team-a/job-1" and not any(c.startswith(checkpoints) for c in caches)
    own = ("--set", "job.training.compilationCacheDir=/cache")
    assert env(*root, *own)["PLANB_COMPILATION_CACHE_DIR"] == "/cache"


def test_the_stop_notice_file_is_in_each_pod_s_own_empty_dir(template: Render) -> None:
    """Head and workers keep PLANB_NOTICE_FILE in an emptyDir of the pod's own, not in a folder other jobs share."""
    (job,) = [o for o in template() if o["kind"] == "RayJob"]
    head = job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
    for pod in (head, worker_pod([job])):
        (container,) = pod["containers"]
        notice = {e["name"]: e["value"] for e in container["env"]}["PLANB_NOTICE_FILE"]
        volumes = {v["name"]: v for v in pod["volumes"]}
        (mount,) = [m for m in container["volumeMounts"] if notice.startswith(m["mountPath"].rstrip("/") + "/")]
        assert "emptyDir" in volumes[mount["name"]], (mount, volumes)
        assert not notice.startswith("/tmp/")


def test_the_head_s_grace_period_is_a_value_kubernetes_default_unless_set(template: Render) -> None:
    """The regions keeper waits for the longest grace period of a job's pods, head included
    (planb.regions.keeper.grace)."""

    def head_pod(*args: str) -> dict[str, Any]:
        (job,) = [o for o in template(*args) if o["kind"] == "RayJob"]
        return dict(job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"])

    assert head_pod()["terminationGracePeriodSeconds"] == 30
    assert head_pod("--set", "job.head.terminationGracePeriodSeconds=5")["terminationGracePeriodSeconds"] == 5
