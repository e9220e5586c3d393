"""The regions keeper's options (`planb regions keep`'s flags) and its log line: what the keeper and its parts are
given when built (planb.regions.keeper.tick)."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

from planb.catalog import profiles, training
from planb.printable import printable
from planb.regions.access.connection import KUEUE
from planb.regions.keeper.grace import RELEASE_MARGIN_S

RAY = "/apis/ray.io/v1"
#: The most characters of one region line the keeper says once (planb.regions.keeper.leftovers.cap).
SAID_CHARS = 4096
#: The default release_after: the largest terminationGracePeriodSeconds of the chart's workers over the catalog's
#: profiles (planb.catalog.training; 75 s, its preStop save included) plus the margin; a job whose pods are given more
#: (job.workers.terminationGracePeriodSeconds) is waited for longer (planb.regions.keeper.grace).
RELEASE_AFTER_S = float(max(training.grace_period_seconds(p) for p in profiles.names()) + RELEASE_MARGIN_S)


def say(line: str) -> None:
    """A line of `planb regions keep`'s log (stderr), timed and escaped: the keeper's and its dispatcher's."""
    print(
        f"{time.strftime('%H:%M:%S')} planb regions keep: {printable(line, one_line=True)}", file=sys.stderr, flush=True
    )


@dataclass(frozen=True)
class KeeperSettings:
    #: The MultiKueueConfig planb's multikueue role writes, and its AdmissionCheck (the role names both alike).
    config: str = "planb-regions"
    admission_check: str = "planb-regions"
    #: Seconds a region may be not Active before it is quarantined: Kueue's own workerLostTimeout, 15 min
    #: (kubernetes-sigs/kueue@v0.19.2 apis/config/v1beta2/defaults.go#L50, waited in
    #: pkg/controller/admissionchecks/multikueue/workload.go#L551-L560). planb's policy: not less, because a quarantine
    #: makes Kueue retry at once (workload.go#L568), and a zonal control plane can be out longer than 5 min (an
    #: upgrade, an outage) while the region's nodes still run the job.
    lost_after: float = 900.0
    #: Seconds an evicted Workload may hold its quota, its RayJob suspended, before the keeper releases it, counted
    #: from the eviction and from the last tick at which a region still held its RayJob or RayCluster: past the
    #: largest grace period of the chart's workers, whose pods outlive their RayCluster (`RELEASE_AFTER_S`).
    release_after: float = RELEASE_AFTER_S
    #: Seconds past a job's own largest grace period the keeper waits as well (planb.regions.keeper.grace).
    release_margin: float = RELEASE_MARGIN_S
    #: The manager Kueue's ``multiKueue.origin``: the keeper deletes in a region only what carries it. Empty: the one
    #: the regions playbook wrote in the keeper's ConfigMap (the keeper acts on nothing without one).
    origin: str = ""
    #: Kueue's namespace on the manager, where the keeper's ConfigMap lives.
    namespace: str = "kueue-system"

    @property
    def config_path(self) -> str:
        """The MultiKueueConfig's path on the manager."""
        return f"{KUEUE}/multikueueconfigs/{self.config}"

    @property
    def state_path(self) -> str:
        """The keeper's ConfigMap's path on the manager (``<config>-keeper`` in Kueue's namespace)."""
        return f"/api/v1/namespaces/{self.namespace}/configmaps/{self.config}-keeper"
