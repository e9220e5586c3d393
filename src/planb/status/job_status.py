"""What `planb status` knows about one RayJob (JobStatus) and its parts: the PodSets' flavors, the admission checks,
the ProvisioningRequests, the Workload's conditions; planb.status.report derives it from one look's reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from planb.catalog.profiles import PROFILES
from planb.status import goodput as goodput_
from planb.status import lifecycle, variants
from planb.status import regions as regions_
from planb.status.lifecycle import WAITING


@dataclass(frozen=True)
class PodSetInfo:
    name: str
    count: int
    flavors: dict[str, str]


@dataclass(frozen=True)
class CheckInfo:
    name: str
    state: str
    message: str
    #: Kueue's count of this check's retries (status.admissionChecks[].retryCount).
    retry_count: int = 0
    #: Kueue's backoff before the next attempt, while the check is in Retry.
    requeue_after: int | None = None


@dataclass(frozen=True)
class RequestInfo:
    name: str
    state: str
    reason: str
    message: str
    #: The attempt number Kueue put at the end of the name.
    attempt: int | None = None
    #: How long DWS kept it queued: Accepted until Provisioned, or so far (planb's own count).
    queued_for: str = ""
    #: The pods it asks for (Kueue: the worker group's replicas x hosts).
    pods: int = 0


@dataclass(frozen=True)
class ConditionInfo:
    """One of the Workload's conditions, as Kueue last set it (a condition keeps only its latest transition)."""

    type: str
    status: str
    reason: str
    #: Its lastTransitionTime (seconds since the epoch; None when Kueue has not written one).
    at: float | None


@dataclass
class JobStatus:
    """Everything `planb status` knows about one RayJob."""

    namespace: str
    name: str
    queue: str
    suspended: bool
    workload: str | None = None
    state: str = "no Workload yet"
    reason: str = ""
    podsets: list[PodSetInfo] = field(default_factory=list)
    checks: list[CheckInfo] = field(default_factory=list)
    requests: list[RequestInfo] = field(default_factory=list)
    pods: list[tuple[str, str, str]] = field(default_factory=list)  # (pod, phase, node)
    nodes: dict[str, str] = field(default_factory=dict)  # node -> pool
    node_plans: dict[str, str] = field(default_factory=dict)  # node -> plan of its pool (planb.dev/plan)
    ray_status: str = ""
    #: The Workload's spec.active (Kueue deactivates a workload whose check it rejects).
    active: bool = True
    #: How long each phase took: queued, provisioning, admitted.
    phases: str = ""
    #: Per provisioning check: the attempt and the retries left.
    retries: dict[str, lifecycle.Retries] = field(default_factory=dict)
    #: For a deactivated Workload: why, and the command that re-activates it (one line).
    deactivated: str = ""
    #: Set when planb's failover moved the job off plan A: "moved to plan B after 10m: ...".
    moved: str = ""
    #: Per ResourceFlavor: the plan it selects (its nodeLabels' planb.dev/plan), so the plan is named too.
    flavor_plans: dict[str, str] = field(default_factory=dict)
    #: Why the chart kept this multi-slice job off the DWS plans (the RayJob's planb.dev/off-dws annotation).
    off_dws: str = ""
    #: A concurrent-ladder job's variants and migrations (None for a job of a sequential ladder).
    concurrent: variants.Variants | None = None
    #: The shape the job's workers select (GKE's accelerator labels of their nodeSelector in the RayJob).
    shape: dict[str, str] = field(default_factory=dict)
    #: The job's profile, as the catalog names that shape ('-' when its workers select no accelerator).
    profile: str = "-"
    #: The ClusterQueue behind the job's LocalQueue ('' when it cannot be read).
    cluster_queue: str = ""
    #: The job's team: its ClusterQueue when the queues release made it for a team (queues.teams), else its namespace.
    team: str = ""
    #: The shapes that queue's plan flavors select (every ResourceFlavor's when the queue cannot be read).
    cluster_shapes: list[dict[str, str]] = field(default_factory=list)
    #: Their profiles ('-' when the flavors select no accelerator, or cannot be read).
    cluster_profile: str = "-"
    #: Goodput and its terms per run (computed only when asked: it reads the submitter's log and the Events).
    goodput: goodput_.Goodput | None = None
    #: The Workload's conditions (the parent's, for a concurrent-ladder job).
    conditions: list[ConditionInfo] = field(default_factory=list)
    #: When planb's failover moved the job off plan A (its planb.dev/failover-moved-at annotation).
    moved_at: float | None = None
    #: On a MultiKueue manager: which region runs the job, or how each region's copy stands (planb.status.regions).
    regions: regions_.Dispatch | None = None

    @property
    def failed(self) -> bool:
        """The job cannot go on without someone: Kueue deactivated its Workload, or KubeRay reports it Failed."""
        return not self.active or self.ray_status.startswith("Failed")

    @property
    def wrong_shape(self) -> bool:
        """The job's workers select a shape that none of the queue's plan flavors selects."""
        return bool(self.shape and self.cluster_shapes and self.shape not in self.cluster_shapes)

    @property
    def shape_note(self) -> str:
        """For a pending job of the wrong shape, why it waits, in one line ('' otherwise)."""
        if not self.wrong_shape or self.state != "Pending":
            return ""
        queue = f"ClusterQueue {self.cluster_queue}'s" if self.cluster_queue else "the cluster's"
        kueue = f' (Kueue: "{self.reason}")' if self.reason and self.reason != WAITING else ""
        fix = self.cluster_profile if self.cluster_profile in PROFILES else ""
        return (
            f"wrong shape: the job is {self.profile} but {queue} flavors select {self.cluster_profile}, so no flavor "
            f"matches its workers and Kueue never admits it{kueue}"
            + (f"; install it with -f charts/planb/values/{fix}.yaml (or `planb values {fix}`)" if fix else "")
        )

    @property
    def plan(self) -> str:
        """The plan of the accelerator flavor ('-' before admission, or for a flavor without a plan label)."""
        return self.flavor_plans.get(self.accelerator_flavor, "") or "-"

    @property
    def accelerator_flavor(self) -> str:
        """The flavor of the PodSet that holds accelerators (else of the last PodSet)."""
        for ps in self.podsets:
            for resource, flavor in ps.flavors.items():
                if resource in ("google.com/tpu", "nvidia.com/gpu"):
                    return flavor
        return next((f for ps in self.podsets for f in ps.flavors.values()), "-")

    @property
    def node_pools(self) -> list[str]:
        return sorted(set(self.nodes.values()))
