"""What GKE fills in and adds by itself to a node pool it creates, as the emulator stores it.

Two kinds of server-side additions, each with its source (rules.py holds what GKE *refuses*):

* **Defaults** for fields a ``nodePools.create`` body omits. Where Google documents nothing, the value
  follows what GKE's own tools show (gcloud's client defaults, GKE's public cluster autoscaler) and the
  comment says so; docs/local-mode.md's "Every known difference from Google" repeats it.
* **GKE's own taints and labels** (``config.taints``, ``config.labels``, ``config.resourceLabels``), which a
  client never sent: a client that diffs the whole map would see them as drift.
"""

from __future__ import annotations

from typing import Any

from planb.catalog import gpu, tpu

Body = dict[str, Any]

#: GKE's public cluster autoscaler (GoogleCloudPlatform/cluster-autoscaler, "a version of the Kubernetes
#: Cluster Autoscaler used in GKE") at the commit this module cites.
_GKE_CA = "https://github.com/GoogleCloudPlatform/cluster-autoscaler/blob/7d250507339b3a7583b380349f217ea191ff15ff/"
#: "The default value is set to BALANCED ... in case the control plane defaulting fails to set the location
#: policy": the control plane defaults autoscaling.locationPolicy to BALANCED.
GKE_CA_LOCATION_POLICY = _GKE_CA + "pkg/cloudprovider/gke/gke_manager.go#L2584-L2594"
#: The autoscaler's fixtures of node pools as GKE's API returns them: a TPU pool's config.taints holds
#: google.com/tpu and config.labels the TPU labels (L802-827); a flex-start pool's config.labels holds
#: gke-flex-start and gke-provisioning (L788-800).
GKE_CA_POOL_FIXTURES = _GKE_CA + "pkg/test/integration/config.go#L788-L827"
#: gcloud (Google Cloud SDK 528.0.0) sends management.autoRepair/autoUpgrade true unless told otherwise:
#: lib/googlecloudsdk/command_lib/container/container_command_util.py L274-298. GKE's API reference does not
#: state the server default when ``management`` is omitted.
GCLOUD_MANAGEMENT_DEFAULT = "https://cloud.google.com/sdk/gcloud/reference/container/node-pools/create"
#: Compute Engine: a VM without reservation affinity consumes any matching reservation (ANY_RESERVATION).
COMPUTE_RESERVATION_DEFAULT = "https://cloud.google.com/compute/docs/instances/reservations-consume"
#: "By default, TPU slice nodes have the google.com/tpu taint" (About TPUs in GKE).
DOC_TPU_TAINT = "https://cloud.google.com/kubernetes-engine/docs/concepts/tpus"
#: GKE's TPU workload manifests select nodes by gke-tpu-accelerator and gke-tpu-topology.
DOC_TPU_WORKLOADS = "https://cloud.google.com/kubernetes-engine/docs/how-to/tpus"
#: --flex-start with --enable-queued-provisioning makes GKE "add the cloud.google.com/gke-queued taint to the
#: node pool".
DOC_QUEUED_TAINT = "https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest"
#: GKE taints GPU nodes nvidia.com/gpu=present:NoSchedule.
DOC_GPU_TAINT = "https://cloud.google.com/kubernetes-engine/docs/how-to/gpus"

#: GKE's Spot VM page: GKE adds cloud.google.com/gke-spot=true (and, from 1.25.5-gke.2500,
#: cloud.google.com/gke-provisioning=spot) to nodes that use Spot VMs. Shown in the pool's config.labels as GKE's
#: fixtures show a flex-start pool's gke-flex-start / gke-provisioning labels (GKE_CA_POOL_FIXTURES).
DOC_SPOT_LABELS = "https://cloud.google.com/kubernetes-engine/docs/how-to/spot-vms"

