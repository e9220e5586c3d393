# planb.gke: validation of the node pool module's inputs, before any API call.
"""Every node pool input is checked here before the first request, from its module's request (``NodePoolRequest``);
each problem names the option and the fix: the pool's size and autoscaling, TPU machine types and topologies,
flex-start and queued provisioning (GKE's rules and planb's policy), its config, the reservation it consumes. What
every module's inputs share, the cluster's and how a problem is raised: ``validate``.
"""

from __future__ import annotations

import re

from ansible_collections.planb.gke.plugins.module_utils._generated.machine_types import FACTS as MACHINE_TYPES
from ansible_collections.planb.gke.plugins.module_utils._generated.versions import DOC_IRONWOOD
from ansible_collections.planb.gke.plugins.module_utils.accelerators import accelerator_problems
from ansible_collections.planb.gke.plugins.module_utils.args import TAINT_EFFECTS
from ansible_collections.planb.gke.plugins.module_utils.cluster_options import service_account_problem
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError
from ansible_collections.planb.gke.plugins.module_utils.locations import flex_start_zone_problems, zone_problems
from ansible_collections.planb.gke.plugins.module_utils.node_pool_request import NodePoolRequest
from ansible_collections.planb.gke.plugins.module_utils.pool_versions import (
    flex_start_version_problem,
    tpu_version_problem,
)
from ansible_collections.planb.gke.plugins.module_utils.resource_labels import label_problems
from ansible_collections.planb.gke.plugins.module_utils.validate import (
    LOCATION,
    MACHINE,
    common_problems,
    duration_seconds,
    raise_problems,
    tpu_machine,
)

