"""The emulator's long-running operations: how a mutation starts, runs and finishes.

Every mutation returns an operation (``projects/*/locations/*/operations/*``) that reads RUNNING, with
``progress`` metrics, until ``op_seconds`` have passed; the next request after that finishes it (DONE) and
applies its effect to the store (a cluster or pool turns RUNNING, a deleted one and its instance groups go).
An injected fault (``POST /planb/v1/faults``) makes the next matching operation finish with an error instead:
the operation carries it, a created resource turns ERROR, an updated one RUNNING.
GKE runs one operation at a time per cluster; ``busy`` refuses a second one.
"""

from __future__ import annotations

import copy
import secrets
import time
from datetime import UTC, datetime
from typing import Any

from planb.local.gke_emulator.errors import ApiError
from planb.local.gke_emulator.instance_groups import groups_of
from planb.local.gke_emulator.store import Store

Body = dict[str, Any]

#: How long an emulated operation runs. Google documents no duration for GKE's operations (they take minutes);
#: the emulator's only need to stay RUNNING long enough that a client takes the asynchronous path and polls at
#: least once (local mode polls every 0.2 s: inventories/local, planb_gke_poll_interval).
DEFAULT_OP_SECONDS = 0.25


def now() -> str:
    """The current time as GKE writes timestamps (RFC 3339, microseconds, UTC)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Operations:
    """Long-running operations over one store; each finishes ``op_seconds`` after it starts."""

    def __init__(self, store: Store, op_seconds: float = DEFAULT_OP_SECONDS) -> None:
        self.store = store
        self.op_seconds = op_seconds

    def start(
        self, project: str, location: str, op_type: str, target: str, effect: Body, fail: str | None = None
    ) -> Body:
        """Record a RUNNING operation on ``target`` whose ``effect`` applies when it finishes; with ``fail`` (GKE's
        answer from the operation, such as an organisation policy's refusal) it finishes with that error."""
        name = f"operation-{int(time.time() * 1000)}-{secrets.token_hex(4)}"
        full = f"projects/{project}/locations/{location}/operations/{name}"
        for fault in list(self.store.faults) if fail is None else []:
            if fault.get("operationType") in ("*", op_type):
                self.store.faults.remove(fault)
                fail = str(fault.get("message") or f"Injected fault: {op_type} failed mid-operation")
                break
        op: Body = {
            "name": name,
            "zone": location,
            "location": location,
            "operationType": op_type,
            "status": "RUNNING",
            "selfLink": f"https://container.googleapis.com/v1/{full}",
            "targetLink": f"https://container.googleapis.com/v1/{target}",
            "startTime": now(),
            "_planb": {"started": time.time(), "doneAt": time.time() + self.op_seconds, "effect": effect, "fail": fail},
        }
        self.store.operations[full] = op
        self.store.save()
        return self.public(op)

    def public(self, op: Body) -> Body:
        """The operation as GKE shows it: without the emulator's own fields, with progress while RUNNING."""
        out = {k: copy.deepcopy(v) for k, v in op.items() if k != "_planb"}
        meta = op["_planb"]
        if out["status"] == "RUNNING":
            total = max(self.op_seconds, 0.001)
            elapsed = min(time.time() - meta["started"], total)
            out["progress"] = {
                "status": "RUNNING",
                "metrics": [
                    {"name": "elapsed_ms", "intValue": str(int(elapsed * 1000))},
                    {"name": "total_ms", "intValue": str(int(total * 1000))},
                ],
            }
        return out

    def advance(self) -> None:
        """Finish every operation whose time has come and apply its effect."""
        with self.store.lock:
            changed = False
            for op in self.store.operations.values():
                meta = op["_planb"]
                if op["status"] != "RUNNING" or time.time() < meta["doneAt"]:
                    continue
                self._finish(op, meta["effect"], meta["fail"])
                changed = True
            if changed:
                self.store.save()

    def _finish(self, op: Body, effect: Body, fail: str | None) -> None:
        op["status"] = "DONE"
        op["endTime"] = now()
        kind, target = effect["kind"], effect["target"]
        table = self.store.node_pools if kind.endswith("pool") else self.store.clusters
        if fail:
            op["error"] = {"code": 13, "message": fail}
            op["statusMessage"] = fail
            if kind.startswith("create") and target in table:
                table[target]["status"] = "ERROR"
                table[target]["statusMessage"] = fail
            elif target in table:
                table[target]["status"] = "RUNNING"
            return
        if kind.startswith("delete"):
            table.pop(target, None)
            pools = (
                [target] if kind == "delete_pool" else [p for p in self.store.node_pools if p.startswith(target + "/")]
            )
            for pool in pools:
                self.store.node_pools.pop(pool, None)
                for group in groups_of(self.store, pool):
                    self.store.instance_groups.pop(group)
            return
        if target in table:
            table[target]["status"] = "RUNNING"
            table[target].pop("statusMessage", None)
        if kind == "create_cluster":
            for pool_name, pool in self.store.node_pools.items():
                if pool_name.startswith(target + "/"):
                    pool["status"] = "RUNNING"

    def busy(self, cluster: str) -> None:
        """GKE runs one operation at a time per cluster: refuse while one on the cluster or its pools runs."""
        for op in self.store.operations.values():
            target = op["targetLink"].split("/v1/", 1)[1]
            # By whole path segments: an operation on cluster tpu-cluster does not make cluster tpu busy.
            if op["status"] == "RUNNING" and (target == cluster or target.startswith(cluster + "/")):
                raise ApiError(
                    400,
                    f"Operation {op['name']} is currently {op['operationType'].lower()} on cluster "
                    f"{cluster.rsplit('/', 1)[-1]}. Please wait and try again once it is done.",
                    "FAILED_PRECONDITION",
                )

    def get(self, name: str) -> Body:
        """``operations.get``."""
        op = self.store.operations.get(name)
        if op is None:
            raise ApiError(404, f"Not found: {name}.")
        return self.public(op)

    def add_fault(self, request: Body) -> Body:
        """Make the next operation of ``operationType`` (``"*"``: any) fail when it finishes."""
        fault = {"operationType": str(request.get("operationType") or "*"), "message": request.get("message")}
        self.store.faults.append(fault)
        self.store.save()
        return {"faults": self.store.faults}
