"""The emulator held to Google's discovery documents: what it accepts, what it answers, what it stores.

* ``checked_request``: a request body against its method's request schema (``gke_emulator.discovery``), before the
  emulator reads it; a violation is Google's answer, HTTP 400 ``INVALID_ARGUMENT`` with every violation in the
  message (one a line) and a ``google.rpc.BadRequest`` detail naming each field (``gke_emulator.contract``). What
  passes comes back in canonical form (int64 fields as JSON strings, int32 as numbers), so the emulator stores
  int64 fields as Google answers them.
* ``checked_response``: the emulator's answer through the method's response schema, in canonical form; an answer
  the schema refuses is the emulator's own bug, answered HTTP 500 with what is wrong.
* ``state_violations`` / ``state_dir_violations``: every cluster, node pool, operation, reservation, instance
  group and bucket the emulator stores, against its schema, values in canonical form
  (``planb local gke-emulator validate``).

Emulator-only paths (``/planb/v1``) and Cloud Quotas (no document shipped) are not checked.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from planb.local.gke_emulator import contract, discovery
from planb.local.gke_emulator.errors import ApiError
from planb.local.gke_emulator.store import emulator_dir

Body = dict[str, Any]

#: The store's tables that hold REST bodies: table -> (API, schema).
STORED_SCHEMAS = {
    "clusters": ("container", "Cluster"),
    "nodePools": ("container", "NodePool"),
    "operations": ("container", "Operation"),
    "reservations": ("compute", "Reservation"),
    "instanceGroupManagers": ("compute", "InstanceGroupManager"),
    "resourcePolicies": ("compute", "ResourcePolicy"),
    "buckets": ("storage", "Bucket"),
}


def _where(method: discovery.Method) -> str:
    api = method.api
    return f"{api} {discovery.version(api)} (discovery revision {discovery.revision(api)}) {method.id}"


def checked_request(method: discovery.Method, body: Body) -> Body:
    """The request body in canonical form; raises Google's 400 when the method's request schema refuses it."""
    if method.request is None:
        return body
    canonical, violations = contract.conform(
        method.api, method.request, body, root=contract.body_root(method.api), request=True
    )
    if violations:
        raise ApiError(
            400,
            "\n".join(v.description for v in violations),
            "INVALID_ARGUMENT",
            details=[contract.bad_request(violations)],
        )
    result: Body = canonical
    return result


def checked_response(method: discovery.Method, answer: Body) -> Body:
    """The emulator's answer in canonical form; an answer its response schema refuses is answered 500."""
    if method.response is None:
        return answer
    canonical, violations = contract.conform(method.api, method.response, answer)
    if violations:
        raise ApiError(
            500,
            f"planb's GKE emulator answered {_where(method)} with a body its discovery document refuses (an "
            "emulator bug): " + "; ".join(v.description for v in violations),
        )
    result: Body = canonical
    return result


def state_violations(state: Body) -> list[str]:
    """What in the emulator's state (state.json's tables) its schemas refuse, one line per violation."""
    out: list[str] = []
    for table, (api, schema_id) in STORED_SCHEMAS.items():
        for name, body in sorted((state.get(table) or {}).items()):
            public = {k: v for k, v in body.items() if not k.startswith("_")} if isinstance(body, dict) else body
            _, violations = contract.conform(api, schema_id, public, output=True)
            out += [f"{table} {name} ({api} {discovery.version(api)} {schema_id}): {v.description}" for v in violations]
    return out


def state_dir_violations(state_dir: Path | None = None) -> list[str]:
    """``state_violations`` of the emulator's state file under ``state_dir`` (default: planb's state dir)."""
    path = emulator_dir(state_dir) / "state.json"
    if not path.exists():
        return []
    state = json.loads(path.read_text())
    return state_violations(state if isinstance(state, dict) else {})


def cmd_validate(args: argparse.Namespace) -> int:
    """`planb local gke-emulator validate`: exit 1 and print each violation when the stored state has any."""
    violations = state_dir_violations(Path(args.state_dir) if args.state_dir else None)
    revisions = ", ".join(f"{api} v1 {discovery.revision(api)}" for api in ("container", "compute"))
    for line in violations:
        print(line)
    if violations:
        print(f"{len(violations)} violation(s) of the discovery documents ({revisions})")
        return 1
    print(f"every stored resource validates against the discovery documents ({revisions})")
    return 0


def register(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `planb local gke-emulator validate`."""
    validate = actions.add_parser(
        "validate", help="check every stored cluster, node pool, operation and reservation against Google's schemas"
    )
    validate.add_argument("--state-dir", default=None, help="planb's state directory (default PLANB_STATE_DIR/.state)")
    validate.set_defaults(handler=cmd_validate)
