"""Google's capacity advice as planb asks for it and reads it: the request for a pair, the answer, or why there is none.

Google's facts, the inputs of ``planb.regions.dispatcher.offer_order``. Compute Engine's capacity advice, compute
v1 discovery revision 20261106, method ``compute.advice.capacity`` (``POST
projects/{project}/regions/{region}/advice/capacity``,
https://cloud.google.com/compute/docs/reference/rest/v1/advice/capacity): given a machine type, a count (``size``), a
provisioning model (``STANDARD``, ``SPOT``, ``FLEX_START``, ``RESERVATION_BOUND``) and zones, it answers recommendations
whose ``scores.obtainability`` is "the likelihood of successfully obtaining (provisioning) the requested number of VMs",
0.0 to 1.0, and whose ``scores.estimatedUptime`` is "the estimated run time of the majority of Spot VMs in the request
before preemption" (a google-duration; Google's page gives it one of a few values, "60 minutes (3,600 seconds)", "10
minutes (600 seconds)", ...). Google's page documents the API for Spot VMs and says "When you send a request to the
advice.capacity API, you can't view the availability of TPUs"
(https://cloud.google.com/compute/docs/instances/view-vm-availability, "Limitations").

So the keeper does not ask about a TPU shape at all: ``no_tpu_advice`` is the pair's advice, absent by design
(``Advice.by_design``), not a failed call, and the policy orders such pairs by the reservation reads and planb's ledger
(``offer_order`` rule 6). For any other shape a refusal (400), a 403 or a 404 is a failed call: ``Advice`` then
carries why it is missing (``Advice.from_error``, Google's error body: ``error.code``, ``error.status``,
``error.message``).

``ask`` sends the request through a ``post`` the caller gives (the product holds no Google credentials of its own
yet; the tests give the GKE emulator's HTTP API, which serves the method from the same discovery document):
``http_post``'s, for ``planb regions keep --advice-url``, reads each answer under an overall deadline and a decoded
size cap (planb.kube_limits, as a region's answers: `ADVICE_LIMITS`), because the URL may be any server the operator
was given, and a slow or huge answer must cost one pair its advice, never hold the keeper.
"""

from __future__ import annotations

import ipaddress
import json
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import urllib3

from planb.catalog import rung_kinds
from planb.errors import UsageError
from planb.kube import KubeLimitError
from planb.kube_limits import DeadlinePassed, Limits, read_within, watched_pool_classes
from planb.regions.access.kubeconfig import is_dns_subdomain
from planb.regions.dispatcher.ledger import Key, shape_parts

if TYPE_CHECKING:
    from planb.regions.dispatcher.reservation_room import Room

#: The provisioning model of each kind of rung (compute v1 CapacityAdviceRequestInstancePropertiesScheduling), as the
#: kinds' catalog entries give it (planb.catalog.rung_kinds, which says why a reservation rung's VMs are STANDARD).
#: ``provisioning_model`` reads the catalog at each call; this table is its view when the package was loaded.
PROVISIONING_MODELS = {kind.name: kind.provisioning_model for kind in rung_kinds.KINDS}


def provisioning_model(rung: str) -> str:
    """The provisioning model of a rung named like its kind (the default ladder's names), else STANDARD."""
    kind = rung_kinds.get(rung)
    return kind.provisioning_model if kind else "STANDARD"


def queued(rung: str) -> bool:
    """Whether a rung named like its kind queues its requests (DWS) rather than answering at once."""
    kind = rung_kinds.get(rung)
    return bool(kind and kind.queued)


#: POST ``path`` with a JSON body: (HTTP status, the JSON answer); an error status is an answer too. Raises OSError
#: when there is no answer, KubeLimitError when it is too slow or too large (``ask`` reads both as no advice).
Post = Callable[[str, dict[str, Any]], tuple[int, dict[str, Any]]]
#: planb's caps on one advice.capacity answer (planb.kube_limits.Limits): 10 s from sending the request to the last
#: byte of the answer (urllib3's per-read timeout planb used before, now for the whole answer), and 1 MiB decoded. A
#: CapacityAdviceResponse holds one recommendation of some hundred bytes (compute v1 CapacityAdviceResponse), so 1 MiB
#: is thousands of times the answer; a larger one would be held in memory whole.
ADVICE_LIMITS = Limits(10.0, 1 << 20, "the advice deadline (ADVICE_LIMITS)", "the advice size cap (ADVICE_LIMITS)")


