"""The emulator's state: clusters, node pools and operations, kept as JSON on disk.

Layout under ``<state_dir>/gke-emulator/``::

    state.json      {"clusters": {name: Cluster}, "nodePools": {name: NodePool}, "operations": {...},
                     "instanceGroupManagers": {name: InstanceGroupManager}, "reservations": {name: Reservation},
                     "resourcePolicies": {name: ResourcePolicy}, "buckets": {name: Bucket},
                     "faults": [...], "httpFaults": [...],
                     "projectApis": {"services": ..., "quotas": [...], "operations": ...},
                     "capacityAdvice": {"signals": [...], "refusedMachineTypes": [...]}}
    requests.jsonl  one line per API request: method, path, status, time, and userProject when the request
                    carried x-goog-user-project (the quota project, https://cloud.google.com/apis/docs/system-parameters)
    emulator.pid / emulator.log / emulator.json (port)   written by `planb local gke-emulator start`

Resources are stored as GKE v1 REST bodies keyed by their full resource name
(``projects/P/locations/L/clusters/C[/nodePools/N]``).

Public API for readers on this machine (`planb local gke-emulator start`, tests; the capacity simulator
reads the pools over the GKE API instead, planb.local.capacity.gke_api)::

    from planb.local.gke_emulator.store import list_node_pools, list_clusters
    for pool in list_node_pools():          # default: planb.paths.state_dir()
        pool["name"], pool["cluster"], pool["config"]["machineType"], pool["status"], ...

Each node pool dict is the GKE v1 ``NodePool`` body plus ``cluster`` (the cluster's full name)
and ``resourceName``. Reading needs no running emulator.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from planb.errors import PlanbError
from planb.local.statefile import open_private, private_dir, write_atomic
from planb.paths import state_dir as default_state_dir

Body = dict[str, Any]


def emulator_dir(state_dir: Path | None = None) -> Path:
    """The emulator's folder under the state directory."""
    return (state_dir or default_state_dir()) / "gke-emulator"


#: The top-level maps of state.json; each maps a full resource name to its GKE v1 (or Compute v1) body.
_TABLES = (
    "clusters",
    "nodePools",
    "operations",
    "instanceGroupManagers",
    "reservations",
    "resourcePolicies",
    "buckets",
    "projectApis",
    "capacityAdvice",
)
#: The top-level lists: injected faults (operations that fail, HTTP answers).
_LISTS = ("faults", "httpFaults")


class StateFileError(PlanbError):
    """The emulator's state file exists but cannot be read as the emulator's state."""


def empty_state() -> Body:
    state: Body = {key: {} for key in _TABLES}
    state.update({key: [] for key in _LISTS})
    return state


def _read_state(state_dir: Path | None) -> Body:
    path = emulator_dir(state_dir) / "state.json"
    if not path.exists():
        return empty_state()
    try:
        data = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as exc:
        raise StateFileError(_corrupt(path, f"not valid JSON: {exc}")) from exc
    if not isinstance(data, dict):
        raise StateFileError(_corrupt(path, f"a JSON {type(data).__name__} instead of an object"))
    wrong = [key for key in _TABLES if not isinstance(data.get(key, {}), dict)]
    wrong += [key for key in _LISTS if not isinstance(data.get(key, []), list)]
    if wrong:
        raise StateFileError(_corrupt(path, f"{', '.join(wrong)} has the wrong type"))
    for key, empty in empty_state().items():
        data.setdefault(key, empty)
    result: Body = data
    return result


def _corrupt(path: Path, detail: str) -> str:
    return (
        f"the GKE emulator's state file {path} is unreadable ({detail}). It holds the emulator's clusters, "
        "node pools and operations. Fix: `planb local gke-emulator stop --purge` empties it (re-run "
        "`ansible-playbook site.yml` to recreate the clusters), or move it aside first to keep it: "
        f"mv {path} {path}.bad"
    )


def reset_state(state_dir: Path | None = None) -> None:
    """Empty the emulator's state and request log without reading them (works on a corrupt state file)."""
    root = emulator_dir(state_dir)
    private_dir(root)
    _write_json(root / "state.json", empty_state())
    (root / "requests.jsonl").unlink(missing_ok=True)


