# planb: shared logic of the gke_cluster / gke_node_pool modules (GKE REST API v1).
"""Validation, REST client, comparison and operation waiting for planb's GKE modules.

The modules stay thin: they declare their argument spec and call `run_cluster` / `run_node_pool`.
Every input is validated here *before* the first API call; the error names the option and the fix.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import time
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse

from ansible.module_utils.basic import env_fallback
from ansible.module_utils.urls import open_url

DEFAULT_ENDPOINT = "https://container.googleapis.com"
DEFAULT_SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]
#: planb's policy (the seed's GKE_VERSION): clusters run GKE 1.34 or later.
MIN_CLUSTER_VERSION = (1, 34)
#: GKE's floor for TPU flex-start node pools.
TPU_FLEX_START_MIN = (1, 33, 0, 1712000)
MAX_RUN_DURATION_S = 7 * 24 * 3600
AUTH_KINDS = ["application", "serviceaccount", "machineaccount", "accesstoken", "none"]

AUTH_ARGSPEC: dict[str, dict[str, Any]] = {
    "project": {"type": "str", "fallback": (env_fallback, ["GCP_PROJECT"])},
    "auth_kind": {"type": "str", "choices": AUTH_KINDS, "fallback": (env_fallback, ["GCP_AUTH_KIND"])},
    "service_account_file": {"type": "path", "fallback": (env_fallback, ["GCP_SERVICE_ACCOUNT_FILE"])},
    "service_account_contents": {
        "type": "jsonarg",
        "no_log": True,
        "fallback": (env_fallback, ["GCP_SERVICE_ACCOUNT_CONTENTS"]),
    },
    "service_account_email": {"type": "str", "fallback": (env_fallback, ["GCP_SERVICE_ACCOUNT_EMAIL"])},
    "access_token": {"type": "str", "no_log": True, "fallback": (env_fallback, ["GCP_ACCESS_TOKEN"])},
    "scopes": {"type": "list", "elements": "str", "fallback": (env_fallback, ["GCP_SCOPES"])},
    "api_endpoint": {"type": "str", "fallback": (env_fallback, ["GKE_API_ENDPOINT"])},
    "timeout": {"type": "int", "default": 1800},
    "poll_interval": {"type": "float", "default": 5.0},
}
#: Options of the converging modules (gke_cluster, gke_node_pool); documented in the gke_auth.converge fragment.
CONVERGE_ARGSPEC: dict[str, dict[str, Any]] = {
    "wait": {"type": "bool", "default": True},
    "validate_only": {"type": "bool", "default": False},
}

# ---- TPU facts (GKE "Plan TPUs in GKE"); the role takes pool sizes from planb's catalog ----------
TPU_FAMILIES = {
    "ct3-": ("v3", 2, False),
    "ct3p-": ("v3", 2, False),
    "ct4p-": ("v4", 3, False),
    "ct5lp-": ("v5e", 2, True),
    "ct5p-": ("v5p", 3, True),
    "ct6e-": ("v6e", 2, True),
    "tpu7x-": ("tpu7x", 3, True),
}
TOPOLOGIES_2D = ("1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16")
TAINT_EFFECTS = {
    "NoSchedule": "NO_SCHEDULE",
    "PreferNoSchedule": "PREFER_NO_SCHEDULE",
    "NoExecute": "NO_EXECUTE",
    "NO_SCHEDULE": "NO_SCHEDULE",
    "PREFER_NO_SCHEDULE": "PREFER_NO_SCHEDULE",
    "NO_EXECUTE": "NO_EXECUTE",
}
_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$")
_LOCATION = re.compile(r"^[a-z]+-[a-z]+[0-9]+(-[a-z])?$")
_MACHINE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)+$")
_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+)(?:-gke\.(\d+))?)?$")
_DURATION = re.compile(r"^(\d+)([smhd]?)$")
_TRANSITIONAL = ("PROVISIONING", "RECONCILING", "STOPPING")


class GkeError(Exception):
    """A failure reported to the user as the module's `msg`."""


# ---- small helpers -------------------------------------------------------------------------
def parse_version(version):
    match = _VERSION.match(str(version))
    return None if not match else tuple(int(p) for p in match.groups() if p is not None)


