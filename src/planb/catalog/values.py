"""Helm values for charts/planb derived from a profile: the only place profile facts enter the chart."""

from __future__ import annotations

import importlib.resources
from pathlib import Path
from typing import Any

import yaml

from planb.catalog import counts, pool_layout, profiles, training

#: Ray of the job's images. KubeRay needs it as the RayCluster's rayVersion for token
#: authentication (2.52.0 or later), so the image tag and that field come from one constant.
RAY_VERSION = "2.53.0"
RAY_IMAGE = f"rayproject/ray:{RAY_VERSION}-py311"
RAY_GPU_IMAGE = f"rayproject/ray:{RAY_VERSION}-py311-gpu"
#: training/requirements.txt pins what train.py runs with; the job's Ray runtime env installs
#: the same versions (jax with the accelerator's extra). Package data (a link to training/requirements.txt in the
#: checkout, the file itself in a wheel), read through importlib.resources so `planb values` works installed.
TRAINING_REQUIREMENTS = importlib.resources.files("planb.catalog") / "training-requirements.txt"
RUNTIME_PACKAGES = ("pandas", "flax", "optax", "orbax-checkpoint")
#: Only the cluster needs it: Orbax writes gs:// checkpoints through gcsfs.
GCSFS_VERSION = "2026.10.1"


def _pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in TRAINING_REQUIREMENTS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, _, version = line.partition("==")
            pins[name.split("[", 1)[0].strip().lower()] = version.strip()
    return pins


def runtime_pip(jax_extra: str) -> list[str]:
    """The job's pip runtime env: what train.py imports, pinned as in training/requirements.txt."""
    pins = _pins()
    return [
        f"jax[{jax_extra}]=={pins['jax']}",
        *(f"{name}=={pins[name]}" for name in RUNTIME_PACKAGES),
        f"gcsfs=={GCSFS_VERSION}",
    ]


#: Per chip on each worker host: the tutorial gives a 4-chip v6e host 8 CPUs and 16Gi.
CPU_PER_CHIP = 2
MEMORY_GI_PER_CHIP = 4

#: Profiles whose values files ship under charts/planb/values/ (the tutorial's first).
SHIPPED: tuple[str, ...] = (
    "tpu-v6e-4x4",
    "tpu-v6e-2x4",
    "tpu-v5e-2x4",
    "tpu-v5p-2x2x2",
    "tpu-v4-2x2x2",
    "tpu7x-2x2x2",
    "gpu-a3-h100-8",
    "gpu-a4-b200-8",
)


def _quota(prof: profiles.Profile, slices: int) -> dict[str, Any]:
    """Quota of ``slices`` slices of workers: cpu and memory of their hosts, the chips of the slices."""
    hosts = prof.hosts_per_slice
    one_slice = {
        "cpu": hosts * CPU_PER_CHIP * prof.chips_per_host,
        "memory": f"{hosts * MEMORY_GI_PER_CHIP * prof.chips_per_host}Gi",
        "accelerator": prof.chips_per_slice,
    }
    return pool_layout.scale_quota(one_slice, slices)


def chart_values(profile: str, slices: int = 1, on_demand_slices: int = 1, dws_slices: int = 1) -> dict[str, Any]:
    """The profile-derived part of the chart's values.

    ``slices``: accelerator slices per job (the worker group's replicas).
    ``on_demand_slices``: plan A's quota, in slices (accelerator quota = K x chips per slice).
    ``dws_slices``: plan B's quota, in slices: the DWS pool's size, so that the queue never admits
    more DWS capacity than the pool can deliver (a finite quota, not "unlimited").
    """
    prof = profiles.get(profile)
    replicas = counts.slices("--slices", slices)
    on_demand = counts.slices("--on-demand-slices", on_demand_slices)
    dws = counts.slices("--dws-slices", dws_slices)
    worker_cpu = CPU_PER_CHIP * prof.chips_per_host
    worker_mem = MEMORY_GI_PER_CHIP * prof.chips_per_host
    jax_extra = "tpu" if prof.kind == "tpu" else "cuda12"
    return {
        "profile": prof.name,
        "accelerator": {
            "kind": prof.kind,
            "resource": prof.resource_name,
            "machineType": prof.machine_type,
            "topology": prof.topology or "",
            "rayAcceleratorType": prof.ray_accelerator_type,
            "chipsPerHost": prof.chips_per_host,
            "hostsPerSlice": prof.hosts_per_slice,
            "gkeAccelerator": prof.gke_accelerator,
            "peakTflops": prof.peak_tflops,
            "tolerations": prof.tolerations,
        },
        "queues": {
            "quotas": {
                "onDemand": _quota(prof, on_demand),
                "dws": _quota(prof, dws),
            },
        },
        "job": {
            "image": RAY_IMAGE if prof.kind == "tpu" else RAY_GPU_IMAGE,
            "rayVersion": RAY_VERSION,
            "pip": runtime_pip(jax_extra),
            "training": {"transformer": training.default_transformer(prof.name).values()},
            "workers": {
                "replicas": replicas,
                "resources": {"cpu": str(worker_cpu), "memory": f"{worker_mem}Gi"},
            },
        },
    }


class IndentedDumper(yaml.SafeDumper):
    """Indents block sequences under their key, as yamllint's default expects."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def header(profile: str, slices: int, on_demand_slices: int, dws_slices: int = 1) -> str:
    args = ""
    if slices != 1:
        args += f" --slices {slices}"
    if on_demand_slices != 1:
        args += f" --on-demand-slices {on_demand_slices}"
    if dws_slices != 1:
        args += f" --dws-slices {dws_slices}"
    return (
        f"# Generated from the planb accelerator catalog by `planb values {profile}{args}`.\n"
        "# Do not edit: change src/planb/catalog and run `make values`.\n"
    )


def render(profile: str, slices: int = 1, on_demand_slices: int = 1, dws_slices: int = 1) -> str:
    """The values as a YAML document with the 'generated' header."""
    canonical = profiles.get(profile).name
    body = yaml.dump(
        chart_values(profile, slices, on_demand_slices, dws_slices),
        Dumper=IndentedDumper,
        sort_keys=False,
        default_flow_style=False,
        width=1000,
    )
    return header(canonical, slices, on_demand_slices, dws_slices) + body


def shipped_files(directory: Path) -> dict[Path, str]:
    """Path -> content of every shipped values file under ``directory``."""
    return {directory / f"{name}.yaml": render(name) for name in SHIPPED}


def write_all(directory: Path) -> list[Path]:
    """(Re)write the shipped values files; returns the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    wanted = shipped_files(directory)
    for stale in directory.glob("*.yaml"):
        if stale not in wanted and stale.read_text().startswith("# Generated from the planb accelerator catalog"):
            stale.unlink()
    written = []
    for path, content in wanted.items():
        path.write_text(content)
        written.append(path)
    return written
