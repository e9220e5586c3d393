"""GKE's documented validation of clusters and node pools, as the emulator applies it server-side.

Each rule names the GKE document it follows. The Ansible modules validate the same things
client-side (and planb's own policy on top, e.g. version >= 1.34); this module is what *GKE*
would answer, so the emulator refuses what GKE refuses with a 400 INVALID_ARGUMENT.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

DOC_PLAN_TPUS = "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus"
DOC_FLEX_START = "https://cloud.google.com/kubernetes-engine/docs/concepts/flex-start-vms"
DOC_TPU_FLEX = "https://cloud.google.com/kubernetes-engine/docs/how-to/tpu-flex-start"
DOC_QUEUED = "https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest"
DOC_NAMES = "https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters"
DOC_VERSIONS = "https://cloud.google.com/kubernetes-engine/docs/release-notes"

#: Oldest minor version the emulator (like GKE's release channels in 2026) still creates.
OLDEST_SUPPORTED_MINOR = (1, 32)
#: GKE version from which TPU node pools may use flex-start.
TPU_FLEX_START_MIN = (1, 33, 0, 1712000)
#: maxRunDuration's default and cap: 7 days.
MAX_RUN_DURATION_S = 7 * 24 * 3600

Body = dict[str, Any]


class RuleViolation(Exception):
    """A request GKE would refuse; `source` is the document the rule comes from."""

    def __init__(self, message: str, source: str) -> None:
        super().__init__(f"{message} (see {source})")
        self.source = source


@dataclass(frozen=True)
class TpuFamily:
    """What GKE documents per TPU generation (machine type prefix)."""

    generation: str
    dims: int
    flex_start: bool


TPU_FAMILIES: dict[str, TpuFamily] = {
    "ct3-": TpuFamily("v3", 2, False),
    "ct3p-": TpuFamily("v3", 2, False),
    "ct4p-": TpuFamily("v4", 3, False),
    "ct5lp-": TpuFamily("v5e", 2, True),
    "ct5p-": TpuFamily("v5p", 3, True),
    "ct6e-": TpuFamily("v6e", 2, True),
    "tpu7x-": TpuFamily("tpu7x", 3, True),
}
#: 2D slice shapes GKE offers for v5e/v6e (single- and multi-host).
TOPOLOGIES_2D = ("1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16")

_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$")
_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+)(?:-gke\.(\d+))?)?$")


def tpu_family(machine_type: str) -> TpuFamily | None:
    """The TPU family of a machine type, or None for a CPU/GPU machine."""
    for prefix, family in TPU_FAMILIES.items():
        if machine_type.startswith(prefix):
            return family
    return None


def chips_per_vm(machine_type: str) -> int:
    """Chips per VM from the machine type's `-<n>t` suffix (ct6e-standard-4t -> 4)."""
    match = re.search(r"-(\d+)t$", machine_type)
    return int(match.group(1)) if match else 1


def parse_version(version: str) -> tuple[int, ...] | None:
    """(major, minor[, patch[, gke]]) of a GKE version, None when it is not one."""
    match = _VERSION.match(version)
    if not match:
        return None
    return tuple(int(part) for part in match.groups() if part is not None)


def version_at_least(version: str, minimum: tuple[int, ...]) -> bool:
    """Whether every version matching `version` (a prefix like 1.34 counts as its newest) is >= minimum."""
    parsed = parse_version(version)
    if parsed is None:
        return False
    given = len(parsed)
    if parsed[:given] != minimum[:given]:
        return parsed[:given] > minimum[:given]
    return True  # equal on every component given: a prefix stands for its newest release


def topology_chips(topology: str) -> int:
    """Chips in a slice topology (4x4 -> 16)."""
    chips = 1
    for dim in topology.split("x"):
        chips *= int(dim)
    return chips


