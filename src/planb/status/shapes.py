"""A job's shape and its queue's: GKE's accelerator labels on the workers' nodeSelector and on the plan flavors, and
the catalog's profile of each (what `planb status` compares when a job of another shape waits)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from planb.catalog import gpu, tpu
from planb.catalog.profiles import PROFILES
from planb.kube import Obj

#: GKE's accelerator node labels, a profile's shape: what the job's workers select (charts/planb
#: planb.workerNodeSelector) and what the queues chart's plan flavors select beside the plan (planb.profileLabels).
SHAPE_LABELS = (tpu.ACCELERATOR_LABEL, tpu.TOPOLOGY_LABEL, gpu.ACCELERATOR_LABEL)
#: What Kueue writes for a flavor whose nodeLabels a PodSet's nodeSelector contradicts (kueue v0.19.2,
#: pkg/scheduler/flavorassigner/flavorassigner.go, checkFlavorForPodSets: "flavor %s doesn't match node affinity";
#: the scheduler puts Assignment.Message(), "couldn't assign flavors to pod set <name>: <reasons>", in the
#: Workload's QuotaReserved=False condition, pkg/scheduler/scheduler.go).
NO_FLAVOR_MATCH = "doesn't match node affinity"
#: The profile the chart's values name, on every object it renders (charts/planb planb.labels).
PROFILE_LABEL = "planb.dev/profile"
#: The label the chart puts on a team's ClusterQueue and LocalQueues (queues.teams), its value the team.
TEAM_LABEL = "planb.dev/team"


def shape_of(labels: Mapping[str, Any]) -> dict[str, str]:
    """GKE's accelerator labels among ``labels`` (a nodeSelector, a flavor's nodeLabels)."""
    return {key: str(labels[key]) for key in SHAPE_LABELS if key in labels}


def profile_of(shape: dict[str, str], named: str = "") -> str:
    """The catalog's profile of a shape: ``named`` (the object's planb.dev/profile) when that profile has this shape,
    else every profile that has it (GPU machines of one GPU share a label: 'a or b'), else the labels themselves."""
    if not shape:
        return "-"
    if named in PROFILES and PROFILES[named].node_selector == shape:
        return named
    names = [p.name for p in PROFILES.values() if p.node_selector == shape]
    return " or ".join(names) if names else ",".join(f"{k}={v}" for k, v in sorted(shape.items()))


def job_shape(rayjob: Obj) -> dict[str, str]:
    """The accelerator labels the RayJob's worker groups select (the first group that selects any)."""
    groups = ((rayjob.get("spec") or {}).get("rayClusterSpec") or {}).get("workerGroupSpecs") or []
    for group in groups:
        shape = shape_of(((group.get("template") or {}).get("spec") or {}).get("nodeSelector") or {})
        if shape:
            return shape
    return {}


@dataclass(frozen=True)
class Queues:
    """What the job's queue selects: LocalQueue -> ClusterQueue -> its flavors' shapes."""

    local: dict[tuple[str, str], str]
    flavors_of: dict[str, list[str]]
    #: ResourceFlavor -> its shape and that shape's profile.
    shapes: dict[str, tuple[dict[str, str], str]]
    #: The ClusterQueues the queues release made for a team (charts/planb queues.teams; their label planb.dev/team).
    teams: frozenset[str] = frozenset()

    def team(self, namespace: str, cluster_queue: str) -> str:
        """The job's team: its ClusterQueue when that is a team's, else its namespace."""
        return cluster_queue if cluster_queue in self.teams else namespace

    def of(self, namespace: str, queue: str) -> tuple[str, list[dict[str, str]], str]:
        """The ClusterQueue of LocalQueue ``namespace/queue``, the distinct shapes of its flavors and their profiles;
        when either queue cannot be read, '' and the shapes of every flavor."""
        cluster_queue = self.local.get((namespace, queue), "")
        names = self.flavors_of.get(cluster_queue) if cluster_queue else None
        if names is None:
            cluster_queue, names = "", sorted(self.shapes)
        shapes: list[dict[str, str]] = []
        named: list[str] = []
        for name in names:
            shape, profile = self.shapes.get(name, ({}, "-"))
            if shape and shape not in shapes:
                shapes.append(shape)
                named.append(profile)
        return cluster_queue, shapes, " and ".join(named) or "-"


def queues(local_queues: list[Obj], cluster_queues: list[Obj], flavors: list[Obj]) -> Queues:
    """What each LocalQueue selects, from the LocalQueues, ClusterQueues and ResourceFlavors the caller may read."""
    local = {
        (q["metadata"].get("namespace", ""), q["metadata"]["name"]): str((q.get("spec") or {}).get("clusterQueue", ""))
        for q in local_queues
    }
    flavors_of = {
        cq["metadata"]["name"]: [
            str(f.get("name"))
            for group in (cq.get("spec") or {}).get("resourceGroups") or []
            for f in group.get("flavors") or []
        ]
        for cq in cluster_queues
    }
    shapes = {}
    for flavor in flavors:
        shape = shape_of((flavor.get("spec") or {}).get("nodeLabels") or {})
        named = (flavor["metadata"].get("labels") or {}).get(PROFILE_LABEL, "")
        shapes[flavor["metadata"]["name"]] = (shape, profile_of(shape, named))
    teams = frozenset(
        cq["metadata"]["name"] for cq in cluster_queues if TEAM_LABEL in (cq["metadata"].get("labels") or {})
    )
    return Queues(local, flavors_of, shapes, teams)
