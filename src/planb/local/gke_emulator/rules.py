"""GKE's documented validation of node pools, as the emulator applies it server-side, and what a refusal is
(`RuleViolation`, `check`); a cluster's own rules are ``gke_emulator.cluster_rules``.

Each rule names the GKE document it follows. The Ansible modules validate the same things
client-side (and planb's own policy on top, e.g. version >= 1.34); this module is what *GKE*
would answer, so the emulator refuses what GKE refuses with a 400 INVALID_ARGUMENT.

TPU facts (which machine types are TPU types, the topologies each forms, hosts per slice, which
generations offer flex-start) are the accelerator catalog's, ``planb.catalog.tpu``; this module
holds only the rules. How a GKE version is read and compared, and the versions GKE documents for TPU node
pools, are ``planb.catalog.versions``', the one copy the planb.gke collection's validation also runs.
"""

from __future__ import annotations

import re
from typing import Any

from planb.catalog import tpu
from planb.catalog.versions import DOC_TPU_FLEX as DOC_TPU_FLEX
from planb.catalog.versions import TPU_FLEX_START_MIN as TPU_FLEX_START_MIN
from planb.catalog.versions import TPU_MIN_VERSION as TPU_MIN_VERSION
from planb.catalog.versions import parse_version as parse_version
from planb.catalog.versions import version_at_least as version_at_least
from planb.catalog.versions import version_text

DOC_PLAN_TPUS = "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus"
DOC_FLEX_START = "https://cloud.google.com/kubernetes-engine/docs/concepts/flex-start-vms"
DOC_QUEUED = "https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest"
DOC_NAMES = "https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters"
#: "About TPUs in GKE": a multi-host TPU slice node pool is atomic and immutable, one slice per pool.
DOC_TPUS = "https://cloud.google.com/kubernetes-engine/docs/concepts/tpus"
#: GKE's cluster autoscaler (GoogleCloudPlatform/cluster-autoscaler, the one GKE runs) at 7d25050:
_GKE_CA = "https://github.com/GoogleCloudPlatform/cluster-autoscaler/blob/7d250507339b3a7583b380349f217ea191ff15ff/"
#: ... a multi-host TPU pool it creates gets max = the hosts of one slice,
GKE_AUTOSCALER_TPU_MAX = _GKE_CA + "pkg/cloudprovider/gke/gke_cloud_provider_impl.go#L617-L624"
#: ... a multi-host TPU group is resized to 0 or its max only ("zero-or-max": ZeroOrMaxNodeScaling from
#: GkeMig.ResizeAtomically(), true for a multi-host TPU MIG at L2153-L2159; not orchestrator.go's round-up, which an
#: experiment flag keeps off by default),
GKE_AUTOSCALER_ZERO_OR_MAX = _GKE_CA + "pkg/cloudprovider/gke/gke_cloud_provider_impl.go#L1914-L1918"
#: ... and a group at its max is skipped for a ProvisioningRequest ("max size reached").
GKE_AUTOSCALER_MAX_REACHED = _GKE_CA + "pkg/provisioningrequests/scaleup/orchestrator.go#L535-L545"
#: GKE's answer to a multi-host pool sized by totalMaxNodeCount, quoted in a public report.
GKE_TPU_SIZE_ERROR = "https://github.com/vllm-project/ci-infra/pull/545"

#: maxRunDuration's default and cap: 7 days.
MAX_RUN_DURATION_S = 7 * 24 * 3600
#: "Ironwood (TPU7x) is available in GKE Standard clusters that run version 1.34.0-gke.2201000 and later".
DOC_IRONWOOD = tpu.IRONWOOD_URL

Body = dict[str, Any]

#: Compute Engine: a VM has one provisioning model (standard, Spot, flex-start, ...). Queued provisioning and
#: flex-start pools get flex-start VMs, so a pool cannot also be Spot.
DOC_PROVISIONING_MODELS = "https://cloud.google.com/compute/docs/instances/provisioning-models"
#: GKE: Spot VMs in Standard node pools (config.spot; the cloud.google.com/gke-spot node label).
DOC_SPOT = "https://cloud.google.com/kubernetes-engine/docs/how-to/spot-vms"


class RuleViolation(Exception):
    """A request GKE would refuse; `source` is the document the rule comes from."""

    def __init__(self, message: str, source: str) -> None:
        super().__init__(f"{message} (see {source})")
        self.source = source