@dataclass(frozen=True)
class Advice:
    """Google's answer for one pair: its obtainability and, for Spot, estimatedUptime; or why there is none."""

    obtainability: float | None
    estimated_uptime_s: float | None = None
    missing: str = ""
    #: No advice because planb does not ask for it (a TPU shape: ``no_tpu_advice``), not because a call failed.
    by_design: bool = False

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
    def not_asked(why: str) -> Advice:
        """No advice by design: planb does not ask for this pair (``why``), so its absence is no failure."""
        return Advice(None, None, why, by_design=True)

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
    """One pair a job could be offered to (its region, rung and shape), with Google's advice for it, and, for a
    reservation rung whose reservation was read, its room (``planb.regions.dispatcher.reservation_room``; None: not
    read)."""

    key: Key
    advice: Advice
    room: Room | None = None

    @property
    def provisioning_model(self) -> str:
        return provisioning_model(self.key.rung)

    @property
    def queued(self) -> bool:
        return queued(self.key.rung)


@dataclass(frozen=True)
class Job:
    """What the policy needs to know of the job: how often it checkpoints and how long a restore takes."""

    checkpoint_interval_s: float
    restore_s: float


def capacity_request(key: Key, zones: Sequence[str], machine_type: str, count: int) -> dict[str, Any]:
    """The CapacityAdviceRequest planb sends for one pair (compute v1 ``compute.advice.capacity``)."""
    return {
        "size": count,
        "instanceProperties": {"scheduling": {"provisioningModel": provisioning_model(key.rung)}},
        "instanceFlexibilityPolicy": {"instanceSelections": {key.rung: {"machineTypes": [machine_type]}}},
        "distributionPolicy": {"targetShape": "ANY_SINGLE_ZONE", "zones": [{"zone": f"zones/{z}"} for z in zones]},
    }


#: The TPU machine families (the first part of a TPU machine type: ct6e of ct6e-standard-4t), as GKE's cluster
#: autoscaler names them (GoogleCloudPlatform/cluster-autoscaler at 7d25050,
#: pkg/cloudprovider/gke/machinetypes/deprecated_machine_types_config.go).
TPU_FAMILIES = frozenset({"ct3", "ct3p", "ct4p", "ct5l", "ct5lp", "ct5p", "ct6e", "tpu7x"})
#: Why a TPU pair has no advice (``no_tpu_advice``).
NO_TPU_ADVICE = (
    'not asked: advice.capacity gives no TPU availability (Google: "you can\'t view the availability of TPUs", '
    "https://cloud.google.com/compute/docs/instances/view-vm-availability)"
)


def is_tpu(machine_type: str) -> bool:
    """Whether ``machine_type`` is a TPU machine type (``TPU_FAMILIES``)."""
    return machine_type.split("-", 1)[0] in TPU_FAMILIES


def no_tpu_advice(key: Key) -> Advice | None:
    """A TPU pair's advice, absent by design (the module's docstring); None for any other shape, which is asked."""
    return Advice.not_asked(NO_TPU_ADVICE) if is_tpu(shape_parts(key.shape)[0]) else None


def ask(post: Post, project: str, key: Key, zones: Sequence[str]) -> Advice:
    """Google's advice for one pair: the answer's scores, or, when it refuses (400, 403, 404...), cannot be reached
    or answers past ADVICE_LIMITS, why there is none, so the policy falls back and says so. A TPU pair is not asked
    (``no_tpu_advice``): nothing is sent, because Google gives no TPU availability there. A region or project that
    is not a DNS-1123 name (a region is a MultiKueueCluster's name, which whoever writes the MultiKueueConfig
    chooses) is not asked about: planb's policy, because it would be put into the request's path (``..`` reaches
    another resource), and no Google Cloud region or project ID is such a name."""
    unasked = no_tpu_advice(key)
    if unasked is not None:
        return unasked
    machine_type, count = shape_parts(key.shape)
    for what, name in (("region", key.region), ("project", project)):
        if not is_dns_subdomain(name):
            return Advice.absent(f"not asked: the {what} {name!r} is not a DNS-1123 name, as a Google Cloud {what} is")
    region, project = urllib.parse.quote(key.region, safe=""), urllib.parse.quote(project, safe="")
    path = f"/compute/v1/projects/{project}/regions/{region}/advice/capacity"
    try:
        status, body = post(path, capacity_request(key, zones, machine_type, count))
    except OSError as exc:  # a refused connection, a timeout: no answer at all
        return Advice.absent(f"no answer: {exc}")
    except KubeLimitError as exc:  # too slow or too large: not read
        return Advice.absent(f"answer not read: {exc}")
    if status != 200:
        return Advice.from_error(status, body if isinstance(body, dict) else {})
    return Advice.from_response(body)