#: container v1 Cluster.releaseChannel: "If left unspecified on cluster creation and a version is specified, the cluster
#: is enrolled in the most mature release channel where the version is available (first checking STABLE, then
#: REGULAR, and finally RAPID). Otherwise, if no release channel configuration and no version is specified, the
#: cluster is enrolled in the REGULAR channel with its default version." Only a body that names a channel (or
#: ``UNSPECIFIED``, no channel) keeps its own.
DOC_RELEASE_CHANNEL_DEFAULT = "https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters#Cluster.FIELDS.release_channel"
#: The minor versions each channel offers, most mature first, from GKE's release notes' "Current versions" table
#: ("Available minor versions": Stable 1.32 to 1.33, Regular 1.32 to 1.34, Rapid 1.32 to 1.35;
#: https://cloud.google.com/kubernetes-engine/docs/release-notes). By minor only: which patches a channel offers,
#: and how the table moves over time, is not modelled.
CHANNEL_MINORS: tuple[tuple[str, tuple[int, int]], ...] = (
    ("STABLE", (32, 33)),
    ("REGULAR", (32, 34)),
    ("RAPID", (32, 35)),
)

#: Shielded GKE Nodes: "enabled by default" on clusters GKE creates (version 1.18 and later), so a create body without
#: shieldedNodes gets enabled true; a pool's secure boot is off unless the pool turns it on, integrity monitoring on
#: (gcloud's --shielded-integrity-monitoring: "Enabled by default").
DOC_SHIELDED = "https://cloud.google.com/kubernetes-engine/docs/how-to/shielded-gke-nodes"
GCLOUD_INTEGRITY_DEFAULT = "https://cloud.google.com/sdk/gcloud/reference/container/node-pools/create"

TPU_TAINT = {"key": "google.com/tpu", "value": "present", "effect": "NO_SCHEDULE"}
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}
QUEUED_TAINT = {"key": "cloud.google.com/gke-queued", "value": "true", "effect": "NO_SCHEDULE"}


def fill_node_pool(pool: Body) -> None:
    """Fill the defaults GKE applies to what a nodePools.create body omits (in place)."""
    config = pool.setdefault("config", {})
    config.setdefault("machineType", "e2-medium")
    config.setdefault("diskSizeGb", 100)
    config.setdefault("imageType", "COS_CONTAINERD")
    # Not documented by GKE (its API reference gives no server default for `management`); gcloud sends both true
    # for COS/Ubuntu images unless --no-enable-autorepair / --no-enable-autoupgrade (GCLOUD_MANAGEMENT_DEFAULT).
    management = pool.setdefault("management", {})
    management.setdefault("autoRepair", True)
    management.setdefault("autoUpgrade", True)
    # GKE's control plane defaults the location policy to BALANCED (GKE_CA_LOCATION_POLICY); gcloud sends one
    # only with --location-policy, so the tutorial's pools get BALANCED.
    autoscaling = pool.get("autoscaling")
    if autoscaling and autoscaling.get("enabled"):
        autoscaling.setdefault("locationPolicy", "BALANCED")
    # Not documented by GKE for node pools: Compute Engine's default for a VM is to consume any matching
    # reservation (COMPUTE_RESERVATION_DEFAULT), so the emulator reports ANY_RESERVATION.
    config.setdefault("reservationAffinity", {"consumeReservationType": "ANY_RESERVATION"})
    # DOC_SHIELDED, GCLOUD_INTEGRITY_DEFAULT: secure boot off (false, which proto3 JSON leaves out), integrity on.
    config.setdefault("shieldedInstanceConfig", {"enableIntegrityMonitoring": True})


def fill_cluster(cluster: Body) -> None:
    """Fill what GKE applies to a clusters.create body that omits it (in place): Shielded GKE Nodes (DOC_SHIELDED)."""
    cluster.setdefault("shieldedNodes", {"enabled": True})


def _add_taint(config: Body, taint: dict[str, str]) -> None:
    taints = config.setdefault("taints", [])
    if not any(t.get("key") == taint["key"] and t.get("effect") == taint["effect"] for t in taints):
        taints.append(dict(taint))