def version_at_least(version, minimum):
    """True when `version` (a prefix such as 1.34 stands for its newest release) is >= minimum."""
    parsed = parse_version(version)
    if parsed is None:
        return False
    given = len(parsed)
    if parsed[:given] != minimum[:given]:
        return parsed[:given] > minimum[:given]
    return True


def tpu_family(machine_type):
    for prefix, family in TPU_FAMILIES.items():
        if machine_type.startswith(prefix):
            return family
    return None


def chips_per_vm(machine_type):
    match = re.search(r"-(\d+)t$", machine_type)
    return int(match.group(1)) if match else 1


def topology_chips(topology):
    chips = 1
    for dim in topology.split("x"):
        chips *= int(dim)
    return chips


def hosts_per_slice(machine_type, topology):
    return max(1, topology_chips(topology) // chips_per_vm(machine_type))


def duration_seconds(value):
    """'7d', '24h', '90m', '3600s' or '3600' -> seconds; None when unparsable."""
    match = _DURATION.match(str(value).strip())
    if not match:
        return None
    return int(match.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[match.group(2)]


def is_loopback(url):
    host = urlparse(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def dig(body, path, default=None):
    for key in path.split("."):
        if not isinstance(body, dict) or key not in body:
            return default
        body = body[key]
    return body


def leaves(body, prefix=""):
    """Dotted leaf paths of a nested dict (lists and label maps are leaves)."""
    out = {}
    for key, value in body.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value and path not in ("config.labels",):
            out.update(leaves(value, path + "."))
        else:
            out[path] = value
    return out


def nest(flat):
    out = {}
    for path, value in flat.items():
        node = out
        keys = path.split(".")
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = value
    return out


def _normalize(value, desired):
    """The server's value as comparable to the desired one (absent bool/int/str/map -> zero value)."""
    if value is None:
        if isinstance(desired, bool):
            return False
        if isinstance(desired, int):
            return 0
        if isinstance(desired, str):
            return ""
        if isinstance(desired, dict):
            return {}
        if isinstance(desired, list):
            return []
    if isinstance(desired, int) and not isinstance(desired, bool) and isinstance(value, str) and value.isdigit():
        return int(value)
    if isinstance(desired, list) and isinstance(value, list):
        return sorted(value, key=lambda item: json.dumps(item, sort_keys=True))
    return value


def compare(desired, current):
    """(differing paths, diff before, diff after) over the desired fields only (server-only fields ignored)."""
    changed, before, after = [], {}, {}
    for path, want in leaves(desired).items():
        have = _normalize(dig(current, path), want)
        want_cmp = _normalize(want, want)
        before[path], after[path] = have, want
        if have != want_cmp:
            changed.append(path)
    return changed, nest(before), nest(after)


# ---- validation before any API call -------------------------------------------------------------
def check_auth(params):
    """Raise GkeError naming every missing credential or setting; makes no network call."""
    endpoint = params.get("api_endpoint") or DEFAULT_ENDPOINT
    if not re.match(r"^https?://[^/]+", endpoint):
        raise GkeError(f"api_endpoint {endpoint!r} must be a URL such as {DEFAULT_ENDPOINT}")
    problems = []
    kind = params.get("auth_kind")
    if not kind:
        problems.append(
            "Missing credential: auth_kind is not set. Set the auth_kind option or the GCP_AUTH_KIND environment "
            "variable to one of application, serviceaccount, machineaccount, accesstoken (or none against a "
            "loopback api_endpoint such as the local GKE emulator)"
        )
    elif kind == "none" and not is_loopback(endpoint):
        problems.append(
            f"auth_kind=none is only allowed against a loopback api_endpoint (the local GKE emulator), "
            f"not {endpoint}; use application or serviceaccount credentials for Google Cloud"
        )
    elif kind == "serviceaccount":
        path = params.get("service_account_file")
        if not path and not params.get("service_account_contents"):
            problems.append(
                "Missing credential: auth_kind=serviceaccount needs service_account_file (GCP_SERVICE_ACCOUNT_FILE) "
                "or service_account_contents (GCP_SERVICE_ACCOUNT_CONTENTS)"
            )
        elif path and not os.path.isfile(path):
            problems.append(f"Missing credential: service_account_file {path} does not exist")
    elif kind == "accesstoken" and not params.get("access_token"):
        problems.append("Missing credential: auth_kind=accesstoken needs access_token (GCP_ACCESS_TOKEN)")
    elif kind == "application" and not adc_file():
        problems.append(
            "Missing credential: auth_kind=application found no Application Default Credentials: "
            f"GOOGLE_APPLICATION_CREDENTIALS is unset and {well_known_adc()} does not exist. Run "
            "`gcloud auth application-default login`, or set GCP_AUTH_KIND=serviceaccount and "
            "GCP_SERVICE_ACCOUNT_FILE"
        )
    if not params.get("project"):
        problems.append("Missing project: set the project option or the GCP_PROJECT environment variable (PROJECT_ID)")
    if problems:
        raise GkeError("; ".join(problems) + ". Nothing was sent to GKE.")


def well_known_adc():
    config = os.environ.get("CLOUDSDK_CONFIG") or os.path.join(os.path.expanduser("~"), ".config", "gcloud")
    return os.path.join(config, "application_default_credentials.json")


def adc_file():
    explicit = os.environ.get("GOOGLE_APPLICATION_CREDENTIALS")
    if explicit:
        return explicit if os.path.isfile(explicit) else None
    path = well_known_adc()
    return path if os.path.isfile(path) else None


def _check_common(params, problems):
    for option in ("name", "cluster"):
        value = params.get(option)
        if value is not None and not _NAME.match(value):
            problems.append(
                f"{option} {value!r} must be 1-40 lowercase letters, digits or hyphens, start with a letter "
                "and end with a letter or digit"
            )
    location = params.get("location") or ""
    if not _LOCATION.match(location):
        problems.append(f"location {location!r} must be a zone (us-east5-b) or a region (us-east5)")
    if params.get("timeout", 1) <= 0 or params.get("poll_interval", 1) <= 0:
        problems.append("timeout and poll_interval must be positive")


def _raise(kind, problems):
    if problems:
        raise GkeError(f"Invalid {kind} input (nothing was sent to GKE): " + "; ".join(problems) + ".")


def validate_cluster(params):
    problems = []
    _check_common(params, problems)
    if params["state"] == "present":
        version = params.get("version") or ""
        parsed = parse_version(version)
        if parsed is None:
            problems.append(f"version {version!r} is not a GKE version such as 1.34 or 1.34.1-gke.1829001")
        elif parsed[:2] < MIN_CLUSTER_VERSION:
            problems.append(
                f"version {version} is refused: planb needs GKE 1.34 or later "
                "(set version/GKE_VERSION to 1.34 or newer)"
            )
        machine = params.get("default_pool_machine_type") or ""
        if not _MACHINE.match(machine):
            problems.append(f"default_pool_machine_type {machine!r} is not a machine type such as n2-standard-16")
        if params.get("default_pool_node_count", 1) < 1:
            problems.append("default_pool_node_count must be at least 1")
    _raise("cluster", problems)


def _autoscaling(params):
    return params.get("autoscaling") or {}


def validate_node_pool(params):
    problems = []
    _check_common(params, problems)
    if params["state"] != "present":
        _raise("node pool", problems)
        return
    machine = params.get("machine_type") or ""
    if not _MACHINE.match(machine):
        problems.append(f"machine_type {machine!r} is required and must look like ct6e-standard-4t")
    auto = _autoscaling(params)
    enabled = bool(auto) and auto.get("enabled", True)
    per_zone = auto.get("min_node_count") is not None or auto.get("max_node_count") is not None
    total = auto.get("total_min_node_count") is not None or auto.get("total_max_node_count") is not None
    if per_zone and total:
        problems.append("autoscaling: set either min/max_node_count or total_min/max_node_count, not both")
    low = auto.get("min_node_count") or auto.get("total_min_node_count") or 0
    high = auto.get("max_node_count") if auto.get("max_node_count") is not None else auto.get("total_max_node_count")
    if enabled:
        if high is None or high < 1:
            problems.append("autoscaling: max_node_count (or total_max_node_count) must be at least 1")
        elif low < 0 or low > high:
            problems.append(f"autoscaling: min node count {low} must be between 0 and the max node count {high}")
    initial = params.get("initial_node_count") or 0
    if initial < 0:
        problems.append("initial_node_count must not be negative")
    topology = params.get("tpu_topology")
    family = tpu_family(machine)
    hosts = 1
    if topology:
        dims = topology.split("x")
        if family is None:
            problems.append(f"tpu_topology {topology} needs a TPU machine type, {machine} is not one")
        elif len(dims) != family[1] or not all(d.isdigit() and int(d) > 0 for d in dims):
            problems.append(f"tpu_topology {topology!r} is not a {family[1]}D topology of TPU {family[0]} ({machine})")
        else:
            chips, per_vm = topology_chips(topology), chips_per_vm(machine)
            fits = chips == per_vm or (chips > per_vm and chips % per_vm == 0 and per_vm == 4)
            if (family[1] == 2 and topology not in TOPOLOGIES_2D) or not fits:
                problems.append(
                    f"tpu_topology {topology} ({chips} chips) is not valid for machine type {machine} "
                    f"({per_vm} chips per VM); pick a topology GKE offers for it (see planb catalog)"
                )
            else:
                hosts = hosts_per_slice(machine, topology)
    elif family is not None and family[1] == 3:
        problems.append(f"tpu_topology is required for TPU {family[0]} machine type {machine}")
    if hosts > 1:
        for label, value in (("max node count", high), ("initial_node_count", initial), ("min node count", low)):
            if value and value % hosts:
                problems.append(
                    f"{label} {value} must be a multiple of {hosts}, the hosts of one {topology} slice "
                    "(multi-host slices scale atomically)"
                )
    for feature in ("flex_start", "queued_provisioning"):
        if not params.get(feature):
            continue
        if not enabled:
            problems.append(f"{feature} needs autoscaling enabled")
        if low:
            problems.append(f"{feature} needs autoscaling from 0 (min node count is {low}; set it to 0)")
        if initial:
            problems.append(f"{feature} needs initial_node_count 0")
        if auto.get("location_policy") != "ANY":
            problems.append(f"{feature} needs autoscaling.location_policy ANY")
        if params.get("reservation_affinity") != "NO_RESERVATION":
            problems.append(
                f"{feature} needs reservation_affinity NO_RESERVATION "
                f"(got {params.get('reservation_affinity') or 'unset, which GKE treats as ANY_RESERVATION'})"
            )
        if params.get("spot"):
            problems.append(f"{feature} cannot use Spot VMs (set spot false)")
        if params.get("auto_repair"):
            problems.append(f"{feature} needs auto_repair false")
    if params.get("flex_start") and family is not None:
        if not family[2]:
            problems.append(f"flex_start is not available for TPU {family[0]} ({machine}); use v5e, v5p, v6e or TPU7x")
        version = params.get("cluster_version")
        if version and not version_at_least(version, TPU_FLEX_START_MIN):
            problems.append(f"TPU flex_start needs GKE 1.33.0-gke.1712000 or later, the cluster version is {version}")
    if params.get("max_run_duration") is not None:
        seconds = duration_seconds(params["max_run_duration"])
        if seconds is None or not 0 < seconds <= MAX_RUN_DURATION_S:
            problems.append(
                f"max_run_duration {params['max_run_duration']!r} must be a duration up to 7d (e.g. 86400s, 24h, 7d)"
            )
    for taint in params.get("taints") or []:
        if not taint.get("key") or taint.get("effect") not in TAINT_EFFECTS:
            problems.append(f"taint {taint} needs a key and an effect among NoSchedule, PreferNoSchedule, NoExecute")
    for key, value in (params.get("labels") or {}).items():
        if not re.match(r"^([a-z0-9.-]+/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$", key) or len(str(value)) > 63:
            problems.append(f"label {key}={value} is not a valid Kubernetes label")
    _raise("node pool", problems)


# ---- request bodies ------------------------------------------------------------------------------
def cluster_body(params):
    body = {
        "name": params["name"],
        "initialClusterVersion": params["version"],
        "addonsConfig": {"rayOperatorConfig": {"enabled": bool(params["ray_operator"])}},
        "nodePoolDefaults": {"nodeConfigDefaults": {"gcfsConfig": {"enabled": bool(params["image_streaming"])}}},
        "nodePools": [
            {
                "name": "default-pool",
                "initialNodeCount": params["default_pool_node_count"],
                "config": {"machineType": params["default_pool_machine_type"]},
            }
        ],
    }
    if params.get("labels"):
        body["resourceLabels"] = dict(params["labels"])
    return body


def node_pool_body(params):
    config = {"machineType": params["machine_type"]}
    if params.get("reservation_affinity"):
        config["reservationAffinity"] = {"consumeReservationType": params["reservation_affinity"]}
    if params.get("spot") is not None:
        config["spot"] = bool(params["spot"])
    if params.get("flex_start") is not None:
        config["flexStart"] = bool(params["flex_start"])
    if params.get("labels") is not None:
        config["labels"] = {str(k): str(v) for k, v in params["labels"].items()}
    if params.get("taints") is not None:
        config["taints"] = sorted(
            (
                {"key": t["key"], "value": str(t.get("value") or ""), "effect": TAINT_EFFECTS[t["effect"]]}
                for t in params["taints"]
            ),
            key=lambda item: json.dumps(item, sort_keys=True),
        )
    if params.get("max_run_duration") is not None:
        config["maxRunDuration"] = f"{duration_seconds(params['max_run_duration'])}s"
    body = {
        "name": params["name"],
        "initialNodeCount": params.get("initial_node_count") or 0,
        "config": config,
        "management": {"autoRepair": bool(params["auto_repair"]), "autoUpgrade": bool(params["auto_upgrade"])},
        "queuedProvisioning": {"enabled": bool(params.get("queued_provisioning"))},
    }
    auto = _autoscaling(params)
    if auto:
        scaling = {"enabled": bool(auto.get("enabled", True))}
        for option, field in (
            ("min_node_count", "minNodeCount"),
            ("max_node_count", "maxNodeCount"),
            ("total_min_node_count", "totalMinNodeCount"),
            ("total_max_node_count", "totalMaxNodeCount"),
            ("location_policy", "locationPolicy"),
        ):
            if auto.get(option) is not None:
                scaling[field] = auto[option]
        body["autoscaling"] = scaling
    if params.get("tpu_topology"):
        body["placementPolicy"] = {"tpuTopology": params["tpu_topology"]}
    return body


# Fields that cannot change in place: (API path prefix, option name).
NODE_POOL_IMMUTABLE = [
    ("config.machineType", "machine_type"),
    ("placementPolicy", "tpu_topology"),
    ("config.reservationAffinity", "reservation_affinity"),
    ("queuedProvisioning", "queued_provisioning"),
    ("config.flexStart", "flex_start"),
    ("config.spot", "spot"),
]
CLUSTER_IMMUTABLE = [("nodePools", "default_pool_machine_type / default_pool_node_count")]


def immutable_error(kind, name, diffs, table):
    for path in diffs:
        for prefix, option in table:
            if path.startswith(prefix):
                return GkeError(
                    f"{option} of {kind} {name} cannot be changed in place ({path} differs on GKE). "
                    f"Fix: delete the {kind} and re-run to recreate it (state=absent first, or "
                    f"`playbooks/teardown.yml` for the whole cluster), or keep the current value."
                )
    return None


# ---- REST client ---------------------------------------------------------------------------------
class GkeClient:
    """Minimal GKE v1 REST client: JSON in/out, GKE error bodies -> GkeError, LRO waiting."""

    def __init__(self, params):
        self.params = params
        self.endpoint = (params.get("api_endpoint") or DEFAULT_ENDPOINT).rstrip("/")
        self.timeout = params["timeout"]
        self.poll_interval = params["poll_interval"]
        self._token = None
        self.operations = []

    def _auth_header(self):
        kind = self.params["auth_kind"]
        if kind == "none":
            return {}
        if kind == "accesstoken":
            return {"Authorization": f"Bearer {self.params['access_token']}"}
        if self._token is None:
            self._token = self._google_token(kind)
        return {"Authorization": f"Bearer {self._token}"}

    def _google_token(self, kind):
        try:
            import google.auth
            import google.auth.compute_engine
            import google.auth.transport.requests
            from google.oauth2 import service_account
        except ImportError as exc:
            raise GkeError(f"auth_kind={kind} needs the google-auth and requests libraries ({exc})") from exc
        scopes = self.params.get("scopes") or DEFAULT_SCOPES
        if kind == "serviceaccount":
            contents = self.params.get("service_account_contents")
            if contents:
                info = json.loads(contents) if isinstance(contents, str) else contents
                creds = service_account.Credentials.from_service_account_info(info, scopes=scopes)
            else:
                creds = service_account.Credentials.from_service_account_file(
                    self.params["service_account_file"], scopes=scopes
                )
        elif kind == "machineaccount":
            creds = google.auth.compute_engine.Credentials(self.params.get("service_account_email") or "default")
        else:
            creds, _ = google.auth.default(scopes=scopes)
        creds.refresh(google.auth.transport.requests.Request())
        return creds.token

    def request(self, method, path, body=None, allow_404=False):
        url = f"{self.endpoint}/v1/{path}"
        headers = {"Content-Type": "application/json", **self._auth_header()}
        data = json.dumps(body) if body is not None else None
        try:
            response = open_url(url, method=method, data=data, headers=headers, timeout=60)
            text = response.read()
        except HTTPError as exc:
            text = exc.read()
            try:
                error = json.loads(text).get("error", {})
            except ValueError:
                error = {"message": text.decode(errors="replace")[:500]}
            if exc.code == 404 and allow_404:
                return None
            raise GkeError(
                f"GKE API {method} {path} answered {exc.code} {error.get('status', '')}: {error.get('message', '')}"
            ) from exc
        except URLError as exc:
            raise GkeError(f"Cannot reach the GKE API at {self.endpoint}: {exc.reason}") from exc
        return json.loads(text) if text else {}

    def get(self, path):
        return self.request("GET", path, allow_404=True)

    def wait(self, op, location_path, what):
        """Poll an operation until DONE; record polls; raise on error or timeout."""
        name = op["name"]
        started = time.monotonic()
        polls = 0
        record = {"name": name, "operationType": op.get("operationType"), "target": what, "polls": 0}
        self.operations.append(record)
        while op.get("status") != "DONE":
            if time.monotonic() - started > self.timeout:
                record.update(polls=polls, elapsed_s=round(time.monotonic() - started, 1), status="TIMEOUT")
                raise GkeError(
                    f"Timed out after {self.timeout}s waiting for operation {name} ({op.get('operationType')}) "
                    f"on {what}; GKE continues it. Re-run to resume waiting, or raise the timeout."
                )
            time.sleep(self.poll_interval)
            op = self.request("GET", f"{location_path}/operations/{name}")
            polls += 1
        record.update(polls=polls, elapsed_s=round(time.monotonic() - started, 1), status="DONE")
        if op.get("error"):
            record["error"] = op["error"].get("message")
            raise GkeError(
                f"GKE operation {name} ({op.get('operationType')}) on {what} failed: {op['error'].get('message')}. "
                "The resource is left in status ERROR; re-run the play to delete and recreate it "
                "(recreate_on_error), or delete it by hand."
            )
        return op

    def settle(self, path, what):
        """Wait while a resource is PROVISIONING/RECONCILING/STOPPING (an operation from an earlier run)."""
        started = time.monotonic()
        current = self.get(path)
        while current is not None and current.get("status") in _TRANSITIONAL:
            if time.monotonic() - started > self.timeout:
                raise GkeError(f"{what} stayed {current.get('status')} for {self.timeout}s; re-run later.")
            time.sleep(self.poll_interval)
            current = self.get(path)
        return current


# ---- the modules' logic --------------------------------------------------------------------------
def _location_path(params):
    return f"projects/{params['project']}/locations/{params['location']}"


def _result(client, **kwargs):
    kwargs["operations"] = client.operations
    return kwargs


def _converge(module, client, *, loc, path, what, body, create_url, body_key, ignored, result_key, plan_updates):
    """The converge skeleton shared by gke_cluster and gke_node_pool.

    absent: delete (and wait). present: a resource in status ERROR is deleted first when recreate_on_error;
    a missing one is created (only described in check mode); an existing one is compared with the desired
    body, less the `ignored` fields, and `plan_updates(params, path, desired, current, diffs, before, after)`
    turns the differences into (action, method, url, body) calls, applied one by one.
    The resource is returned under `result_key`.
    """
    params = module.params

    def result(changed, resource, actions, diff=None):
        out = {"changed": changed}
        if diff is not None:
            out["diff"] = diff
        out[result_key] = resource
        out["actions"] = actions
        return _result(client, **out)

    current = client.settle(path, what) if not module.check_mode else client.get(path)

    if params["state"] == "absent":
        if current is None:
            return result(False, {}, [])
        diff = {"before": {"name": params["name"], "status": current.get("status")}, "after": {}}
        if not module.check_mode:
            op = client.request("DELETE", path)
            if params["wait"]:
                client.wait(op, loc, what)
        return result(True, {}, ["delete"], diff)

    desired = body(params)
    actions = []
    if current is not None and current.get("status") == "ERROR" and params["recreate_on_error"]:
        actions.append("delete (status ERROR)")
        if not module.check_mode:
            client.wait(client.request("DELETE", path), loc, what)
        current = None
    if current is None:
        actions.append("create")
        diff = {"before": {}, "after": desired}
        if module.check_mode:
            return result(True, desired, actions, diff)
        op = client.request("POST", create_url, {body_key: desired})
        if params["wait"]:
            client.wait(op, loc, what)
        return result(True, client.get(path) or {}, actions, diff)

    compared = {k: v for k, v in desired.items() if k not in ignored}
    diffs, before, after = compare(compared, current)
    calls = plan_updates(params, path, desired, current, diffs, before, after)
    if not calls:
        return result(False, current, [])
    actions += [action for action, _, _, _ in calls]
    diff = {"before": before, "after": after}
    if not module.check_mode:
        for _, method, url, call_body in calls:  # GKE applies one change per call
            client.wait(client.request(method, url, call_body), loc, what)
    return result(True, client.get(path) or current, actions, diff)


def _cluster_updates(params, path, desired, current, diffs, before, after):
    """The cluster's in-place updates, one desired* field per PUT; fails on an immutable change or a downgrade."""
    default_pool = next((p for p in current.get("nodePools") or [] if p.get("name") == "default-pool"), None)
    if default_pool is not None:
        have = dig(default_pool, "config.machineType")
        if have != params["default_pool_machine_type"]:
            diffs.append("nodePools.default-pool.config.machineType")
    version_wanted = params["version"]
    version_have = current.get("currentMasterVersion", "")
    have_parsed, want_parsed = parse_version(version_have), parse_version(version_wanted)
    upgrade = False
    if have_parsed and want_parsed and have_parsed[: len(want_parsed)] != want_parsed:
        if have_parsed[: len(want_parsed)] > want_parsed:
            raise GkeError(
                f"version {version_wanted} is older than the cluster's {version_have}; GKE cannot downgrade "
                "(set version to the current one or newer)."
            )
        upgrade = True
        before["currentMasterVersion"], after["currentMasterVersion"] = version_have, version_wanted
    error = immutable_error("cluster", params["name"], diffs, CLUSTER_IMMUTABLE)
    if error:
        raise error
    updates = []
    if any(d.startswith("addonsConfig") for d in diffs):
        updates.append(("desiredAddonsConfig", desired["addonsConfig"]))
    if any(d.startswith("nodePoolDefaults") for d in diffs):
        updates.append(("desiredGcfsConfig", desired["nodePoolDefaults"]["nodeConfigDefaults"]["gcfsConfig"]))
    if any(d.startswith("resourceLabels") for d in diffs):
        raise GkeError("labels of a cluster are not managed in place by planb yet; set them at creation")
    if upgrade:
        updates.append(("desiredMasterVersion", version_wanted))
    return [(field, "PUT", path, {"update": {field: value}}) for field, value in updates]


def run_cluster(module):
    params = module.params
    validate_cluster(params)
    check_auth(params)
    if params.get("validate_only"):
        return {"changed": False, "actions": [], "operations": [], "cluster": {}}
    client = GkeClient(params)
    loc = _location_path(params)
    return _converge(
        module,
        client,
        loc=loc,
        path=f"{loc}/clusters/{params['name']}",
        what=f"cluster {params['name']}",
        body=cluster_body,
        create_url=f"{loc}/clusters",
        body_key="cluster",
        ignored=("nodePools", "initialClusterVersion"),
        result_key="cluster",
        plan_updates=_cluster_updates,
    )


def _node_pool_updates(params, path, desired, current, diffs, before, after):
    """The node pool's in-place updates (setAutoscaling, setManagement, then one PUT); fails on an immutable change."""
    error = immutable_error("node pool", params["name"], diffs, NODE_POOL_IMMUTABLE)
    if error:
        raise error
    calls = []
    if any(d.startswith("autoscaling") for d in diffs):
        calls.append(("setAutoscaling", "POST", f"{path}:setAutoscaling", {"autoscaling": desired["autoscaling"]}))
    if any(d.startswith("management") for d in diffs):
        calls.append(("setManagement", "POST", f"{path}:setManagement", {"management": desired["management"]}))
    update = {}
    if "config.labels" in diffs:
        update["labels"] = {"labels": desired["config"]["labels"]}
    if "config.taints" in diffs:
        update["taints"] = {"taints": desired["config"]["taints"]}
    if "config.maxRunDuration" in diffs:
        update["maxRunDuration"] = desired["config"]["maxRunDuration"]
    if update:
        calls.append(("update", "PUT", path, dict(update, name=path)))
    return calls


def run_node_pool(module):
    params = module.params
    validate_node_pool(params)
    check_auth(params)
    if params.get("validate_only"):
        return {"changed": False, "actions": [], "operations": [], "node_pool": {}}
    client = GkeClient(params)
    loc = _location_path(params)
    cluster_path = f"{loc}/clusters/{params['cluster']}"
    cluster = client.get(cluster_path)
    if cluster is None:
        if params["state"] == "absent":
            return _result(client, changed=False, node_pool={}, actions=[])
        if module.check_mode:
            desired = node_pool_body(params)
            return _result(
                client, changed=True, diff={"before": {}, "after": desired}, node_pool=desired, actions=["create"]
            )
        raise GkeError(f"Cluster {params['cluster']} does not exist in {params['location']}; create it first.")
    if params["state"] == "present" and params.get("flex_start") and tpu_family(params["machine_type"] or ""):
        version = cluster.get("currentMasterVersion", "")
        if not version_at_least(version, TPU_FLEX_START_MIN):
            raise GkeError(f"TPU flex_start needs GKE 1.33.0-gke.1712000 or later; cluster runs {version}.")
    return _converge(
        module,
        client,
        loc=loc,
        path=f"{cluster_path}/nodePools/{params['name']}",
        what=f"node pool {params['name']} of cluster {params['cluster']}",
        body=node_pool_body,
        create_url=f"{cluster_path}/nodePools",
        body_key="nodePool",
        ignored=("initialNodeCount",),
        result_key="node_pool",
        plan_updates=_node_pool_updates,
    )


def run_info(module, kind):
    """gke_*_info: read-only; returns the resource (or resources) as GKE has them."""
    params = module.params
    check_auth(params)
    client = GkeClient(params)
    loc = _location_path(params)
    if kind == "cluster":
        if params.get("name"):
            found = client.get(f"{loc}/clusters/{params['name']}")
            return {"changed": False, "exists": found is not None, "clusters": [found] if found else []}
        return {"changed": False, "clusters": client.request("GET", f"{loc}/clusters").get("clusters", [])}
    cluster_path = f"{loc}/clusters/{params['cluster']}"
    if params.get("name"):
        found = client.get(f"{cluster_path}/nodePools/{params['name']}")
        return {"changed": False, "exists": found is not None, "node_pools": [found] if found else []}
    listed = client.get(f"{cluster_path}/nodePools") or {}
    return {"changed": False, "node_pools": listed.get("nodePools", [])}


def main_wrapper(module, runner, *args):
    """Run the logic and turn GkeError into fail_json with the polling report."""
    try:
        result = runner(module, *args)
    except GkeError as exc:
        module.fail_json(msg=str(exc))
        return
    ops = result.get("operations") or []
    slow = [o for o in ops if o.get("polls", 0) > 0]
    if slow:
        summary = ", ".join(f"{o['operationType']} {o['polls']} polls/{o['elapsed_s']}s" for o in slow)
        result["msg"] = f"waited for GKE operations: {summary}"
    module.exit_json(**result)
