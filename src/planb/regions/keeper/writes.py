"""What the regions keeper writes, once its tick has decided (planb.regions.keeper.tick): merge patches to the manager
(the RayJobs' status that releases their quota, the MultiKueueConfig's clusters, its own ConfigMap), each
preconditioned on the resourceVersion read, and deletes in a returning region, each preconditioned on the uid listed.
A conflict (409) or a refusal (422) is said and tried again at the next tick, which reads again."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Protocol

from planb.kube import Kube, KubeError, Obj
from planb.regions.access.kueue_objects import unreadable
from planb.regions.keeper.leftovers import WAITING_KEY, cap
from planb.regions.keeper.options import KeeperSettings
from planb.regions.keeper.origin import OLD_QUARANTINED, QUARANTINED_KEY


class Quarantining(Protocol):
    """What a quarantine writes (planb.regions.keeper.quarantine.Quarantining): the ConfigMap's list, then the
    config's clusters."""

    @property
    def away(self) -> list[str]: ...

    @property
    def clusters(self) -> list[str]: ...


class Rejoining(Protocol):
    """What a rejoin writes (planb.regions.keeper.rejoin.Rejoining): the regions returning into the config, then the
    ConfigMap's list and what its regions wait for, when that changed from what was written."""

    @property
    def returning(self) -> list[str]: ...

    @property
    def away(self) -> list[str]: ...

    @property
    def waiting(self) -> dict[str, str]: ...

    @property
    def written(self) -> Mapping[str, str]: ...

    @property
    def state_changed(self) -> bool: ...


@dataclass(frozen=True)
class Patch:
    """A merge patch to the manager (`kind` for messages), the line said once it is written, and whether the patches
    after it in the tick wait for it (`first`: they are written only once it is)."""

    path: str
    body: Obj
    kind: str
    said: str = ""
    first: bool = False


@dataclass(frozen=True)
class Delete:
    """A stale copy or RayJob to delete in a region, preconditioned on its uid (`options`), and the line said then."""

    kube: Kube
    path: str
    options: Obj
    said: str


def config_patches(
    state: Obj,
    config: Obj,
    settings: KeeperSettings,
    quarantining: Quarantining | None,
    rejoining: Rejoining | None,
) -> list[Patch]:
    """The writes of a quarantine (the ConfigMap's list first, so the regions come back, then the config) or of a
    rejoin (the regions returning into the config first, then the ConfigMap's list and what its regions wait for)."""
    if quarantining is not None:
        return [
            state_patch(state, quarantining.away, settings.state_path),
            config_patch(config, quarantining.clusters, settings.config_path),
        ]
    patches = []
    if rejoining is not None and rejoining.returning:
        line = f"{', '.join(rejoining.returning)} back in the MultiKueueConfig {settings.config}: nothing stale left"
        patches.append(config_patch(config, [*listed(config), *rejoining.returning], settings.config_path, line))
    if rejoining is not None and rejoining.state_changed:
        patches.append(state_patch(state, rejoining.away, settings.state_path, rejoining.waiting, rejoining.written))
    return patches


def listed(config: Obj) -> list[str]:
    """The MultiKueueConfig's clusters."""
    return [str(c) for c in (config.get("spec") or {}).get("clusters") or []]


def config_patch(config: Obj, clusters: list[str], path: str, said: str = "") -> Patch:
    """The MultiKueueConfig's clusters (the old annotation removed), preconditioned on the resourceVersion read; the
    patches after it wait for it."""
    annotations = (config.get("metadata") or {}).get("annotations") or {}
    metadata: Obj = {"resourceVersion": config["metadata"]["resourceVersion"]}
    if OLD_QUARANTINED in annotations:
        metadata["annotations"] = {OLD_QUARANTINED: None}
    return Patch(path, {"metadata": metadata, "spec": {"clusters": clusters}}, "MultiKueueConfig", said, first=True)


def state_patch(
    state: Obj,
    away: list[str],
    path: str,
    waiting: Mapping[str, str] | None = None,
    written: Mapping[str, str] = MappingProxyType({}),
) -> Patch:
    """The keeper's ConfigMap's quarantine list, and what its regions wait for when that changed from what was
    `written` (`waiting`, for planb status: leftovers.WAITING_KEY), preconditioned on the resourceVersion read; the
    patches after it wait for it."""
    data: Obj = {QUARANTINED_KEY: json.dumps(away) if away else None}
    kept = {k: v for k, v in (waiting or {}).items() if k in away}
    if waiting is not None and kept != written:
        data[WAITING_KEY] = json.dumps(kept, sort_keys=True) if kept else None
    body = {"metadata": {"resourceVersion": state["metadata"]["resourceVersion"]}, "data": data}
    return Patch(path, body, "ConfigMap", first=True)


class ManagerWrites:
    def __init__(self, manager: Kube, say: Callable[[str], None]) -> None:
        self.manager, self.say = manager, say

    def write_tick(self, deletes: Mapping[str, Sequence[Delete]], patches: Sequence[Patch]) -> list[Patch]:
        """One tick's writes, in the order decided: each region's deletes (a region whose delete fails is said
        unreadable, and asked nothing more), then the patches (after one marked `first` that fails, none). The
        patches written."""
        failed: list[tuple[str, Exception]] = []
        for region, found in deletes.items():
            try:
                for delete in found:
                    delete.kube.delete(delete.path, delete.options)
                    self.say(delete.said)
            except Exception as exc:  # planb's policy: any error: unreadable, because one region never stops the others
                failed.append((region, exc))
        written = []
        for patch in patches:
            try:
                self.manager.merge_patch(patch.path, patch.body)
            except KubeError as exc:
                name = patch.path.removesuffix("/status").rsplit("/", 1)[-1]
                if exc.status not in (409, 422):
                    raise
                # planb's policy: a refusal (422) is said, and the tick goes on, because the rest of it does not need
                # that write; a conflict (409) is tried again from the next tick's reading.
                self.say(
                    f"the manager refused the write of the {patch.kind} {name} (422: {cap(str(exc), 500)})"
                    if exc.status == 422
                    else f"the {patch.kind} {name} changed meanwhile; trying again"
                )
                if patch.first:
                    break
                continue
            written.append(patch)
            if patch.said:
                self.say(patch.said)
        for region, error in failed:
            self.say(unreadable(region, error, "answers Kueue again but not planb yet"))
        return written