#: GKE names TPU machine types ct<version>...-<n>t (ct4p-hightpu-4t, ct6e-standard-4t) or
#: tpu<version>...-<n>t (tpu7x-standard-4t). One the catalog does not hold is not offered here,
#: e.g. TPU v3's ct3-hightpu-4t and ct3p-hightpu-4t, which the catalog does not carry.
_TPU_MACHINE_NAME = re.compile(r"^(ct|tpu)[0-9]")

_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$")


def tpu_machine(machine_type: str) -> tuple[tpu.TpuGeneration, tpu.TpuMachineType] | None:
    """The catalog's TPU generation and machine type, or None for a CPU/GPU machine.

    A machine type is a TPU machine type iff the catalog holds it; a name shaped like GKE's TPU
    machine types (ct*/tpu*) that the catalog does not hold is refused as not offered.
    """
    found = tpu.find_machine(machine_type)
    check(
        found is not None or not _TPU_MACHINE_NAME.match(machine_type),
        f"Machine type {machine_type!r} is not an offered TPU machine type; offered: "
        + ", ".join(m.name for g in tpu.GENERATIONS for m in g.machine_types),
        DOC_PLAN_TPUS,
    )
    return found


def check(condition: bool, message: str, source: str) -> None:
    if not condition:
        raise RuleViolation(message, source)


def check_name(kind: str, name: str) -> None:
    """Cluster and node pool names: RFC 1035 label, at most 40 characters."""
    check(
        bool(_NAME.fullmatch(name)),
        f"{kind} name {name!r} must start with a letter, use only lowercase letters, digits and "
        "hyphens, end with a letter or digit and be at most 40 characters",
        DOC_NAMES,
    )


def _autoscaling_rules(pool: Body, label: str, source: str) -> None:
    """What GKE refuses in a flex-start or queued provisioning pool: autoscaling off, a minimum or an initial size.

    GKE answers "Flex start node pools require autoscaling enabled." and "... require initial node count to be set
    to 0." Not refused, because Google documents them only as recommendations
    and the tutorial's own `gcloud container node-pools create --flex-start --enable-queued-provisioning` (which GKE
    accepts) sends neither: auto-repair off (DOC_QUEUED: "--no-enable-autorepair ... disables automatic repairs,
    which could disrupt workloads"), location policy ANY (DOC_QUEUED's command uses it; GKE's control plane
    defaults to BALANCED, see defaults.py) and reservation affinity NO_RESERVATION (the commands use
    --reservation-affinity=none). planb's modules ask for all three as planb's policy (module_utils/validate.py).
    COMPACT placement with queued provisioning is not refused either: GKE documents no such refusal, and
    Google's cluster-toolkit (since bf7c3e1d) and xpk send COMPACT with queued TPU pools.
    """
    autoscaling = pool.get("autoscaling") or {}
    check(bool(autoscaling.get("enabled")), f"{label} requires autoscaling to be enabled", source)
    minimum = int(autoscaling.get("minNodeCount") or 0) + int(autoscaling.get("totalMinNodeCount") or 0)
    check(minimum == 0, f"{label} requires the minimum node count to be 0", source)
    check(int(pool.get("initialNodeCount") or 0) == 0, f"{label} requires initialNodeCount 0", source)


def _check_tpu_generation(
    pool: Body, found: tuple[tpu.TpuGeneration, tpu.TpuMachineType], cluster_version: str
) -> None:
    """Per-generation rules: minimum GKE version, TPU7x's workload policy, which generations offer flex-start."""
    generation, machine = found
    machine_type = machine.name
    minimum = TPU_MIN_VERSION.get(generation.name)
    if minimum is not None:
        check(
            cluster_version == "latest" or version_at_least(cluster_version, minimum[0]),
            f"TPU {generation.name} node pools need GKE {version_text(minimum[0])} or later on Standard clusters, "
            f"the cluster runs {cluster_version}",
            minimum[1],
        )
    placement = pool.get("placementPolicy") or {}
    topology = str(placement.get("tpuTopology") or "")
    if generation.uses_placement_policy and topology in machine.topologies:
        # DOC_IRONWOOD: "Ironwood (TPU7x) uses a workload policy ... when you create multi-host TPU slice node
        # pools ... This policy replaces the --tpu-topology flag used by other TPU versions." The message opens
        # with GKE's own answer.
        check(
            not tpu.TpuSlice(generation, machine_type, topology).multi_host,
            f"Creation of a managed instance group with {machine_type} machine type with placement policy is not "
            f"supported. Use workload policy instead: a multi-host TPU {generation.name} slice takes "
            f"placementPolicy.policyName (a workload policy with acceleratorTopology {topology}) instead of "
            "placementPolicy.tpuTopology",
            DOC_IRONWOOD,
        )
    config = pool.get("config") or {}
    for asked, feature in (
        (config.get("flexStart"), "Flex-start"),
        ((pool.get("queuedProvisioning") or {}).get("enabled"), "Queued provisioning"),
    ):
        if asked:
            check(
                generation.flex_start,
                f"{feature} is not available for TPU {generation.name}: {generation.flex_start_note}",
                generation.flex_start_url or DOC_TPU_FLEX,
            )


