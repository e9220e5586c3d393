"""Google's capacity advice as planb asks for it and reads it: the request for a pair, the answer, or why there is none.

Google's facts, the inputs of ``planb.regions.advice_order``. Compute Engine's capacity advice, compute v1 discovery
revision 20261106, method ``compute.advice.capacity`` (``POST projects/{project}/regions/{region}/advice/capacity``,
https://cloud.google.com/compute/docs/reference/rest/v1/advice/capacity): given a machine type, a count (``size``), a
provisioning model (``STANDARD``, ``SPOT``, ``FLEX_START``, ``RESERVATION_BOUND``) and zones, it answers
recommendations whose ``scores.obtainability`` is "the likelihood of successfully obtaining (provisioning) the
requested number of VMs", 0.0 to 1.0, and whose ``scores.estimatedUptime`` is "the estimated run time of the majority
of Spot VMs in the request before preemption" (a google-duration such as ``"3600s"``). Google's page says TPU
availability cannot be viewed with it (https://cloud.google.com/compute/docs/instances/view-vm-availability,
"Limitations"), so planb must expect a refusal (400), a 403 (no permission) or a 404 for a TPU shape: ``Advice``
then carries why it is missing (``Advice.from_error``, Google's error body: ``error.code``, ``error.status``,
``error.message``).

``ask`` sends the request through a ``post`` the caller gives (the product holds no Google credentials of its own
yet; the tests give the GKE emulator's HTTP API, which serves the method from the same discovery document).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from planb.regions.ledger import Key

#: The provisioning model of each kind of rung (compute v1 CapacityAdviceRequestInstancePropertiesScheduling).
PROVISIONING_MODELS = {
    "reservation": "RESERVATION_BOUND",
    "on-demand": "STANDARD",
    "dws": "FLEX_START",
    "spot": "SPOT",
}

#: POST ``path`` with a JSON body: (HTTP status, the JSON answer); an error status is an answer too.
Post = Callable[[str, dict[str, Any]], tuple[int, dict[str, Any]]]


@dataclass(frozen=True)
class Advice:
    """Google's answer for one pair: its obtainability and, for Spot, estimatedUptime; or why there is none."""

    obtainability: float | None
    estimated_uptime_s: float | None = None
    missing: str = ""

    @staticmethod
    def from_response(body: dict[str, Any]) -> Advice:
        """Read a CapacityAdviceResponse: the first recommendation's scores (Google: "Initially the API will
        provide one recommendation")."""
        recommendations = body.get("recommendations") or []
        scores = (recommendations[0].get("scores") or {}) if recommendations else {}
        value = scores.get("obtainability")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
            return Advice.absent("the answer holds no obtainability score")
        uptime = scores.get("estimatedUptime")
        seconds = None
        if isinstance(uptime, str) and uptime.endswith("s"):
            try:
                seconds = float(uptime[:-1])
            except ValueError:
                seconds = None
        return Advice(float(value), seconds)

    @staticmethod
    def absent(why: str) -> Advice:
        """No advice for the pair: ``why`` (``403 PERMISSION_DENIED``, ``400 machine type not supported``...)."""
        return Advice(None, None, why)

    @staticmethod
    def from_error(status: int, body: dict[str, Any]) -> Advice:
        """No advice, because Google answered ``status``: its code, status name and message, as it wrote them."""
        found = body.get("error")
        error: dict[str, Any] = found if isinstance(found, dict) else {}
        name = str(error.get("status") or "").strip()
        message = " ".join(str(error.get("message") or "").split())
        head = " ".join(part for part in (str(status), name) if part)
        return Advice.absent(head + (f": {message}" if message else ""))


@dataclass(frozen=True)
class Candidate:
    """One pair a job could be offered to (its region, rung and shape), with Google's advice for it."""

    key: Key
    advice: Advice

    @property
    def provisioning_model(self) -> str:
        return PROVISIONING_MODELS.get(self.key.rung, "STANDARD")


@dataclass(frozen=True)
class Job:
    """What the policy needs to know of the job: how often it checkpoints and how long a restore takes."""

    checkpoint_interval_s: float
    restore_s: float


def capacity_request(key: Key, zones: Sequence[str], machine_type: str, count: int) -> dict[str, Any]:
    """The CapacityAdviceRequest planb sends for one pair (compute v1 ``compute.advice.capacity``)."""
    return {
        "size": count,
        "instanceProperties": {"scheduling": {"provisioningModel": PROVISIONING_MODELS.get(key.rung, "STANDARD")}},
        "instanceFlexibilityPolicy": {"instanceSelections": {key.rung: {"machineTypes": [machine_type]}}},
        "distributionPolicy": {"targetShape": "ANY_SINGLE_ZONE", "zones": [{"zone": f"zones/{z}"} for z in zones]},
    }


def shape_parts(shape: str) -> tuple[str, int]:
    """A pair's shape (``ct6e-standard-4t:4``) as its machine type and count (one VM without a count)."""
    machine_type, _, count = shape.partition(":")
    return machine_type, int(count) if count.isdigit() and int(count) > 0 else 1


def ask(post: Post, project: str, key: Key, zones: Sequence[str]) -> Advice:
    """Google's advice for one pair: the answer's scores, or, when it refuses (400, 403, 404...) or cannot be
    reached, why there is none, so the policy falls back and says so."""
    machine_type, count = shape_parts(key.shape)
    path = f"/compute/v1/projects/{project}/regions/{key.region}/advice/capacity"
    try:
        status, body = post(path, capacity_request(key, zones, machine_type, count))
    except OSError as exc:  # a refused connection, a timeout: no answer at all
        return Advice.absent(f"no answer: {exc}")
    if status != 200:
        return Advice.from_error(status, body if isinstance(body, dict) else {})
    return Advice.from_response(body)