def add_gke_owned(pool: Body, policy_topology: str = "") -> None:
    """Add the taints, node labels and resource labels GKE puts on a pool it creates (in place).

    ``policy_topology``: the acceleratorTopology of the workload policy the pool's placementPolicy.policyName
    names (gke_emulator.resource_policies), '' for none. A key the client set itself is left as the client set it.
    """
    config = pool.setdefault("config", {})
    machine_type = str(config.get("machineType") or "")
    flex_start = bool(config.get("flexStart"))
    queued = bool((pool.get("queuedProvisioning") or {}).get("enabled"))
    labels = config.setdefault("labels", {})
    found = tpu.find_machine(machine_type)
    if found is not None:
        generation, machine = found
        topology = str((pool.get("placementPolicy") or {}).get("tpuTopology") or policy_topology)
        _add_taint(config, TPU_TAINT)  # DOC_TPU_TAINT
        # GKE_CA_POOL_FIXTURES: a TPU pool's config.labels as GKE returns them. A pool placed by a workload
        # policy (TPU7x) has no tpuTopology; its topology is the policy's acceleratorTopology, and its nodes
        # carry it as gke-tpu-topology like any TPU slice's nodes: the TPU workload manifests of GKE's "Deploy TPU
        # workloads in GKE Standard" (DOC_TPU_WORKLOADS), TPU7x's included, select nodes by
        # cloud.google.com/gke-tpu-accelerator and cloud.google.com/gke-tpu-topology.
        labels.setdefault(tpu.ACCELERATOR_LABEL, generation.gke_accelerator)
        if topology:
            labels.setdefault(tpu.TOPOLOGY_LABEL, topology)
        labels.setdefault("cloud.google.com/gke-accelerator-count", str(machine.chips_per_vm))
        # Resource labels: seen only in a third-party `describe` of a TPU7x flex-start queued pool; Google
        # documents no goog-gke-* node pool labels.
        resource = config.setdefault("resourceLabels", {})
        resource.setdefault("goog-gke-accelerator-type", generation.gke_accelerator)
        multi_host = topology in machine.topologies and tpu.TpuSlice(generation, machine_type, topology).multi_host
        policy = bool((pool.get("placementPolicy") or {}).get("policyName"))
        resource.setdefault("goog-gke-tpu-node-pool-type", "multi-host" if multi_host or policy else "single-host")
        if flex_start:
            resource.setdefault("goog-gke-node-pool-provisioning-model", "flex-start")
    elif gpu.find_machine(machine_type) is not None:
        _add_taint(config, GPU_TAINT)  # DOC_GPU_TAINT
    if flex_start:
        # GKE_CA_POOL_FIXTURES (flex-start pool); the provisioningrequest page selects nodes by gke-flex-start.
        labels.setdefault("cloud.google.com/gke-flex-start", "true")
        labels.setdefault("cloud.google.com/gke-provisioning", "flex-start")
    if config.get("spot"):
        # DOC_SPOT_LABELS. No taint: GKE adds none to a Standard Spot pool; the page recommends one, which
        # planb's spot plans send themselves (cloud.google.com/gke-spot=true:NoSchedule).
        labels.setdefault("cloud.google.com/gke-spot", "true")
        labels.setdefault("cloud.google.com/gke-provisioning", "spot")
    if queued:
        _add_taint(config, QUEUED_TAINT)  # DOC_QUEUED_TAINT
    if not labels:
        config.pop("labels")


def release_channel(requested_version: object, version: str) -> Body:
    """The channel GKE enrolls a cluster created without ``releaseChannel`` in (DOC_RELEASE_CHANNEL_DEFAULT).

    ``requested_version`` is the body's initialClusterVersion (none, or "latest"/"-": GKE's default, so REGULAR);
    ``version`` the one it resolved to: the most mature channel whose minors hold it, else RAPID.
    """
    if not requested_version or str(requested_version) in ("latest", "-"):
        return {"channel": "REGULAR"}
    minor = int(version.split(".")[1])
    for channel, (oldest, newest) in CHANNEL_MINORS:
        if oldest <= minor <= newest:
            return {"channel": channel}
    return {"channel": "RAPID"}
