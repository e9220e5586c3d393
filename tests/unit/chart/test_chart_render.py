"""What the chart renders: lint, goldens, the script, both modes, and values derived from the catalog."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from planb import paths
from planb.build import chart_files, golden
from planb.catalog import chart_values, values
from tests.support.shared.chart.helm import Helm
from tests.support.shared.chart.objects import release_objects

Render = Callable[..., list[dict[str, Any]]]
CHART = golden.CHART_DIR
FIX = "run `make golden` and review the diff"
KUEUE_KINDS = ["AdmissionCheck", "ClusterQueue", "LocalQueue", "ProvisioningRequestConfig", "ResourceFlavor"]
#: Besides the queues, queues mode makes the ServiceAccount the LocalQueue namespace's jobs share.
QUEUES_KINDS = sorted([*KUEUE_KINDS, "ServiceAccount"])


def by_kind(objs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objs if o["kind"] == kind]


@pytest.mark.parametrize("mode", ["job", "queues"])
def test_helm_lint_passes(helm: Helm, mode: str) -> None:
    done = helm("lint", str(CHART), "--set", f"mode={mode}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 chart(s) linted, 0 chart(s) failed" in done.stdout


@pytest.mark.parametrize("profile", values.SHIPPED)
def test_helm_lint_passes_for_each_profile(helm: Helm, profile: str) -> None:
    done = helm("lint", str(CHART), "-f", str(CHART / "values" / f"{profile}.yaml"))
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("name", sorted(golden.chart_cases()))
def test_template_matches_golden(helm_bin: str, name: str) -> None:
    path = golden.GOLDEN_DIR / name
    assert path.exists(), f"{path} is missing: {FIX}"
    assert golden.render_chart(golden.chart_cases()[name]) == path.read_text(), f"{path} is stale: {FIX}"


def test_configmap_is_train_py_byte_for_byte(template: Render) -> None:
    """The ConfigMap holds train.py, smoke.py and every module of the package planb_train (training/'s Python
    files), byte for byte, one key each (the path with "." for "/"), and nothing else."""
    (cm,) = by_kind(release_objects(template()), "ConfigMap")
    training = paths.REPO / "training"
    sources = {
        str(path.relative_to(training)): path.read_bytes()
        for path in [*training.glob("*.py"), *(training / "planb_train").rglob("*.py")]
    }
    assert {"train.py", "planb_train/__init__.py", "planb_train/loop.py"} <= set(sources)
    keys = {chart_files.train_file_key(name): name for name in sources}
    assert sorted(cm["data"]) == sorted(keys), "run `make values` and review the diff"
    for key, name in keys.items():
        assert cm["data"][key].encode() == sources[name], f"the ConfigMap's {key} is not training/{name}"


def test_every_script_lands_at_its_path_under_app(template: Render) -> None:
    """Head and workers mount each of the ConfigMap's keys at its path under /app (the volume's items), where the
    entrypoint runs /app/train.py: /app holds training/'s files as the checkout does, train.py beside the package
    planb_train/, and /app is on their PYTHONPATH, where a Ray worker imports the package. The helm test mounts the
    whole ConfigMap (no items), each key a file it parses."""
    objs = template()
    (job,) = by_kind(objs, "RayJob")
    (hook,) = by_kind(objs, "Pod")
    cluster = job["spec"]["rayClusterSpec"]
    specs = [cluster["headGroupSpec"]["template"]["spec"], hook["spec"]]
    specs += [group["template"]["spec"] for group in cluster["workerGroupSpecs"]]
    assert job["spec"]["entrypoint"] == "python /app/train.py"
    for spec in specs:
        volumes = {v["name"]: v for v in spec["volumes"]}
        (container,) = spec["containers"]
        # The helm test pod also mounts its check (files/tests/check_job.py) at /planb-test.
        (mount,) = [
            m
            for m in container["volumeMounts"]
            if "configMap" in volumes[m["name"]] and m["mountPath"] != "/planb-test"
        ]
        assert mount["mountPath"] == "/app"
        volume = volumes[mount["name"]]["configMap"]
        assert volume["name"] == "job-1-train-script"
        if spec is hook["spec"]:
            assert "items" not in volume
            continue
        items = {item["key"]: item["path"] for item in volume["items"]}
        assert items == {chart_files.train_file_key(name): name for name in chart_files.TRAIN_FILES}
        assert "planb_train/runners/ray_train.py" in items.values()
        assert {"name": "PYTHONPATH", "value": "/app"} in container["env"]


def test_job_mode_renders_only_namespaced_job_objects(template: Render) -> None:
    objs = template()
    assert sorted(o["kind"] for o in objs) == ["ConfigMap", "ConfigMap", "NetworkPolicy", "Pod", "RayJob"]
    assert all("namespace" not in o["metadata"] for o in objs)
    (hook,) = by_kind(objs, "Pod")
    assert hook["metadata"]["annotations"]["helm.sh/hook"] == "test"


def test_queues_mode_renders_the_seed_queue_objects(template: Render) -> None:
    objs = release_objects(template("--set", "mode=queues"))  # the helm test hooks: test_chart_helm_test.py
    assert sorted({o["kind"] for o in objs}) == QUEUES_KINDS
    assert {o["apiVersion"] for o in objs if o["kind"] != "ServiceAccount"} == {"kueue.x-k8s.io/v1beta2"}
    assert [o["metadata"]["name"] for o in by_kind(objs, "ResourceFlavor")] == ["default-cpu", "on-demand", "dws"]
    (cq,) = by_kind(objs, "ClusterQueue")
    (group,) = cq["spec"]["resourceGroups"]
    assert group["coveredResources"] == ["cpu", "memory", "google.com/tpu"]
    quotas = {f["name"]: {r["name"]: r["nominalQuota"] for r in f["resources"]} for f in group["flavors"]}
    assert list(quotas) == ["default-cpu", "on-demand", "dws"]
    assert quotas["default-cpu"] == {"cpu": 10, "memory": "20Gi", "google.com/tpu": 0}
    assert quotas["on-demand"] == {"cpu": 32, "memory": "64Gi", "google.com/tpu": 16}
    # Plan B is finite: the DWS pool's size, one slice by default.
    assert quotas["dws"] == {"cpu": 32, "memory": "64Gi", "google.com/tpu": 16}
    assert cq["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": "dws-prov", "onFlavors": ["dws"]}]}
    (lq,) = by_kind(objs, "LocalQueue")
    assert (lq["metadata"]["namespace"], lq["metadata"]["name"], lq["spec"]["clusterQueue"]) == (
        "default",
        "user-queue",
        "cluster-queue",
    )
    (ac,) = by_kind(objs, "AdmissionCheck")
    assert ac["spec"]["controllerName"] == "kueue.x-k8s.io/provisioning-request"
    (prc,) = by_kind(objs, "ProvisioningRequestConfig")
    assert prc["metadata"]["name"] == "dws-config"
    assert prc["spec"]["provisioningClassName"] == "queued-provisioning.gke.io"
    assert prc["spec"]["managedResources"] == ["google.com/tpu"]


def test_retry_strategy_outlasts_a_week_long_queue(template: Render) -> None:
    (prc,) = by_kind(template("--set", "mode=queues"), "ProvisioningRequestConfig")
    retry = prc["spec"]["retryStrategy"]
    waits = [
        min(retry["backoffBaseSeconds"] * 2 ** (n - 1), retry["backoffMaxSeconds"])
        for n in range(1, retry["backoffLimitCount"] + 1)
    ]
    assert sum(waits) >= 7 * 24 * 3600


def test_queues_without_dws_has_plan_a_only(template: Render) -> None:
    objs = release_objects(template("--set", "mode=queues", "--set", "dws.enabled=false"))
    assert sorted(o["kind"] for o in objs) == [
        "ClusterQueue", "LocalQueue", "ResourceFlavor", "ResourceFlavor", "ServiceAccount",
    ]  # fmt: skip
    (cq,) = by_kind(objs, "ClusterQueue")
    assert "admissionChecksStrategy" not in cq["spec"]
    assert [f["name"] for f in cq["spec"]["resourceGroups"][0]["flavors"]] == ["default-cpu", "on-demand"]


def test_a_job_image_that_carries_its_packages_needs_no_runtime_environment(template: Render) -> None:
    """A cluster without PyPI: the packages are baked into job.image and job.pip is empty (docs/job-image.md)."""
    (job,) = by_kind(template("--set", "job.image=registry.example/team/train:1", "--set-json", "job.pip=[]"), "RayJob")
    assert "runtimeEnvYAML" not in job["spec"]
    head = job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
    assert {c["image"] for c in head["containers"]} == {"registry.example/team/train:1"}


def test_rayjob_follows_the_profile(template: Render) -> None:
    (job,) = by_kind(template(), "RayJob")
    meta, spec = job["metadata"], job["spec"]
    assert meta["name"] == "job-1"
    assert meta["labels"]["kueue.x-k8s.io/queue-name"] == "user-queue"
    assert meta["annotations"] == {"provreq.kueue.x-k8s.io/maxRunDurationSeconds": "604800"}
    assert spec["shutdownAfterJobFinishes"] is True
    assert spec["entrypoint"] == "python /app/train.py"
    # train.py's imports, pinned as in training/requirements.txt, and gcsfs for gs:// checkpoints.
    assert yaml.safe_load(spec["runtimeEnvYAML"]) == {
        "pip": [
            "jax[tpu]==0.8.2",
            "pandas==2.3.3",
            "flax==0.12.2",
            "optax==0.2.6",
            "orbax-checkpoint==0.11.28",
            "gcsfs==2026.10.1",
        ]
    }
    head = spec["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
    assert head["nodeSelector"] == {"cloud.google.com/gke-nodepool": "default-pool"}
    assert "enableInTreeAutoscaling" not in spec["rayClusterSpec"]
    (group,) = spec["rayClusterSpec"]["workerGroupSpecs"]
    assert (group["replicas"], group["numOfHosts"]) == (1, 4)
    pod = group["template"]["spec"]
    assert pod["nodeSelector"] == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
        "cloud.google.com/gke-tpu-topology": "4x4",
    }
    assert {t["key"] for t in pod["tolerations"]} == {"google.com/tpu", "cloud.google.com/gke-queued"}
    (worker,) = pod["containers"]
    expected = {"cpu": "8", "memory": "16Gi", "google.com/tpu": "4"}
    assert worker["resources"] == {"requests": expected, "limits": expected}
    submitter = spec["submitterPodTemplate"]["spec"]
    assert submitter["nodeSelector"] == {"cloud.google.com/gke-nodepool": "default-pool"}


def test_training_env_on_head_and_workers(template: Render) -> None:
    (job,) = by_kind(
        template("-f", str(CHART / "values" / "tpu-v5e-2x4.yaml"), "--set", "job.workers.replicas=3"), "RayJob"
    )
    cluster = job["spec"]["rayClusterSpec"]
    head = cluster["headGroupSpec"]["template"]["spec"]["containers"][0]
    worker = cluster["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]
    expected = {
        "PLANB_MODEL": "linear",
        "PLANB_NUM_WORKERS": "3",
        "PLANB_ACCELERATOR": "tpu",
        "PLANB_CHIPS_PER_WORKER": "8",
        "PLANB_CPUS_PER_WORKER": "",
        "PLANB_TOPOLOGY": "2x4",
        "PLANB_ACCELERATOR_TYPE": "TPU-V5LITEPOD",
        "PLANB_EPOCHS": "50",
        "PLANB_CHECKPOINT_DIR": "",
        "PLANB_CHECKPOINT_EVERY": "500",
        "PLANB_CHECKPOINT_BUDGET": "0.03",  # saves at most 3% of training (training/planb_train/interval.py)
        "PLANB_RUN_ID": "default/job-1",  # the release's namespace/name: whose checkpoints they are
        "PLANB_RESUME": "auto",
        "PLANB_PEAK_TFLOPS": "197",  # the catalog's v5e peak, from the values file
        # The v5e profile's transformer (planb.catalog.training), for PLANB_MODEL=transformer.
        "PLANB_D_MODEL": "1024",
        "PLANB_NUM_LAYERS": "12",
        "PLANB_NUM_HEADS": "8",
        "PLANB_SEQ_LEN": "1024",
        "PLANB_BATCH_PER_DEVICE": "16",
        "PLANB_VOCAB_SIZE": "32768",
        "PLANB_REMAT": "none",
        "PLANB_DTYPE": "bfloat16",
        "PLANB_ATTENTION": "auto",
        "PLANB_MESH": "",  # data one per slice, fsdp every chip of it
        "PLANB_SCAN_LAYERS": "0",
        "PLANB_COMPILATION_CACHE_DIR": "",  # no checkpoint directory, no cache beside it
        "PLANB_NOTICE_FILE": "/var/run/planb-notice/stop",  # in the pod's own emptyDir
        "PYTHONPATH": "/app",  # the package planb_train beside train.py (planb.trainScriptEnv)
    }
    for container in (head, worker):
        assert {e["name"]: e["value"] for e in container["env"]} == expected


def test_gpu_profile_renders_gpu_workers(template: Render) -> None:
    a3 = str(CHART / "values" / "gpu-a3-h100-8.yaml")
    objs = template("-f", a3)
    (job,) = by_kind(objs, "RayJob")
    (group,) = job["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    assert (group["groupName"], group["numOfHosts"]) == ("gpu-group", 1)
    pod = group["template"]["spec"]
    assert pod["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"}
    assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "8"
    (cq,) = by_kind(
        template("-f", str(CHART / "values" / "gpu-a3-h100-8.yaml"), "--set", "mode=queues"), "ClusterQueue"
    )
    assert cq["spec"]["resourceGroups"][0]["coveredResources"] == ["cpu", "memory", "nvidia.com/gpu"]


def test_elastic_only_when_asked_and_without_dws(template: Render) -> None:
    (job,) = by_kind(template("--set", "job.elastic=true", "--set", "dws.enabled=false"), "RayJob")
    assert job["metadata"]["annotations"]["kueue.x-k8s.io/elastic-job"] == "true"
    assert job["spec"]["rayClusterSpec"]["enableInTreeAutoscaling"] is True
    (group,) = job["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    assert (group["minReplicas"], group["maxReplicas"]) == (1, 2)


def test_two_releases_do_not_share_names(template: Render) -> None:
    one = {(o["kind"], o["metadata"]["name"]) for o in template(release="job-1")}
    two = {(o["kind"], o["metadata"]["name"]) for o in template(release="job-2")}
    assert one == {
        ("ConfigMap", "job-1-train-script"),
        ("RayJob", "job-1"),
        ("Pod", "job-1-test-script"),
        ("ConfigMap", "job-1-test-scripts"),
        ("NetworkPolicy", "job-1-ray"),
    }
    assert not one & two


def _leaves(node: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(node, dict) and node and not any("/" in k for k in node):
        out: dict[str, Any] = {}
        for key, value in node.items():
            out.update(_leaves(value, f"{prefix}.{key}" if prefix else key))
        return out
    return {prefix: node}


def test_default_values_are_the_seed_profile() -> None:
    defaults = yaml.safe_load((CHART / "values.yaml").read_text())
    generated = _leaves(chart_values("tpu-v6e-4x4"))
    assert {k: v for k, v in _leaves(defaults).items() if k in generated} == generated


def test_every_value_has_a_doc_comment() -> None:
    """helm-docs style: every value is documented by a `# --` comment above it or above a parent key."""
    lines = (CHART / "values.yaml").read_text().splitlines()
    stack: list[tuple[int, bool]] = []
    missing = []
    for i, line in enumerate(lines):
        match = re.match(r"^(\s*)([A-Za-z][\w.-]*):( .*)?$", line)
        if not match:
            continue
        indent = len(match.group(1))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        j = i - 1
        while j >= 0 and lines[j].strip().startswith("#") and not lines[j].strip().startswith("# --"):
            j -= 1
        documented = (j >= 0 and lines[j].strip().startswith("# --")) or any(doc for _, doc in stack)
        nxt = next((ln for ln in lines[i + 1 :] if ln.strip() and not ln.strip().startswith("#")), "")
        has_children = match.group(3) is None and len(nxt) - len(nxt.lstrip()) > indent
        if has_children:
            stack.append((indent, documented))
        elif not documented:
            missing.append(match.group(2))
    assert missing == []
