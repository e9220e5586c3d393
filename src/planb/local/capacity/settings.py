"""The simulator's switches, kept in a JSON file so `planb local capacity set` can flip them while it runs."""

from __future__ import annotations

import fnmatch
import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from planb import paths
from planb.local.statefile import JsonSettings
from planb.local.statefile import SettingsError as SettingsError

#: GKE holds provisioned queued capacity for its request this long; the request's pods must land on
#: it meanwhile ("Run a large-scale workload with flex-start with queued provisioning":
#: https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest).
GKE_BOOKING_WINDOW_SECONDS = 600.0
#: DWS's longest run, also the default of a request without maxRunDurationSeconds (same page).
GKE_MAX_RUN_SECONDS = 7 * 24 * 3600.0
#: GKE's autoscaler backs a node group off this long after its first failed scale-up
#: (GoogleCloudPlatform/cluster-autoscaler at 7d250507, pkg/backoff/gke_mig_backoff.go L29-L30
#: InitialNodeGroupBackoffDuration, used per MIG by pkg/backoff/single_mig_backoff.go L40); planb.local.capacity.scaleup
#: has the rest of the rule.
GKE_INITIAL_BACKOFF_SECONDS = 5 * 60.0


@dataclass(frozen=True)
class Lifecycle:
    """What DWS does with the requests of one pool, or one request; None: the next level decides.

    The levels, most specific first: a request pattern, the request's pool, the global settings.
    """

    #: Seconds a request stays queued (Accepted, Provisioned=False: waiting for resources) before delivery.
    delay_seconds: float | None = None
    #: Seconds the delivered nodes wait for a pod of the request before they are taken back.
    booking_window_seconds: float | None = None
    #: Seconds after delivery at which the capacity is revoked, instead of the request's own
    #: maxRunDurationSeconds parameter.
    max_run_seconds: float | None = None
    #: Answer the request Failed instead of provisioning it.
    fail: bool | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @staticmethod
    def from_json(data: Any, where: str) -> Lifecycle:
        if not isinstance(data, dict):
            raise TypeError(f"{where} is not an object")
        unknown = set(data) - set(Lifecycle.__dataclass_fields__)
        if unknown:
            raise TypeError(f"{where} has unknown keys {sorted(unknown)}")
        for name, value in data.items():
            if name == "fail":
                if not isinstance(value, bool):
                    raise TypeError(f"{where}.fail is {value!r}, not true or false")
            elif isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
                raise TypeError(f"{where}.{name} is {value!r}, not a finite number >= 0")
        return Lifecycle(**data)


@dataclass(frozen=True)
class Resolved:
    """The lifecycle of one request after the levels are merged."""

    delay_seconds: float
    booking_window_seconds: float
    #: None: the request's maxRunDurationSeconds parameter, else GKE's 7 days.
    max_run_seconds: float | None
    fail: bool


