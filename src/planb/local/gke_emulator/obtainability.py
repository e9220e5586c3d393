"""planb's own obtainability model: capacity scores from the grants, stockouts and Spot preemptions seen.

This is planb's model, not Google's. Google does not publish how Compute Engine's ``advice.capacity`` computes its
scores; its page says only that they are based on "the real-time availability and historical preemption rates of your
requested resources" (https://cloud.google.com/compute/docs/instances/view-vm-availability, "Understand viewing
resource availability for Spot VMs"). The GKE emulator answers ``advice.capacity`` and ``advice.calendarMode`` with
these scores (``planb.local.gke_emulator.advice``), so that planb's use of the advice can be tested locally.

What the model reads: signals, each one outcome seen for one zone, machine type and provisioning model (the four of
``CapacityAdviceRequestInstancePropertiesScheduling.provisioningModel``, compute v1):

* ``GRANT``: a request for capacity was granted (``count`` requests);
* ``STOCKOUT``: a request found no capacity (a stockout, a DWS request answered Failed);
* ``PREEMPTION``: a Spot VM was preempted after running ``uptime_seconds``.

What it answers (``score``):

* ``obtainability``, 0 to 1: the mean of a Beta(1, 1) prior updated with the grants and stockouts seen,
  ``(grants + 1) / (grants + stockouts + 2)``; with nothing seen it is 0.5. Each signal weighs ``0.5 ** (age /
  HALF_LIFE_SECONDS)``, so a zone that stocked out a day ago counts less than one that stocked out a minute ago.
  The number of VMs asked for is not modelled (one score per request, whatever its size).
* ``estimated_uptime_seconds``, for ``SPOT`` only: the weighted mean of the uptimes seen before preemptions, with
  ``PRIOR_UPTIME_SECONDS`` as one pseudo-observation (so it is that prior with nothing seen). Google's estimate is
  "the minimum amount of time that you can expect most of your Spot VMs to run" (same page), given as one of a few
  values ("60 minutes (3,600 seconds)", "10 minutes (600 seconds)", ...); planb's is a mean, which the emulator
  answers rounded down to one of those values (``planb.local.gke_emulator.advice.ESTIMATED_UPTIMES``).
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

#: Compute v1's provisioning models (CapacityAdviceRequestInstancePropertiesScheduling.provisioningModel).
PROVISIONING_MODELS = ("FLEX_START", "RESERVATION_BOUND", "SPOT", "STANDARD")
OUTCOMES = ("GRANT", "STOCKOUT", "PREEMPTION")
#: A signal this old weighs half as much as a new one (planb's choice).
HALF_LIFE_SECONDS = 6 * 3600.0
#: The Spot uptime the model assumes before it has seen a preemption (planb's choice: a day).
PRIOR_UPTIME_SECONDS = 24 * 3600.0


class SignalError(ValueError):
    """A signal the model cannot read (unknown outcome or provisioning model, a negative count or uptime)."""


@dataclass(frozen=True)
class Signal:
    """One outcome seen for one zone, machine type and provisioning model, at ``time`` (seconds since the epoch)."""

    zone: str
    machine_type: str
    provisioning_model: str
    outcome: str
    time: float
    count: int = 1
    uptime_seconds: float | None = None

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise SignalError(f"outcome {self.outcome!r} is not one of {', '.join(OUTCOMES)}")
        if self.provisioning_model not in PROVISIONING_MODELS:
            raise SignalError(
                f"provisioningModel {self.provisioning_model!r} is not one of {', '.join(PROVISIONING_MODELS)}"
            )
        if not self.zone or not self.machine_type:
            raise SignalError("a signal needs a zone and a machineType")
        if isinstance(self.count, bool) or not isinstance(self.count, int) or self.count < 1:
            raise SignalError(f"count {self.count!r} is not a positive integer")
        if self.outcome == "PREEMPTION":
            if self.provisioning_model != "SPOT":
                raise SignalError("only SPOT VMs are preempted")
            uptime = self.uptime_seconds
            if isinstance(uptime, bool) or not isinstance(uptime, (int, float)) or not 0 <= uptime < math.inf:
                raise SignalError(f"a PREEMPTION needs uptimeSeconds >= 0, not {uptime!r}")

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @staticmethod
    def from_json(data: dict[str, Any]) -> Signal:
        return Signal(**data)


@dataclass(frozen=True)
class Score:
    """planb's scores for one zone, machine type (or pattern) and provisioning models."""

    obtainability: float
    #: SPOT only; None for the other provisioning models.
    estimated_uptime_seconds: float | None
    #: The weighted grants and stockouts the obtainability stands on.
    grants: float
    stockouts: float


def _weight(signal: Signal, now: float) -> float:
    return float(signal.count) * math.pow(0.5, max(0.0, now - signal.time) / HALF_LIFE_SECONDS)


def score(
    signals: Iterable[Signal], zone: str, machine_type: str, provisioning_models: Iterable[str], now: float
) -> Score:
    """The scores of ``zone`` for ``machine_type`` (a name, or a pattern such as ``ct6e-*``) under the models."""
    models = set(provisioning_models)
    grants = stockouts = uptime_weight = uptime_sum = 0.0
    for signal in signals:
        if (
            signal.zone != zone
            or signal.provisioning_model not in models
            or not fnmatch.fnmatchcase(signal.machine_type, machine_type)
        ):
            continue
        weight = _weight(signal, now)
        if signal.outcome == "GRANT":
            grants += weight
        elif signal.outcome == "STOCKOUT":
            stockouts += weight
        elif signal.uptime_seconds is not None:
            uptime_weight += weight
            uptime_sum += weight * signal.uptime_seconds
    uptime = (uptime_sum + PRIOR_UPTIME_SECONDS) / (uptime_weight + 1.0) if models == {"SPOT"} else None
    return Score((grants + 1.0) / (grants + stockouts + 2.0), uptime, grants, stockouts)