def check_one_slice(pool: Body, topology: str, hosts: int) -> None:
    """A multi-host TPU slice node pool is exactly one slice: its size is 0 or the slice's hosts, never more.

    "About TPUs in GKE" (DOC_TPUS): a multi-host TPU slice node pool is atomic and immutable, "you can't
    add nodes to it ... To add a TPU slice to a GKE cluster, you must create a new node pool", and it
    "always has either <hosts> nodes or zero nodes". GKE's autoscaler resizes such a group to 0 or its
    max only (GKE_AUTOSCALER_ZERO_OR_MAX) and, when it creates one itself, sets max = hosts of one slice
    (GKE_AUTOSCALER_TPU_MAX). GKE validates the per-zone maximum; with totalMaxNodeCount instead that
    maximum is 0, which GKE answers with the same message (GKE_TPU_SIZE_ERROR, a public report of it).
    So: autoscaling.maxNodeCount == hosts, no totalMaxNodeCount, minNodeCount and initialNodeCount 0 or
    hosts. A queued-provisioning pool of this kind holds one ProvisioningRequest at a time: the
    autoscaler skips a node group at its max (GKE_AUTOSCALER_MAX_REACHED), so K concurrent DWS slices
    are K pools.
    """
    autoscaling = pool.get("autoscaling") or {}
    if autoscaling.get("enabled"):
        per_zone = int(autoscaling.get("maxNodeCount") or 0)
        check(
            per_zone == hosts and not int(autoscaling.get("totalMaxNodeCount") or 0),
            f'Maximum node count {per_zone} is not a valid size of TPU pod slice with topology "{topology}": a '
            f"multi-host TPU slice node pool holds exactly one slice, set autoscaling.maxNodeCount to {hosts} "
            "(not totalMaxNodeCount) and create another node pool for each further slice",
            DOC_TPUS,
        )
        minimum = int(autoscaling.get("minNodeCount") or 0) + int(autoscaling.get("totalMinNodeCount") or 0)
        check(
            minimum in (0, hosts),
            f'Minimum node count {minimum} is not a valid size of TPU pod slice with topology "{topology}": use 0 '
            f"or {hosts}",
            DOC_TPUS,
        )
    initial = int(pool.get("initialNodeCount") or 0)
    check(
        initial in (0, hosts),
        f'Node count {initial} is not a valid size of TPU pod slice with topology "{topology}": use 0 or {hosts}',
        DOC_TPUS,
    )