#: GET ``path``: (HTTP status, the JSON answer), as ``Post`` answers (a reservation read, ``reservation_reads``).
Get = Callable[[str], tuple[int, dict[str, Any]]]


def http_post(base_url: str, token: str = "", limits: Limits = ADVICE_LIMITS) -> Post:
    """POST JSON to a compute v1 endpoint (``https://compute.googleapis.com``, or the GKE emulator locally), each
    answer read under `limits` (else KubeLimitError). A token goes over https only, or plain http to a loopback host
    (the local emulator): planb's policy, because a bearer token sent in the clear is anyone's on the path. Checked
    here, before anything is sent."""
    call = _http(base_url, token, limits)
    return lambda path, body: call("POST", path, body)


def http_get(base_url: str, token: str = "", limits: Limits = ADVICE_LIMITS) -> Get:
    """GET from the same compute v1 endpoint, under the same rules and caps as ``http_post``."""
    call = _http(base_url, token, limits)
    return lambda path: call("GET", path, None)


def _http(
    base_url: str, token: str, limits: Limits
) -> Callable[[str, str, dict[str, Any] | None], tuple[int, dict[str, Any]]]:
    url = urllib.parse.urlsplit(base_url)
    if token and url.scheme != "https" and not (url.scheme == "http" and _loopback(url.hostname or "")):
        raise UsageError(
            f"--advice-url {base_url} is not https: planb's policy is not to send $PLANB_ADVICE_TOKEN in the clear, "
            "because anyone on the path could use it. Fix: an https:// URL (https://compute.googleapis.com), or "
            "http:// only to a loopback host (the local emulator), or unset PLANB_ADVICE_TOKEN"
        )
    pool = urllib3.PoolManager(retries=False)
    # Connections that hand their sockets to each request's Deadline, which shuts them down when it passes.
    pool.pool_classes_by_scheme = watched_pool_classes()

    def call(method: str, path: str, body: dict[str, Any] | None) -> tuple[int, dict[str, Any]]:
        headers = ({"Content-Type": "application/json"} if body is not None else {}) | (
            {"Authorization": f"Bearer {token}"} if token else {}
        )
        payload = None if body is None else json.dumps(body).encode()
        status, data = _capped(pool, method, base_url.rstrip("/") + path, payload, headers, limits)
        try:
            answer = json.loads(data or b"{}")
        except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
            answer = {}
        return status, answer if isinstance(answer, dict) else {}

    return call


def _capped(
    pool: urllib3.PoolManager, method: str, url: str, payload: bytes | None, headers: dict[str, str], limits: Limits
) -> tuple[int, bytes]:
    """The answer's status and body, read in chunks under `limits` (as planb.kube reads a region's answers)."""
    where = f"--advice-url: {method} {urllib.parse.urlsplit(url).path}"

    def send(per_read: urllib3.Timeout) -> urllib3.BaseHTTPResponse:
        return pool.request(method, url, body=payload, headers=headers, timeout=per_read, preload_content=False)

    try:
        answer, data = read_within(limits, send, (urllib3.exceptions.HTTPError, OSError))
    except DeadlinePassed as exc:
        raise KubeLimitError(
            "deadline",
            "answer too slow",
            f"{where} was not answered whole within {limits.deadline_s:g} s, the deadline planb gives advice "
            "answers (one that answers slowly, even a byte at a time, would hold the keeper). Fix: see why the "
            "advice server or the network to it is slow",
        ) from exc
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        raise OSError(str(exc)) from exc
    if data is None:
        raise KubeLimitError(
            "size",
            "answer too large",
            f"{where} answered more than {limits.max_bytes} bytes, the most planb reads of an advice answer (one "
            "recommendation is some hundred bytes; a larger answer would be held in memory whole). Fix: see what "
            "the advice server answers; --advice-url is compute v1's (https://compute.googleapis.com)",
        )
    return answer.status, data


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
