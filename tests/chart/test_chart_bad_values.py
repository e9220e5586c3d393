"""Bad values are refused by the schema or a template `fail`, with helm's real message naming the value."""

from __future__ import annotations

import pytest

from planb.catalog import golden
from tests.chart.conftest import Helm

SCHEMA = "values don't meet the specifications of the schema(s)"

# (what, helm args, text expected in helm's stderr)
CASES: list[tuple[str, tuple[str, ...], list[str]]] = [
    ("unknown mode", ("--set", "mode=jobs"), [SCHEMA, "/mode", "'job', 'queues'"]),
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
]


@pytest.mark.parametrize(("what", "args", "expected"), CASES, ids=[c[0] for c in CASES])
def test_refused(helm: Helm, what: str, args: tuple[str, ...], expected: list[str]) -> None:
    done = helm("template", "job-1", str(golden.CHART_DIR), *args)
    assert done.returncode != 0, f"{what}: helm accepted {args}"
    for text in expected:
        assert text in done.stderr, f"{what}: {text!r} not in helm's stderr:\n{done.stderr}"


def test_release_name_too_long_is_refused(helm: Helm) -> None:
    name = "a-very-long-release-name-for-a-training-job-12345"
    done = helm("template", name, str(golden.CHART_DIR))
    assert done.returncode != 0
    assert f'release name "{name}" is 49 characters long' in done.stderr


def test_at_least_twelve_cases() -> None:
    assert len(CASES) >= 12