@dataclass(frozen=True)
class Settings(JsonSettings):
    """How GKE's autoscaler and DWS behave in local mode."""

    OWNER = "the capacity simulator's"
    ON_DELETE = "the simulator goes back to its defaults; 'planb local capacity set ...' writes a new one"

    #: Seconds between a ProvisioningRequest appearing and its nodes arriving (DWS's queueing).
    provisioning_delay_seconds: float = 3.0
    #: The next N ProvisioningRequests are answered Failed=True instead of provisioned.
    fail_next: int = 0
    #: Pools whose on-demand scale-up finds no capacity (a stockout): pods stay pending.
    stockout: tuple[str, ...] = ()
    #: Seconds an autoscaled node (or slice) stays idle before it is removed.
    scale_down_after_seconds: float = 30.0
    #: Seconds between two reconcile passes when nothing changes (a ProvisioningRequest that
    #: appears or changes is answered at once: the simulator watches them).
    interval_seconds: float = 0.5
    #: Seconds provisioned nodes wait for a pod of their request before DWS takes them back.
    booking_window_seconds: float = GKE_BOOKING_WINDOW_SECONDS
    #: Spot pools to preempt: each gets the preemption notice on the next pass (then it is taken off this list).
    preempt: tuple[str, ...] = ()
    #: Seconds between a Spot preemption notice and the nodes going, for every pool; None (the default): GKE's own
    #: per pool, 30 or the 120 a pool may ask for (planb.local.capacity.spot.notice_seconds).
    spot_notice_seconds: float | None = None
    #: GKE's rollout flag ``ProvisioningRequestMultiplePodSets::Enabled`` (GoogleCloudPlatform/cluster-autoscaler
    #: pkg/experiments/flags.go L25). On, its default (feature_guard_reconciler.go L90: the failsafe is true), a
    #: request of several PodSets is scaled up like any other, all its pods in one node pool; off, the feature guard
    #: fails one that is not yet accepted with MultiplePodSetsUnsupported (feature_guard_reconciler.go L58-L73).
    provisioning_request_multiple_podsets_enabled: bool = True
    #: Seconds a queued-provisioning pool is backed off after its first failed scale-up (GKE: 300; doubled on each
    #: failure after a backoff ended, planb.local.capacity.scaleup.NodeGroupBackoff).
    node_group_backoff_seconds: float = GKE_INITIAL_BACKOFF_SECONDS
    #: Lifecycle switches per node pool (by name).
    pools: dict[str, Lifecycle] = field(default_factory=dict)
    #: Lifecycle switches per ProvisioningRequest: "namespace/name" patterns (fnmatch: * and ?).
    requests: dict[str, Lifecycle] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def resolve(self, pool: str | None, request: str) -> Resolved:
        """The lifecycle of `request` ("namespace/name") on `pool`: request patterns, then pool, then global."""
        levels = [life for pattern, life in sorted(self.requests.items()) if fnmatch.fnmatchcase(request, pattern)]
        if pool and pool in self.pools:
            levels.append(self.pools[pool])

        def pick(name: str, default: Any) -> Any:
            return next((getattr(life, name) for life in levels if getattr(life, name) is not None), default)

        return Resolved(
            delay_seconds=float(pick("delay_seconds", self.provisioning_delay_seconds)),
            booking_window_seconds=float(pick("booking_window_seconds", self.booking_window_seconds)),
            max_run_seconds=pick("max_run_seconds", None),
            fail=bool(pick("fail", False)),
        )

    def validate(self) -> None:
        for name in (
            "provisioning_delay_seconds",
            "scale_down_after_seconds",
            "booking_window_seconds",
            "spot_notice_seconds",
            "node_group_backoff_seconds",
        ):
            value = getattr(self, name)
            if value is not None and value < 0:  # only spot_notice_seconds may be None (GKE's own, per pool)
                raise SettingsError(f"{name} must be >= 0, got {value}")
        if self.interval_seconds <= 0:
            raise SettingsError(f"interval_seconds must be > 0, got {self.interval_seconds}")
        if self.fail_next < 0:
            raise SettingsError(f"fail_next must be >= 0, got {self.fail_next}")

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Settings:
        for listed in ("stockout", "preempt"):
            names = data.get(listed, ())
            if not isinstance(names, list | tuple) or not all(isinstance(p, str) for p in names):
                raise TypeError(f"{listed} is not a list of pool names")
            data[listed] = tuple(names)
        for level in ("pools", "requests"):
            table = data.get(level, {})
            if not isinstance(table, dict):
                raise TypeError(f"{level} is not an object")
            data[level] = {str(k): Lifecycle.from_json(v, f"{level}[{k!r}]") for k, v in table.items()}
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        flag = known.get("provisioning_request_multiple_podsets_enabled", True)
        if not isinstance(flag, bool):
            raise TypeError(f"provisioning_request_multiple_podsets_enabled is {flag!r}, not true or false")
        settings = cls(**known)
        for name in (
            "provisioning_delay_seconds",
            "scale_down_after_seconds",
            "interval_seconds",
            "fail_next",
            "booking_window_seconds",
            "spot_notice_seconds",
            "node_group_backoff_seconds",
        ):
            value = getattr(settings, name)
            if value is None and name == "spot_notice_seconds":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise TypeError(f"{name} is {value!r}, not a finite number")
        return settings

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["stockout"] = list(self.stockout)
        data["preempt"] = list(self.preempt)
        data["pools"] = {k: v.to_json() for k, v in self.pools.items()}
        data["requests"] = {k: v.to_json() for k, v in self.requests.items()}
        return data


def settings_file(state_dir: Path | None = None) -> Path:
    return (state_dir or paths.state_dir()) / "capacity" / "settings.json"


def load(state_dir: Path | None = None) -> Settings:
    """The saved switches (defaults when there is no file); a SettingsError names a file it cannot use."""
    return Settings.load(settings_file(state_dir))


def save(settings: Settings, state_dir: Path | None = None) -> None:
    settings.save(settings_file(state_dir))


def update(state_dir: Path | None = None, **changes: Any) -> Settings:
    """Change some switches and save; returns the new settings."""
    new = replace(load(state_dir), **changes)
    save(new, state_dir)
    return new