def _write_json(path: Path, data: Body) -> None:
    """Write temp + rename, so a reader never sees half a file."""
    write_atomic(path, json.dumps(data, indent=1, sort_keys=True))


def list_clusters(state_dir: Path | None = None) -> list[Body]:
    """Every cluster the emulator holds (GKE v1 Cluster bodies, without their nodePools)."""
    return [dict(body, resourceName=name) for name, body in sorted(_read_state(state_dir)["clusters"].items())]


def list_node_pools(state_dir: Path | None = None, cluster: str | None = None) -> list[Body]:
    """Every node pool the emulator holds, optionally only those of one cluster (short or full name)."""
    out: list[Body] = []
    for name, body in sorted(_read_state(state_dir)["nodePools"].items()):
        parent = name.rsplit("/nodePools/", 1)[0]
        if cluster is None or cluster in (parent, parent.rsplit("/", 1)[-1]):
            out.append(dict(body, resourceName=name, cluster=parent))
    return out


def read_request_log(state_dir: Path | None = None) -> list[Body]:
    """The emulator's request log (oldest first)."""
    path = emulator_dir(state_dir) / "requests.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class Store:
    """Thread-safe, file-backed state. Every mutation is written through to state.json."""

    def __init__(self, state_dir: Path | None = None) -> None:
        self.root = emulator_dir(state_dir)
        private_dir(self.root)
        self.lock = threading.RLock()
        self.data = _read_state(state_dir)

    def save(self) -> None:
        with self.lock:
            _write_json(self.root / "state.json", self.data)

    @property
    def clusters(self) -> dict[str, Body]:
        result: dict[str, Body] = self.data["clusters"]
        return result

    @property
    def node_pools(self) -> dict[str, Body]:
        result: dict[str, Body] = self.data["nodePools"]
        return result

    @property
    def operations(self) -> dict[str, Body]:
        result: dict[str, Body] = self.data["operations"]
        return result

    @property
    def instance_groups(self) -> dict[str, Body]:
        """Compute Engine managed instance groups backing the node pools (their targetSize is the pool's size)."""
        result: dict[str, Body] = self.data["instanceGroupManagers"]
        return result

    @property
    def reservations(self) -> dict[str, Body]:
        """Compute Engine reservations (projects/P/zones/Z/reservations/N -> Reservation), gke_emulator.reservations."""
        result: dict[str, Body] = self.data["reservations"]
        return result

    @property
    def resource_policies(self) -> dict[str, Body]:
        """Compute Engine workload policies (projects/P/regions/R/resourcePolicies/N) (resource_policies)."""
        result: dict[str, Body] = self.data["resourcePolicies"]
        return result

    @property
    def buckets(self) -> dict[str, Body]:
        """Cloud Storage buckets (name -> Bucket, storage v1), gke_emulator.buckets."""
        result: dict[str, Body] = self.data["buckets"]
        return result

    @property
    def project_apis(self) -> Body:
        """Service Usage and Cloud Quotas state (planb.local.gke_emulator.project): services, quotas, operations."""
        result: Body = self.data["projectApis"]
        return result

    @property
    def faults(self) -> list[Body]:
        result: list[Body] = self.data["faults"]
        return result

    @property
    def http_faults(self) -> list[Body]:
        """Injected HTTP answers: {"status", "count", "method"} for the next matching API requests."""
        result: list[Body] = self.data["httpFaults"]
        return result

    def log_request(self, method: str, path: str, status: int, user_project: str | None = None) -> None:
        entry: Body = {"method": method, "path": path, "status": status, "time": time.time()}
        if user_project is not None:
            entry["userProject"] = user_project
        with self.lock, open_private(self.root / "requests.jsonl", "a") as fh:
            fh.write(json.dumps(entry) + "\n")

    def request_log(self) -> list[Body]:
        return read_request_log(self.root.parent)

    def reset(self) -> None:
        """Forget everything (clusters, pools, operations, faults, request log)."""
        with self.lock:
            self.data = empty_state()
            reset_state(self.root.parent)
