"""An in-memory API server with the calls of planb.failover.kubeapi.Api, for the controller's unit tests."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from planb.failover.kubeapi import JSON_PATCH, ApiError
from tests.support.shared.failover.objects import (
    KUEUE_API,
    NS,
    RAY_API,
)

Obj = dict[str, Any]


class Killed(BaseException):
    """SIGKILL: the controller process dies at its next API call (nothing in it catches this)."""


@dataclass
class Write:
    verb: str  # patch | create
    plural: str
    namespace: str
    name: str
    body: Any  # the JSON patch (its operations) or the created object
    content_type: str = ""


Key = tuple[str, str, str, str]  # apiVersion, plural, namespace ("" if cluster-scoped), name


def _tokens(path: str) -> list[str]:
    assert path.startswith("/"), path
    return [token.replace("~1", "/").replace("~0", "~") for token in path[1:].split("/")]


def json_patch(doc: Obj, operations: list[Obj]) -> Obj:
    """RFC 6902 (test, add, replace, remove), all or nothing, as the API server applies it."""
    out = copy.deepcopy(doc)
    for op in operations:
        *parents, last = _tokens(op["path"])
        target: Any = out
        for token in parents:
            target = target[int(token)] if isinstance(target, list) else target[token]
        kind = op["op"]
        if kind == "test":
            current = target[int(last)] if isinstance(target, list) else target[last]
            if current != op["value"]:
                raise ValueError(f"testing value {op['path']} failed")
        elif kind == "add" and isinstance(target, list):
            target.insert(len(target) if last == "-" else int(last), copy.deepcopy(op["value"]))
        elif kind == "add":
            target[last] = copy.deepcopy(op["value"])
        elif kind == "replace":
            if isinstance(target, list):
                target[int(last)] = copy.deepcopy(op["value"])
            else:
                target[last]  # must exist
                target[last] = copy.deepcopy(op["value"])
        elif kind == "remove":
            del target[int(last) if isinstance(target, list) else last]
        else:
            raise ValueError(f"unsupported op {kind}")
    return out


class FakeCluster:
    """The API server as the controller sees it (planb.failover.kubeapi.Api): custom objects and Events, in memory.

    `calls` records every request the controller makes, `writes` the accepted writes and `rejected`
    the refused ones. Kueue's and KubeRay's own changes go through `update` and are not recorded."""

    def __init__(self) -> None:
        self.objects: dict[Key, Obj] = {}
        self.calls: list[tuple[str, str, str]] = []
        self.writes: list[Write] = []
        self.rejected: list[Write] = []
        self.version = 5000
        self.dying = False
        self.kill_after_patch_of: str | None = None
        #: Runs once, just before the next patch applies: another writer changed the object.
        self.before_next_patch: Callable[[], None] | None = None

    # ----------------------------------------------------------------- test side
    def _key(self, plural: str, name: str, namespace: str) -> Key:
        api = {"workloads": KUEUE_API, "resourceflavors": KUEUE_API, "rayjobs": RAY_API, "events": "v1"}[plural]
        return api, plural, namespace, name

    def put(self, plural: str, obj: Obj) -> Obj:
        meta = obj["metadata"]
        self.objects[self._key(plural, meta["name"], meta.get("namespace", ""))] = copy.deepcopy(obj)
        return copy.deepcopy(obj)

    def read(self, plural: str, name: str, namespace: str = NS) -> Obj:
        return copy.deepcopy(self.objects[self._key(plural, name, namespace)])

    def update(self, plural: str, name: str, change: Callable[[Obj], None]) -> Obj:
        """Another controller's write; returns the object as a watch delivers it."""
        key = self._key(plural, name, NS)
        obj = copy.deepcopy(self.objects[key])
        change(obj)
        obj["metadata"]["resourceVersion"] = self._next_version()
        self.objects[key] = obj
        return copy.deepcopy(obj)

    def events(self) -> list[Obj]:
        return [copy.deepcopy(o) for (_, plural, _, _), o in self.objects.items() if plural == "events"]

    def patches(self, plural: str) -> list[Write]:
        return [w for w in self.writes if w.verb == "patch" and w.plural == plural]

    # ----------------------------------------------------------------- API side
    def _next_version(self) -> str:
        self.version += 1
        return str(self.version)

    def request(self, verb: str, plural: str, name: str) -> None:
        if self.dying:
            self.dying = False
            raise Killed(f"killed before {verb} {plural}/{name}")
        self.calls.append((verb, plural, name))

    def _get(self, api: str, plural: str, namespace: str, name: str) -> Obj:
        self.request("get", plural, name)
        found = self.objects.get((api, plural, namespace, name))
        if found is None:
            raise ApiError(404, "NotFound")
        return copy.deepcopy(found)

    def patch(self, api: str, plural: str, namespace: str, name: str, body: list[Obj], content_type: str) -> Obj:
        self.request("patch", plural, name)
        write = Write("patch", plural, namespace, name, copy.deepcopy(body), content_type)
        if self.before_next_patch is not None:
            hook, self.before_next_patch = self.before_next_patch, None
            hook()
        key = (api, plural, namespace, name)
        if key not in self.objects:
            raise ApiError(404, "NotFound")
        if content_type != "application/json-patch+json":
            self.rejected.append(write)
            raise ApiError(415, "UnsupportedMediaType")
        try:
            patched = json_patch(self.objects[key], body)
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            self.rejected.append(write)
            raise ApiError(422, "Invalid") from exc
        patched["metadata"]["resourceVersion"] = self._next_version()
        self.objects[key] = patched
        self.writes.append(write)
        if self.kill_after_patch_of == plural:
            self.kill_after_patch_of, self.dying = None, True
        return copy.deepcopy(patched)

    def create_event(self, namespace: str, body: Obj) -> Obj:
        name = body["metadata"]["name"]
        self.request("create", "events", name)
        write = Write("create", "events", namespace, name, copy.deepcopy(body))
        key = ("v1", "events", namespace, name)
        if key in self.objects:
            self.rejected.append(write)
            raise ApiError(409, "AlreadyExists")
        created = copy.deepcopy(body)
        created["metadata"]["resourceVersion"] = self._next_version()
        self.objects[key] = created
        self.writes.append(write)
        return copy.deepcopy(created)

    # -------------------------------------------------- planb.failover.kubeapi.Api
    def get(self, group: str, version: str, plural: str, namespace: str, name: str) -> Obj:
        return self._get(f"{group}/{version}" if group else version, plural, namespace, name)

    def list_objects(self, group: str, version: str, plural: str, namespace: str) -> Obj:
        """One namespace's objects ('' : the whole cluster's), as a List with the current resourceVersion."""
        self.request("list", plural, namespace)
        api = f"{group}/{version}" if group else version
        items = [
            copy.deepcopy(o)
            for (a, p, ns, _), o in self.objects.items()
            if (a, p) == (api, plural) and namespace in ("", ns)
        ]
        return {"apiVersion": api, "items": items, "metadata": {"resourceVersion": str(self.version)}}

    def json_patch(self, group: str, version: str, plural: str, namespace: str, name: str, ops: list[Obj]) -> Obj:
        return self.patch(f"{group}/{version}", plural, namespace, name, ops, JSON_PATCH)