#: GKE's flex-start with queued provisioning page (recommendations for the pools it creates).
DOC_QUEUED = "https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest"
#: GKE: a node pool consumes a specific reservation by name, or one shared from another project by its path.
DOC_RESERVATIONS = "https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations"
#: A reservation by name, or one shared from another project (GKE's and Compute Engine's
#: ReservationAffinity.values: "projects/<project>/reservations/<name>").
RESERVATION = re.compile(
    r"^(?:projects/(?P<project>[a-z][-a-z0-9]{4,28}[a-z0-9])/reservations/)?(?P<name>[a-z]([-a-z0-9]{0,61}[a-z0-9])?)$"
)
#: A VM has exactly one provisioning model (standard, Spot, flex-start, reservation-bound): Compute Engine's
#: provisioning models page. Flex-start and queued provisioning pools get flex-start VMs, so never Spot ones.
DOC_PROVISIONING_MODELS = "https://cloud.google.com/compute/docs/instances/provisioning-models"
#: maxRunDuration's cap: 7 days (https://cloud.google.com/kubernetes-engine/docs/concepts/flex-start-vms).
MAX_RUN_DURATION_S = 7 * 24 * 3600
_LABEL_KEY = re.compile(r"^([a-z0-9.-]+/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
#: A machine type name that looks like a TPU VM (ct5lp-..., tpu7x-...), whether or not the catalog holds it.
_TPU_LIKE = re.compile(r"^(ct[0-9]|tpu[0-9])")


def topology_chips(topology: str) -> int:
    chips = 1
    for dim in topology.split("x"):
        chips *= int(dim)
    return chips


def hosts_per_slice(machine_type: str, topology: str) -> int:
    """VMs in one slice of ``topology`` on a catalog TPU machine type (at least 1)."""
    facts = tpu_machine(machine_type)
    per_vm = int(facts["chips_per_vm"]) if facts else 1
    return max(1, topology_chips(topology) // per_vm)


def _flex_start_generations() -> str:
    names = sorted({f["generation"] for f in MACHINE_TYPES.values() if f["kind"] == "tpu" and f["flex_start"]})
    return ", ".join(names)


def autoscaling_bounds(request: NodePoolRequest) -> tuple[bool, int, int | None]:
    """(enabled, min, max) of the autoscaling option, per-zone or total counts."""
    auto = request.autoscaling or {}
    enabled = bool(auto) and bool(auto.get("enabled", True))
    low = auto.get("min_node_count") or auto.get("total_min_node_count") or 0
    high = auto.get("max_node_count") if auto.get("max_node_count") is not None else auto.get("total_max_node_count")
    return enabled, int(low), None if high is None else int(high)


def _check_autoscaling(request: NodePoolRequest, problems: list[str]) -> None:
    # Per-zone or total counts, not both: the autoscaling option's mutually_exclusive (node_pool_spec.py).
    enabled, low, high = autoscaling_bounds(request)
    if enabled:
        if high is None or high < 1:
            problems.append("autoscaling: max_node_count (or total_max_node_count) must be at least 1")
        elif low < 0 or low > high:
            problems.append(f"autoscaling: min node count {low} must be between 0 and the max node count {high}")
    if (request.initial_node_count or 0) < 0:
        problems.append("initial_node_count must not be negative")


def _check_tpu(request: NodePoolRequest, problems: list[str]) -> None:
    """Machine type and topology against the catalog; multi-host pools scale by whole slices."""
    machine = request.machine_type or ""
    topology = request.tpu_topology
    placement = request.placement_policy
    facts = tpu_machine(machine)
    if facts is None:
        if topology:
            problems.append(
                f"tpu_topology {topology} needs a TPU machine type of planb's catalog, {machine} is not one "
                "(`planb profiles` lists them)"
            )
        elif _TPU_LIKE.match(machine):
            known = ", ".join(sorted(name for name, f in MACHINE_TYPES.items() if f["kind"] == "tpu"))
            problems.append(f"machine_type {machine} is not a TPU machine type of planb's catalog; known: {known}")
        return
    if placement and topology and facts.get("uses_placement_policy"):
        problems.append(
            f"set placement_policy or tpu_topology for TPU {facts['generation']} machine type {machine}, not both: "
            f"a multi-host slice takes the workload policy alone, a single-host one tpu_topology ({DOC_IRONWOOD})"
        )
        return
    if not topology:
        if facts["dimensions"] == 3 and not placement:
            problems.append(f"tpu_topology is required for TPU {facts['generation']} machine type {machine}")
        # With placement_policy the slice's shape is the workload policy's, which GKE checks.
        return
    if topology not in facts["topologies"]:
        problems.append(
            f"tpu_topology {topology} is not offered for machine type {machine} (TPU {facts['generation']}); "
            f"it forms: {', '.join(facts['topologies'])}"
        )
        return
    hosts = hosts_per_slice(machine, topology)
    if hosts > 1 and facts.get("uses_placement_policy"):
        problems.append(
            f"tpu_topology {topology} is a multi-host TPU {facts['generation']} slice, for which GKE takes a workload "
            f"policy instead of a TPU topology ({DOC_IRONWOOD}): set placement_policy to the name of a workload "
            "policy created with `gcloud compute resource-policies create workload-policy NAME --region=REGION "
            f"--type=HIGH_THROUGHPUT --accelerator-topology={topology}` and leave tpu_topology unset"
        )
        return
    if hosts == 1:
        return
    # A multi-host TPU slice node pool is exactly one slice, 0 or `hosts` nodes: GKE cannot add nodes to it, a
    # further slice is a further pool (https://cloud.google.com/kubernetes-engine/docs/concepts/tpus).
    auto = request.autoscaling or {}
    enabled, low, high = autoscaling_bounds(request)
    initial = request.initial_node_count or 0
    fix = (
        f"a multi-host TPU slice node pool holds exactly one {topology} slice of {hosts} nodes "
        "(https://cloud.google.com/kubernetes-engine/docs/concepts/tpus); for K slices create K node pools "
        "(playbooks/cluster.yml does, from planb_ondemand_slices / planb_dws_slices)"
    )
    if enabled and auto.get("total_max_node_count") is not None:
        problems.append(f"autoscaling: use max_node_count {hosts}, not total_max_node_count: {fix}")
    elif enabled and high is not None and high >= 1 and high != hosts:
        problems.append(f"max node count {high} must be {hosts}: {fix}")
    for label, value in (("initial_node_count", initial), ("min node count", low)):
        if value not in (0, hosts):
            problems.append(f"{label} {value} must be 0 or {hosts}: {fix}")


def _check_dws_policy(request: NodePoolRequest, feature: str, problems: list[str]) -> None:
    """planb's policy for flex-start and queued provisioning pools, on top of GKE's rules.

    GKE accepts all three otherwise (the tutorial's own gcloud commands send auto-repair on and no location
    policy); Google's pages recommend them, and cluster-toolkit and xpk set them the same way.
    """
    auto = request.autoscaling or {}
    if auto.get("location_policy") != "ANY":
        problems.append(
            f"{feature} needs autoscaling.location_policy ANY: planb's policy (GKE accepts BALANCED, its default), "
            "because ANY lets the autoscaler take whichever zone has the capacity when a queued request is served, "
            "as GKE's own autoscaler does for the queued pools it creates and as cluster-toolkit and xpk set "
            f"({DOC_QUEUED})"
        )
    if request.reservation_affinity != "NO_RESERVATION":
        problems.append(
            f"{feature} needs reservation_affinity NO_RESERVATION "
            f"(got {request.reservation_affinity or 'unset'}): planb's policy (GKE does not refuse another "
            "value), because flex-start capacity comes from Dynamic Workload Scheduler, not from a reservation; "
            "Google's flex-start commands use --reservation-affinity=none and cluster-toolkit requires it "
            f"({DOC_QUEUED})"
        )
    if request.auto_repair:
        problems.append(
            f"{feature} needs auto_repair false: planb's policy (GKE accepts auto-repair on), because a repair "
            "recreates the node, and every VM of a multi-host slice with it, ending the job that runs there; GKE's "
            "queued provisioning page gives that reason for --no-enable-autorepair, and cluster-toolkit and xpk turn "
            f"it off ({DOC_QUEUED})"
        )


def _check_dws(request: NodePoolRequest, problems: list[str]) -> None:
    """What flex-start and queued provisioning need."""
    enabled, low = autoscaling_bounds(request)[:2]
    features = {"flex_start": request.flex_start, "queued_provisioning": request.queued_provisioning}
    for feature, wanted in features.items():
        if not wanted:
            continue
        if not enabled:
            problems.append(f"{feature} needs autoscaling enabled")
        if low:
            problems.append(f"{feature} needs autoscaling from 0 (min node count is {low}; set it to 0)")
        if request.initial_node_count:
            problems.append(f"{feature} needs initial_node_count 0")
        if request.spot:
            problems.append(
                f"{feature} cannot use Spot VMs: its nodes are flex-start VMs, and a VM has one provisioning model "
                f"({DOC_PROVISIONING_MODELS}); set spot false, or make a separate Spot pool"
            )
    if request.flex_start or request.queued_provisioning:
        _check_dws_policy(request, "flex_start" if request.flex_start else "queued_provisioning", problems)
    facts = tpu_machine(request.machine_type or "")
    for feature, wanted in features.items():
        if wanted and facts is not None and not facts["flex_start"]:
            problems.append(
                f"{feature} is not available for TPU {facts['generation']} ({request.machine_type}): "
                f"{facts.get('flex_start_note')} ({facts.get('flex_start_url')}); "
                f"use one of {_flex_start_generations()}"
            )


def _check_config(request: NodePoolRequest, problems: list[str]) -> None:
    if request.max_run_duration is not None:
        seconds = duration_seconds(request.max_run_duration)
        if seconds is None or not 0 < seconds <= MAX_RUN_DURATION_S:
            problems.append(
                f"max_run_duration {request.max_run_duration!r} must be a duration up to 7d (e.g. 86400s, 24h, 7d)"
            )
    for taint in request.taints or []:
        if not taint.get("key") or taint.get("effect") not in TAINT_EFFECTS:
            problems.append(f"taint {taint} needs a key and an effect among NoSchedule, PreferNoSchedule, NoExecute")
    for key, value in (request.labels or {}).items():
        if not _LABEL_KEY.fullmatch(key) or len(str(value)) > 63:
            problems.append(f"label {key}={value} is not a valid Kubernetes label")
    problems += label_problems("resource_labels", request.resource_labels)


def _check_reservation(request: NodePoolRequest, problems: list[str]) -> None:
    """SPECIFIC_RESERVATION's reservation is a reservation's name or path; a reservation goes with that affinity only.

    That SPECIFIC_RESERVATION has a reservation, and a reservation an affinity, is the argument spec's (required_if,
    required_by in node_pool_spec.py).
    """
    affinity, reservation = request.reservation_affinity, request.reservation
    if affinity == "SPECIFIC_RESERVATION":
        if not RESERVATION.fullmatch(reservation or ""):
            problems.append(
                f"reservation {reservation!r} must be a reservation name (1-63 lowercase letters, digits or hyphens) "
                f"or projects/<project>/reservations/<name> ({DOC_RESERVATIONS})"
            )
    elif reservation:
        problems.append(
            f"reservation {reservation} is only consumed with reservation_affinity SPECIFIC_RESERVATION "
            f"(got {affinity or 'unset'}): set that, or drop reservation"
        )


def validate_node_pool(request: NodePoolRequest) -> None:
    """gke_node_pool's request checked before any API call: its options first, then its credential, endpoint and
    project (``Access.error``, what ``credentials.check_auth`` raises)."""
    access = request.access
    names = {"name": request.name, "cluster": request.cluster}
    problems = common_problems(names, request.location or "", access.timeout, access.poll_interval)
    if request.state == "present":
        machine = request.machine_type or ""
        if not MACHINE.fullmatch(machine):  # required with state present: the argument spec's required_if
            problems.append(f"machine_type {machine!r} must be a machine type such as ct6e-standard-4t")
        _check_autoscaling(request, problems)
        _check_tpu(request, problems)
        _check_dws(request, problems)
        _check_config(request, problems)
        _check_reservation(request, problems)
        if LOCATION.fullmatch(request.location or ""):
            where = (machine, request.location, request.node_locations, request.check_tpu_zone)
            misplaced = zone_problems(*where)
            # A pool in a zone without its TPUs is told that first; a DWS pool in a TPU zone is then held to the
            # zones GKE's flex-start page lists (Google's requirement).
            if not misplaced and (request.flex_start or request.queued_provisioning):
                misplaced = flex_start_zone_problems(*where)
            problems += misplaced
        problems += accelerator_problems(request.accelerator_type, request.accelerator_count, machine)
        version = request.cluster_version  # the cluster's, when the option gives it (node_pool.py checks GKE's own)
        problems += [
            problem
            for problem in (
                tpu_version_problem(machine, version),
                flex_start_version_problem(machine, request.flex_start, version),
                service_account_problem("node_service_account", request.node_service_account),
            )
            if problem
        ]
    raise_problems("node pool", problems)
    if access.error:
        raise GkeError(access.error)
