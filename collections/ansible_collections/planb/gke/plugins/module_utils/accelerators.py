# planb.gke: GPU accelerators of a node pool (config.accelerators) with GKE's driver installation setting.
"""``config.accelerators[]`` of a GPU node pool: type, count and ``gpuDriverInstallationConfig``; the options' checks
and the comparison of two lists are here, the entry itself is bodies.py's.

GKE's GPU page (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus) and its queued
provisioning page (https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest) create
GPU pools with ``--accelerator type=GPU_TYPE,count=N,gpu-driver-version=default|latest``, which gcloud
sends as ``AcceleratorConfig {acceleratorType, acceleratorCount, gpuDriverInstallationConfig:
{gpuDriverVersion: DEFAULT|LATEST|INSTALLATION_DISABLED}}`` (GKE v1 ``AcceleratorConfig``). Whether GKE
installs a driver when the field is omitted depends on the version (the GPU page says both), so planb
always sends it; ``DEFAULT`` is what gcloud picks when the flag is omitted on GKE 1.30.1-gke.1156000 and
later, and unlike ``LATEST`` it is not limited to Container-Optimized OS nodes.
"""

from __future__ import annotations

from typing import Any

from ansible_collections.planb.gke.plugins.module_utils._generated.machine_types import FACTS as MACHINE_TYPES

DOC_GPUS = "https://cloud.google.com/kubernetes-engine/docs/how-to/gpus"
GPU_DRIVER_VERSIONS = ["DEFAULT", "LATEST", "INSTALLATION_DISABLED"]

Body = dict[str, Any]


def accelerator_problems(kind: str | None, count: int | None, machine: str) -> list[str]:
    """What is wrong with the accelerator options, ``accelerator_type`` and ``accelerator_count`` of a pool of
    ``machine`` (empty when they are fine, or not used)."""
    facts = MACHINE_TYPES.get(machine) or {}
    if not kind:  # accelerator_type and accelerator_count come together: the argument spec's required_together
        return []
    problems: list[str] = []
    if facts.get("kind") == "tpu":
        problems.append(
            f"accelerator_type {kind} cannot be attached to TPU machine type {machine}: its TPU chips come with the "
            "machine type (config.accelerators is for GPUs)"
        )
    if not count or count < 1:
        problems.append(f"accelerator_type {kind} needs accelerator_count of at least 1")
    elif facts.get("kind") == "gpu" and count != facts["gpus_per_vm"]:
        problems.append(
            f"accelerator_count {count} does not match machine type {machine}, which comes with "
            f"{facts['gpus_per_vm']} GPUs ({facts['doc_url']}); set accelerator_count {facts['gpus_per_vm']}"
        )
    return problems


def _essence(accelerators: Any) -> list[tuple[str, int, str]]:
    out = []
    for item in accelerators or []:
        driver = (item.get("gpuDriverInstallationConfig") or {}).get("gpuDriverVersion") or ""
        out.append((str(item.get("acceleratorType") or ""), int(item.get("acceleratorCount") or 0), str(driver)))
    return sorted(out)


def same_accelerators(desired: Any, current: Any) -> bool:
    """Whether two ``config.accelerators`` lists attach the same GPUs with the same driver setting (fields GKE
    adds on its own, and int64 counts as strings, do not count)."""
    return _essence(desired) == _essence(current)
