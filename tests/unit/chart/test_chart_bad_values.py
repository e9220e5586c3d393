"""Bad values are refused by the schema or a template `fail`, with helm's real message naming the value.

Values that pass are checked too: every shipped values file and every catalog profile renders.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planb.build import golden
from planb.catalog import profiles, tpu, values
from tests.support.shared.chart.helm import Helm

SCHEMA = "values don't meet the specifications of the schema(s)"
#: The end of every TPU slice refusal: where correct values come from.
VALUES_FIX = "or use a values file from charts/planb/values/"
V4 = str(golden.CHART_DIR / "values" / "tpu-v4-2x2x2.yaml")
V6E = ", ".join(tpu.V6E.topologies)
TPU_LABELS = ", ".join(sorted(gen.gke_accelerator for gen in tpu.GENERATIONS))

# (what, helm args, text expected in helm's stderr)
CASES: list[tuple[str, tuple[str, ...], list[str]]] = [
    ("unknown mode", ("--set", "mode=jobs"), [SCHEMA, "/mode", "'job', 'queues'"]),
    (
        "a mesh axis train.py does not have",
        ("--set", "job.training.transformer.mesh=pipeline=2"),
        [SCHEMA, "/job/training/transformer/mesh", "'pipeline=2'"],
    ),
    ("unknown top-level key", ("--set", "replicas=2"), [SCHEMA, "additional properties 'replicas' not allowed"]),
    ("unknown accelerator kind", ("--set", "accelerator.kind=npu"), [SCHEMA, "/accelerator/kind", "'tpu', 'gpu'"]),
    (
        "unknown accelerator resource",
        ("--set", "accelerator.resource=amd.com/gpu"),
        [SCHEMA, "/accelerator/resource", "'google.com/tpu', 'nvidia.com/gpu'"],
    ),
    ("malformed topology", ("--set", "accelerator.topology=4by4"), [SCHEMA, "/accelerator/topology"]),
    ("zero slices", ("--set", "job.workers.replicas=0"), [SCHEMA, "/job/workers/replicas", "minimum"]),
    (
        "run longer than DWS allows",
        ("--set", "job.maxRunDurationSeconds=700000"),
        [SCHEMA, "/job/maxRunDurationSeconds", "want 604,800"],
    ),
    ("unknown model", ("--set", "job.training.model=cnn"), [SCHEMA, "/job/training/model", "'linear', 'transformer'"]),
    ("empty image", ("--set", "job.image="), [SCHEMA, "/job/image"]),
    ("pip as a string", ("--set", "job.pip=jax"), [SCHEMA, "/job/pip", "array"]),
    (
        "negative retries",
        ("--set", "dws.retryStrategy.backoffLimitCount=-1"),
        [SCHEMA, "/dws/retryStrategy/backoffLimitCount", "minimum"],
    ),
    (
        "LocalQueue namespace not a DNS label",
        ("--set", "queues.localQueue.namespace=Default"),
        [SCHEMA, "/queues/localQueue/namespace"],
    ),
    ("bad quota", ("--set", "queues.quotas.onDemand.memory=lots"), [SCHEMA, "/queues/quotas/onDemand/memory"]),
    (
        "unknown provisioning class",
        ("--set", "dws.provisioningClass=fast.example.com"),
        [SCHEMA, "/dws/provisioningClass"],
    ),
    (
        "elastic job with the DWS path",
        ("--set", "job.elastic=true"),
        ["job.elastic=true cannot be combined with dws.enabled=true", "kubernetes-sigs/kueue#6829"],
    ),
    (
        "resource of the other accelerator kind",
        ("--set", "accelerator.resource=nvidia.com/gpu"),
        ['accelerator.resource "nvidia.com/gpu" does not match accelerator.kind "tpu"'],
    ),
    (
        "TPU without topology",
        ("--set", "accelerator.topology="),
        ["accelerator.topology is empty for a TPU profile"],
    ),
    (
        "GPU with a topology",
        ("-f", str(golden.CHART_DIR / "values" / "gpu-a3-h100-8.yaml"), "--set", "accelerator.topology=2x2"),
        ['accelerator.topology "2x2" is set for a GPU profile'],
    ),
    (
        "elastic range upside down",
        (
            "--set",
            "job.elastic=true",
            "--set",
            "dws.enabled=false",
            "--set",
            "job.workers.maxReplicas=1",
            "--set",
            "job.workers.replicas=2",
        ),
        ["job.workers.maxReplicas (1) is below job.workers.replicas (2)"],
    ),
    (
        "fullnameOverride too long",
        ("--set", "fullnameOverride=" + "a" * 48),
        [SCHEMA, "/fullnameOverride"],
    ),
    (
        "topology no TPU forms",
        ("--set", "accelerator.topology=4x5"),
        ["accelerator.topology=4x5 is not a TPU v6e slice shape (accelerator.gkeAccelerator=tpu-v6e-slice)", V6E],
    ),
    (
        "topology no TPU forms, queues mode",
        ("--set", "mode=queues", "--set", "accelerator.topology=4x5"),
        ["accelerator.topology=4x5 is not a TPU v6e slice shape", f"set topology to one of {V6E} {VALUES_FIX}"],
    ),
    (
        "3D topology on a 2D generation",
        ("--set", "accelerator.topology=2x2x2"),
        ["accelerator.topology=2x2x2 is 3D but TPU v6e (accelerator.gkeAccelerator=tpu-v6e-slice) forms 2D slices"],
    ),
    (
        "2D topology on a 3D generation",
        ("-f", V4, "--set", "accelerator.topology=2x4"),
        ["accelerator.topology=2x4 is 2D but TPU v4 (accelerator.gkeAccelerator=tpu-v4-podslice) forms 3D slices"],
    ),
    (
        "hosts x chips per host is not the topology",
        ("--set", "accelerator.hostsPerSlice=3"),
        [
            "accelerator.hostsPerSlice=3 but accelerator.topology=4x4 has 16 chips = 4 hosts x "
            f"accelerator.chipsPerHost=4: set hostsPerSlice to 4 {VALUES_FIX}"
        ],
    ),
    (
        "3D slice with the wrong host count",
        ("-f", V4, "--set", "accelerator.hostsPerSlice=1"),
        [
            "accelerator.hostsPerSlice=1 but accelerator.topology=2x2x2 has 8 chips = 2 hosts x "
            "accelerator.chipsPerHost=4: set hostsPerSlice to 2"
        ],
    ),
    (
        "chips per host no machine type of the topology has",
        ("--set", "accelerator.chipsPerHost=8", "--set", "accelerator.hostsPerSlice=2"),
        [
            "accelerator.chipsPerHost=8 but TPU v6e forms accelerator.topology=4x4 from hosts of 4 chips "
            "(ct6e-standard-4t): set chipsPerHost to 4 and hostsPerSlice to 4"
        ],
    ),
    (
        "chips per host of a topology two machine types form",
        ("--set", "accelerator.topology=2x4", "--set", "accelerator.chipsPerHost=2"),
        [
            "from hosts of 4 chips (ct6e-standard-4t) or 8 chips (ct6e-standard-8t): "
            "set chipsPerHost to 4 and hostsPerSlice to 2, or chipsPerHost to 8 and hostsPerSlice to 1"
        ],
    ),
    (
        "unknown TPU accelerator label",
        ("--set", "accelerator.gkeAccelerator=tpu-v9-slice"),
        [
            "accelerator.gkeAccelerator=tpu-v9-slice is not a TPU accelerator label GKE sets",
            f"set it to one of {TPU_LABELS} {VALUES_FIX}",
        ],
    ),
    (
        "negative accelerator quota",
        ("--set", "mode=queues", "--set", "queues.quotas.onDemand.accelerator=-16"),
        [SCHEMA, "at '/queues/quotas/onDemand/accelerator': minimum: got -16, want 0"],
    ),
    (
        "negative CPU quota of plan B",
        ("--set", "mode=queues", "--set", "queues.quotas.dws.cpu=-1"),
        [SCHEMA, "at '/queues/quotas/dws/cpu': minimum: got -1, want 0"],
    ),
    (
        "negative memory quota as a string",
        ("--set", "mode=queues", "--set-string", "queues.quotas.defaultCpu.memory=-20Gi"),
        [SCHEMA, "/queues/quotas/defaultCpu/memory"],
    ),
    ("unknown Ray auth mode", ("--set", "job.rayAuth=basic"), [SCHEMA, "/job/rayAuth", "'token', 'disabled'"]),
    (
        "token auth on a Ray without it",
        ("--set", "job.rayVersion=2.51.0"),
        [
            "job.rayAuth=token needs Ray 2.52.0 or later, but job.rayVersion is 2.51.0",
            "or set job.rayAuth=disabled",
        ],
    ),
    ("Ray version not a version", ("--set", "job.rayVersion=latest"), [SCHEMA, "/job/rayVersion"]),
    (
        "namespace selector with an unknown operator",
        (
            "--set",
            "mode=queues",
            "--set",
            "queues.namespaceSelector.matchExpressions[0].key=team",
            "--set",
            "queues.namespaceSelector.matchExpressions[0].operator=Like",
        ),
        [SCHEMA, "/queues/namespaceSelector/matchExpressions/0/operator"],
    ),
    (
        "dashboard peer that is not a NetworkPolicy peer",
        ("--set", "job.networkPolicy.dashboardFrom[0].pods=all"),
        [SCHEMA, "/job/networkPolicy/dashboardFrom/0", "additional properties 'pods' not allowed"],
    ),
    (
        "KubeRay namespace that is not a namespace name",
        ("--set", "job.networkPolicy.kuberayNamespace=Ray_System"),
        [SCHEMA, "/job/networkPolicy/kuberayNamespace", "does not match"],
    ),
    (
        "KubeRay record without its namespace (it is never read from the job's own, which its author can write)",
        ("--set", "job.kuberayRecord=planb-kuberay"),
        [SCHEMA, "/job/kuberayRecord", "does not match"],
    ),
    (
        "KubeRay record reader of no kind RBAC knows",
        ("--set", "mode=queues", "--set-json", 'queues.kuberay.readers=[{"kind": "Team", "name": "a"}]'),
        [SCHEMA, "/queues/kuberay/readers/0/kind", "value must be one of"],
    ),
    (
        "negative worker CPU request",
        ("--set", "job.workers.resources.cpu=-8"),
        [SCHEMA, "at '/job/workers/resources/cpu': minimum: got -8, want 0"],
    ),
]


@pytest.mark.parametrize(("what", "args", "expected"), CASES, ids=[c[0] for c in CASES])
def test_refused(helm: Helm, what: str, args: tuple[str, ...], expected: list[str]) -> None:
    done = helm("template", "job-1", str(golden.CHART_DIR), *args)
    assert done.returncode == 1, f"{what}: helm exited {done.returncode} for {args}:\n{done.stderr}"
    assert done.stdout == "", f"{what}: helm rendered something"
    for text in expected:
        assert text in done.stderr, f"{what}: {text!r} not in helm's stderr:\n{done.stderr}"


def test_release_name_too_long_is_refused(helm: Helm) -> None:
    name = "a-very-long-release-name-for-a-training-job-12345"
    done = helm("template", name, str(golden.CHART_DIR))
    assert done.returncode != 0
    assert f'release name "{name}" is 49 characters long' in done.stderr


# (what, helm args): values that look unusual but run, so they must render.
ACCEPTED: list[tuple[str, tuple[str, ...]]] = [
    (
        "2x4 from one 8-chip host",
        (
            "--set",
            "accelerator.topology=2x4",
            "--set",
            "accelerator.chipsPerHost=8",
            "--set",
            "accelerator.hostsPerSlice=1",
        ),
    ),
    ("2x4 from two 4-chip hosts", ("--set", "accelerator.topology=2x4", "--set", "accelerator.hostsPerSlice=2")),
    ("no on-demand quota (plan B only)", ("--set", "mode=queues", "--set", "queues.quotas.onDemand.accelerator=0")),
    ("an older Ray without token auth", ("--set", "job.rayVersion=2.51.0", "--set", "job.rayAuth=disabled")),
    ("no NetworkPolicy", ("--set", "job.networkPolicy.enabled=false")),
]


@pytest.mark.parametrize(("what", "args"), ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_accepted(helm: Helm, what: str, args: tuple[str, ...]) -> None:
    done = helm("template", "job-1", str(golden.CHART_DIR), *args)
    assert (done.returncode, done.stderr) == (0, ""), f"{what}: {done.stderr}"


@pytest.mark.parametrize("mode", ["job", "queues"])
@pytest.mark.parametrize("profile", values.SHIPPED)
def test_shipped_values_file_renders(helm: Helm, profile: str, mode: str) -> None:
    vfile = golden.CHART_DIR / "values" / f"{profile}.yaml"
    done = helm("template", "job-1", str(golden.CHART_DIR), "-f", str(vfile), "--set", f"mode={mode}")
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert done.stdout.count("\nkind: ") >= 2


@pytest.mark.parametrize("profile", list(profiles.PROFILES))
def test_every_catalog_profile_passes_the_chart_checks(helm: Helm, tmp_path: Path, profile: str) -> None:
    """What `planb values PROFILE` prints is what the chart accepts, for every profile of the catalog."""
    vfile = tmp_path / "values.yaml"
    vfile.write_text(values.render(profile))
    done = helm("template", "job-1", str(golden.CHART_DIR), "-f", str(vfile))
    assert (done.returncode, done.stderr) == (0, ""), done.stderr


DIGEST = "sha256:" + "0123456789abcdef" * 4


@pytest.mark.parametrize("key", ["job.image", "job.test.image"])
def test_an_image_may_be_pinned_by_digest_and_a_malformed_digest_is_refused(helm: Helm, key: str) -> None:
    # NAME[:TAG]@sha256:<64 hex digits> renders, as a tag alone does (NOTES warn of that).
    for image in (f"rayproject/ray:2.53.0-py311@{DIGEST}", f"rayproject/ray@{DIGEST}", "rayproject/ray:2.53.0-py311"):
        done = helm("template", "job-1", str(golden.CHART_DIR), "--set", f"{key}={image}")
        assert (done.returncode, done.stderr) == (0, ""), done.stderr
        assert f'image: "{image}"' in done.stdout
    for image in ("rayproject/ray@sha256:abc", "rayproject/ray:2.53@md5:" + "0" * 32, "ray project/ray"):
        done = helm("template", "job-1", str(golden.CHART_DIR), "--set", f"{key}={image}")
        assert done.returncode == 1 and SCHEMA in done.stderr and "/" + key.replace(".", "/") in done.stderr, image