def hosts_per_slice(machine_type: str, topology: str) -> int:
    """VMs in one slice: chips in the topology / chips per VM (at least 1)."""
    return max(1, topology_chips(topology) // chips_per_vm(machine_type))


def _check(condition: bool, message: str, source: str) -> None:
    if not condition:
        raise RuleViolation(message, source)


def check_name(kind: str, name: str) -> None:
    """Cluster and node pool names: RFC 1035 label, at most 40 characters."""
    _check(
        bool(_NAME.match(name)),
        f"{kind} name {name!r} must start with a letter, use only lowercase letters, digits and "
        "hyphens, end with a letter or digit and be at most 40 characters",
        DOC_NAMES,
    )


def check_cluster(cluster: Body) -> None:
    """What GKE refuses in clusters.create."""
    check_name("Cluster", str(cluster.get("name", "")))
    version = str(cluster.get("initialClusterVersion") or "latest")
    if version != "latest":
        parsed = parse_version(version)
        _check(parsed is not None, f"Version {version!r} is not a GKE version", DOC_VERSIONS)
        assert parsed is not None
        _check(
            parsed[:2] >= OLDEST_SUPPORTED_MINOR,
            f"Master version {version!r} is unsupported",
            DOC_VERSIONS,
        )
    for pool in cluster.get("nodePools") or []:
        check_node_pool(pool, version)


def _autoscaling_rules(pool: Body, label: str, source: str) -> None:
    autoscaling = pool.get("autoscaling") or {}
    _check(bool(autoscaling.get("enabled")), f"{label} requires autoscaling to be enabled", source)
    minimum = int(autoscaling.get("minNodeCount") or 0) + int(autoscaling.get("totalMinNodeCount") or 0)
    _check(minimum == 0, f"{label} requires the minimum node count to be 0", source)
    _check(
        autoscaling.get("locationPolicy", "ANY") == "ANY",
        f"{label} requires autoscaling location policy ANY",
        source,
    )
    _check(int(pool.get("initialNodeCount") or 0) == 0, f"{label} requires initialNodeCount 0", source)
    config = pool.get("config") or {}
    affinity = (config.get("reservationAffinity") or {}).get("consumeReservationType", "NO_RESERVATION")
    _check(
        affinity == "NO_RESERVATION",
        f"{label} requires reservationAffinity.consumeReservationType NO_RESERVATION",
        source,
    )
    _check(
        not (pool.get("management") or {}).get("autoRepair", False),
        f"{label} requires management.autoRepair false",
        source,
    )


def check_node_pool(pool: Body, cluster_version: str) -> None:
    """What GKE refuses in nodePools.create (the subset planb uses)."""
    check_name("Node pool", str(pool.get("name", "")))
    config = pool.get("config") or {}
    machine_type = str(config.get("machineType") or "e2-medium")
    family = tpu_family(machine_type)
    topology = str((pool.get("placementPolicy") or {}).get("tpuTopology") or "")
    if topology:
        _check(
            family is not None, f"tpuTopology is only valid for TPU machine types, not {machine_type}", DOC_PLAN_TPUS
        )
        assert family is not None
        dims = topology.split("x")
        _check(
            len(dims) == family.dims and all(d.isdigit() and int(d) > 0 for d in dims),
            f"Topology {topology!r} is not a {family.dims}D topology of TPU {family.generation}",
            DOC_PLAN_TPUS,
        )
        per_vm = chips_per_vm(machine_type)
        chips = topology_chips(topology)
        if family.dims == 2:
            _check(
                topology in TOPOLOGIES_2D,
                f"Topology {topology!r} is not offered for TPU {family.generation}",
                DOC_PLAN_TPUS,
            )
        _check(
            chips == per_vm or (chips > per_vm and chips % per_vm == 0 and per_vm == 4),
            f"Topology {topology!r} ({chips} chips) does not fit machine type {machine_type} ({per_vm} chips per VM)",
            DOC_PLAN_TPUS,
        )
        hosts = hosts_per_slice(machine_type, topology)
        autoscaling = pool.get("autoscaling") or {}
        for key in ("maxNodeCount", "totalMaxNodeCount"):
            value = int(autoscaling.get(key) or 0)
            _check(
                value % hosts == 0,
                f"autoscaling.{key} {value} must be a multiple of the {hosts} hosts of a {topology} slice",
                DOC_PLAN_TPUS,
            )
    if (pool.get("queuedProvisioning") or {}).get("enabled"):
        _autoscaling_rules(pool, "Queued provisioning", DOC_QUEUED)
    if config.get("flexStart"):
        _autoscaling_rules(pool, "Flex-start", DOC_FLEX_START)
        _check(
            not config.get("spot") and not config.get("preemptible"), "Flex-start VMs cannot be Spot", DOC_FLEX_START
        )
        if family is not None:
            _check(family.flex_start, f"Flex-start is not available for TPU {family.generation}", DOC_TPU_FLEX)
            _check(
                cluster_version == "latest" or version_at_least(cluster_version, TPU_FLEX_START_MIN),
                f"TPU flex-start needs GKE 1.33.0-gke.1712000 or later, the cluster runs {cluster_version}",
                DOC_TPU_FLEX,
            )
    duration = str(config.get("maxRunDuration") or "")
    if duration:
        match = re.match(r"^(\d+)s$", duration)
        _check(bool(match), f"maxRunDuration {duration!r} must be a duration in seconds like '86400s'", DOC_FLEX_START)
        assert match is not None
        _check(
            0 < int(match.group(1)) <= MAX_RUN_DURATION_S,
            f"maxRunDuration {duration} exceeds the 7-day cap ({MAX_RUN_DURATION_S}s)",
            DOC_FLEX_START,
        )