def check_node_pool(pool: Body, cluster_version: str) -> None:
    """What GKE refuses in nodePools.create (the subset planb uses)."""
    check_name("Node pool", str(pool.get("name", "")))
    config = pool.get("config") or {}
    machine_type = str(config.get("machineType") or "e2-medium")
    found = tpu_machine(machine_type)
    topology = str((pool.get("placementPolicy") or {}).get("tpuTopology") or "")
    if found is not None:
        _check_tpu_generation(pool, found, cluster_version)
    if topology:
        check(found is not None, f"tpuTopology is only valid for TPU machine types, not {machine_type}", DOC_PLAN_TPUS)
        assert found is not None
        generation, machine = found
        check(
            topology in machine.topologies,
            f"Topology {topology!r} is not offered for machine type {machine_type} (TPU {generation.name}); "
            f"it forms: {', '.join(machine.topologies)}",
            DOC_PLAN_TPUS,
        )
        hosts = tpu.TpuSlice(generation, machine_type, topology).hosts_per_slice
        if hosts > 1:
            check_one_slice(pool, topology, hosts)
    if (pool.get("queuedProvisioning") or {}).get("enabled"):
        _autoscaling_rules(pool, "Queued provisioning", DOC_QUEUED)
    if config.get("flexStart"):
        _autoscaling_rules(pool, "Flex-start", DOC_FLEX_START)
        check(not config.get("spot") and not config.get("preemptible"), "Flex-start VMs cannot be Spot", DOC_FLEX_START)
        if found is not None:
            check(
                cluster_version == "latest" or version_at_least(cluster_version, TPU_FLEX_START_MIN),
                f"TPU flex-start needs GKE {version_text(TPU_FLEX_START_MIN)} or later, "
                f"the cluster runs {cluster_version}",
                DOC_TPU_FLEX,
            )
    if (pool.get("queuedProvisioning") or {}).get("enabled"):
        check(
            not config.get("spot") and not config.get("preemptible"),
            "Queued provisioning node pools cannot use Spot VMs: their nodes are flex-start VMs and a VM has one "
            "provisioning model",
            DOC_PROVISIONING_MODELS,
        )
    duration = str(config.get("maxRunDuration") or "")
    if duration:
        match = re.fullmatch(r"^(\d+)s$", duration)
        check(bool(match), f"maxRunDuration {duration!r} must be a duration in seconds like '86400s'", DOC_FLEX_START)
        assert match is not None
        check(
            0 < int(match.group(1)) <= MAX_RUN_DURATION_S,
            f"maxRunDuration {duration} exceeds the 7-day cap ({MAX_RUN_DURATION_S}s)",
            DOC_FLEX_START,
        )


#: GKE v1 NodeConfig, WorkloadMetadataConfig.Mode GKE_METADATA: "This feature can only be enabled if Workload
#: Identity is enabled at the cluster level" (googleapis google/container/v1/cluster_service.proto).
DOC_WORKLOAD_METADATA = "https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/NodeConfig"


def check_workload_metadata(pool: Body, cluster: Body) -> None:
    """GKE_METADATA on a pool needs Workload Identity (a workload pool) on its cluster."""
    mode = ((pool.get("config") or {}).get("workloadMetadataConfig") or {}).get("mode")
    workload_pool = (cluster.get("workloadIdentityConfig") or {}).get("workloadPool")
    check(
        mode != "GKE_METADATA" or bool(workload_pool),
        f"Node pool {pool.get('name', '')!r}: workloadMetadataConfig.mode GKE_METADATA can only be enabled if "
        "Workload Identity is enabled at the cluster level (workloadIdentityConfig.workloadPool)",
        DOC_WORKLOAD_METADATA,
    )


#: Compute Engine's constraints/compute.requireShieldedVm: "new Compute Engine VM instances can only use disk images
#: with Shielded VM options enabled", secure boot among them; GKE's nodes are such VMs, so a pool without
#: shieldedInstanceConfig.enableSecureBoot is refused where the constraint is enforced (GKE leaves secure boot off
#: unless the pool turns it on: https://cloud.google.com/kubernetes-engine/docs/how-to/shielded-gke-nodes).
DOC_REQUIRE_SHIELDED_VM = "https://cloud.google.com/resource-manager/docs/organization-policy/org-policy-constraints"


def check_shielded_vm(pool: Body, project: str, policies: Body) -> None:
    """A pool's VMs under the project's effective constraints/compute.requireShieldedVm (``policies``: the emulator's
    org policies, ``"{project}/{constraint}"`` or ``"*/{constraint}"`` to a spec). Compute Engine's refusal reads
    "Constraint constraints/compute.requireShieldedVm violated for project P. Secure Boot is not enabled in the
    'shielded_instance_config' field."; the emulator answers it when the pool is created, where GKE reports it from
    the managed instance group's create."""
    spec = policies.get(f"{project}/compute.requireShieldedVm", policies.get("*/compute.requireShieldedVm")) or {}
    enforced = any(rule.get("enforce") and not rule.get("condition") for rule in spec.get("rules") or [])
    shielded = ((pool.get("config") or {}).get("shieldedInstanceConfig") or {}).get("enableSecureBoot")
    check(
        not enforced or bool(shielded),
        f"Node pool {pool.get('name', '')!r}: Constraint constraints/compute.requireShieldedVm violated for project "
        f"{project}. Secure Boot is not enabled in the 'shielded_instance_config' field",
        DOC_REQUIRE_SHIELDED_VM,
    )
