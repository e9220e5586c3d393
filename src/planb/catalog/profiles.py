"""Profiles: one name (``tpu-v6e-4x4``, alias ``tpu-v6e-16``; ``gpu-a3-h100-8``) per accelerator shape.

A profile is what users type. It resolves to one catalog entry (a TPU slice or a GPU machine) and
everything downstream (node pools, quotas, flavors, RayJob, ScalingConfig) is derived from it.

Naming:
  * TPU: ``<generation prefix>-<topology>`` (``tpu-v4``, ``tpu-v5e``, ``tpu-v5p``, ``tpu-v6e``, ``tpu7x``),
    also reachable as ``<prefix>-<chips per slice>`` (``tpu-v6e-16`` is ``tpu-v6e-4x4``). The alias
    counts chips, not TensorCores (Cloud TPU's ``v5p-16`` counts TensorCores).
  * GPU: ``gpu-<family>-<gpu model>-<gpus per VM>`` (``gpu-a3-h100-8``, ``gpu-a4-b200-8``).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Literal

from planb.catalog import gpu, tpu
from planb.catalog.errors import MachineTypeError, TopologyError, UnknownProfileError

Kind = Literal["tpu", "gpu"]


@dataclass(frozen=True)
class Profile:
    """An accelerator profile; every field is derived once from its catalog entry."""

    name: str
    entry: tpu.TpuSlice | gpu.GpuMachine
    alias: str | None = None
    kind: Kind = field(init=False)
    generation: str = field(init=False)
    machine_type: str = field(init=False)
    topology: str | None = field(init=False)
    resource_name: str = field(init=False)
    gke_accelerator: str = field(init=False)
    ray_accelerator_type: str = field(init=False)
    chips_per_host: int = field(init=False)
    hosts_per_slice: int = field(init=False)
    chips_per_slice: int = field(init=False)
    nodes_per_slice: int = field(init=False)
    multi_host: bool = field(init=False)
    flex_start: bool = field(init=False)
    uses_placement_policy: bool = field(init=False)
    node_selector: dict[str, str] = field(init=False)
    #: Peak dense bf16 TFLOP/s per chip or GPU (train.py's MFU denominator, PLANB_PEAK_TFLOPS).
    peak_tflops: float = field(init=False)
    doc_url: str = field(init=False)

    def __post_init__(self) -> None:
        entry = self.entry
        values: dict[str, object]
        if isinstance(entry, tpu.TpuSlice):
            gen = entry.generation
            values = {
                "kind": "tpu",
                "generation": gen.name,
                "machine_type": entry.machine_type,
                "topology": entry.topology,
                "resource_name": tpu.RESOURCE,
                "gke_accelerator": gen.gke_accelerator,
                "ray_accelerator_type": gen.ray_accelerator_type,
                "flex_start": gen.flex_start,
                "uses_placement_policy": gen.uses_placement_policy and entry.multi_host,
                "peak_tflops": gen.peak_tflops,
                "doc_url": gen.doc_url,
            }
        else:
            values = {
                "kind": "gpu",
                "generation": entry.family,
                "machine_type": entry.machine_type,
                "topology": None,
                "resource_name": gpu.RESOURCE,
                "gke_accelerator": entry.gke_accelerator,
                "ray_accelerator_type": entry.ray_accelerator_type,
                "flex_start": entry.flex_start,
                "uses_placement_policy": False,
                "peak_tflops": entry.peak_tflops,
                "doc_url": entry.doc_url,
            }
        values.update(
            chips_per_host=entry.chips_per_vm,
            hosts_per_slice=entry.hosts_per_slice,
            chips_per_slice=entry.chips_per_slice,
            nodes_per_slice=entry.nodes_per_slice,
            multi_host=entry.multi_host,
            node_selector=dict(entry.node_selector),
        )
        for key, value in values.items():
            object.__setattr__(self, key, value)

    @property
    def tolerations(self) -> list[dict[str, str]]:
        """Taints GKE puts on the accelerator nodes: the device taint and, on DWS nodes, gke-queued."""
        return [
            {"key": self.resource_name, "operator": "Exists", "effect": "NoSchedule"},
            {"key": "cloud.google.com/gke-queued", "operator": "Exists", "effect": "NoSchedule"},
        ]


def _tpu_profiles() -> list[Profile]:
    out: list[Profile] = []
    for gen in tpu.GENERATIONS:
        for topology in gen.topologies:
            machine = gen.default_machine(topology)
            entry = tpu.TpuSlice(gen, machine.name, topology)
            alias = f"{gen.profile_prefix}-{entry.chips_per_slice}"
            out.append(Profile(f"{gen.profile_prefix}-{topology}", entry, alias))
    return out


def _gpu_name(machine: gpu.GpuMachine) -> str:
    return f"gpu-{machine.family}-{machine.ray_accelerator_type.lower()}-{machine.gpus_per_vm}"


def _build() -> tuple[dict[str, Profile], dict[str, str]]:
    profiles: dict[str, Profile] = {}
    aliases: dict[str, str] = {}
    for profile in [*_tpu_profiles(), *(Profile(_gpu_name(m), m) for m in gpu.MACHINES)]:
        if profile.name in profiles:
            raise AssertionError(f"duplicate profile {profile.name}")
        profiles[profile.name] = profile
        if profile.alias is not None:
            if profile.alias in aliases:
                raise AssertionError(f"alias {profile.alias} names two profiles")
            aliases[profile.alias] = profile.name
    return profiles, aliases


PROFILES, ALIASES = _build()

#: The tutorial's accelerator: TPU v6e, topology 4x4 on ct6e-standard-4t (4 hosts x 4 chips).
DEFAULT_PROFILE = "tpu-v6e-4x4"


def names() -> list[str]:
    return list(PROFILES)


def _generation_for(name: str) -> tuple[tpu.TpuGeneration, str] | None:
    for gen in tpu.GENERATIONS:
        prefix = gen.profile_prefix + "-"
        if name.startswith(prefix):
            return gen, name[len(prefix) :]
    return None


def _unknown(name: str) -> UnknownProfileError:
    candidates = [*PROFILES, *ALIASES]
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    hint = f"did you mean {ALIASES.get(close[0], close[0])!r}? " if close else ""
    families = [f"{g.profile_prefix}-<{'AxBxC' if g.dimensions == 3 else 'AxB'}>" for g in tpu.GENERATIONS]
    families += [_gpu_name(m) for m in gpu.MACHINES]
    return UnknownProfileError(
        f"unknown profile {name!r}: {hint}valid profiles: {', '.join(families)} ('planb profiles' lists every one)"
    )


def get(name: str, machine_type: str | None = None) -> Profile:
    """The profile called ``name`` (or its chip-count alias), optionally on another machine type.

    ``machine_type`` picks a different machine type of the same generation that forms the same
    topology, e.g. ``get('tpu-v5e-2x4', 'ct5lp-hightpu-4t')`` is 2 hosts x 4 chips instead of 1 x 8.
    """
    canonical = ALIASES.get(name, name)
    profile = PROFILES.get(canonical)
    if profile is None:
        found = _generation_for(name)
        if found is None:
            raise _unknown(name)
        gen, rest = found
        if re.fullmatch(r"[0-9]+", rest):
            chips = int(rest)
            nearest = gen.nearest_topology(rest, chips)
            counts = ", ".join(str(tpu.topology_chips(t)) for t in gen.topologies)
            raise UnknownProfileError(
                f"unknown profile {name!r}: no TPU {gen.name} slice has {chips} chips; nearest valid profile "
                f"'{gen.profile_prefix}-{nearest}' ({tpu.topology_chips(nearest)} chips); "
                f"valid chip counts: {counts}"
            )
        # Let the generation explain what is wrong with the topology (malformed, 2D vs 3D, not offered).
        try:
            gen.check_topology(rest)
        except TopologyError as exc:
            raise TopologyError(f"profile {name!r}: {exc}") from exc
        raise _unknown(name)  # pragma: no cover - every offered topology is a profile
    if machine_type is None or machine_type == profile.machine_type:
        return profile
    entry = profile.entry
    if isinstance(entry, gpu.GpuMachine):
        raise MachineTypeError(
            f"machine type {machine_type!r} does not fit GPU profile {profile.name!r}: a GPU profile names "
            f"its machine type ({profile.machine_type}); pick another GPU profile instead"
        )
    other = tpu.TpuSlice(entry.generation, machine_type, entry.topology)
    return Profile(profile.name, other, profile.alias)
