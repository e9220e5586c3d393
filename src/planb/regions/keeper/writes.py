"""What the regions keeper writes on the manager: the MultiKueueConfig's clusters and its own ConfigMap's list of
quarantined regions and what they wait for, each preconditioned on the resourceVersion read (a conflict is said and
tried again at the next tick; planb.regions.keeper.tick)."""

from __future__ import annotations

import json
from collections.abc import Callable

from planb.kube import Kube, KubeError, Obj
from planb.regions.access.connection import KUEUE
from planb.regions.keeper import leftovers, quarantine
from planb.regions.keeper.options import KeeperSettings


class ManagerWrites:
    def __init__(self, manager: Kube, settings: KeeperSettings, say: Callable[[str], None]) -> None:
        self.manager, self.settings, self.say = manager, settings, say
        #: What the quarantined regions wait for as this keeper last wrote it (None: as stored).
        self.waiting_written: dict[str, str] | None = None

    @property
    def config_path(self) -> str:
        return f"{KUEUE}/multikueueconfigs/{self.settings.config}"

    @property
    def state_path(self) -> str:
        return f"/api/v1/namespaces/{self.settings.namespace}/configmaps/{self.settings.config}-keeper"

    def written(self, state: Obj) -> dict[str, str]:  # what they wait for as this keeper wrote it, else as stored
        return self.waiting_written if self.waiting_written is not None else leftovers.waiting_of(state)

    def write_config(self, config: Obj, clusters: list[str]) -> bool:
        """The config's clusters (the old annotation removed); False when it changed meanwhile."""
        annotations = (config.get("metadata") or {}).get("annotations") or {}
        metadata: Obj = {"resourceVersion": config["metadata"]["resourceVersion"]}
        if quarantine.OLD_QUARANTINED in annotations:
            metadata["annotations"] = {quarantine.OLD_QUARANTINED: None}
        return self.patch(self.config_path, {"metadata": metadata, "spec": {"clusters": clusters}}, "MultiKueueConfig")

    def write_state(self, state: Obj, away: list[str], waiting: dict[str, str] | None = None) -> bool:
        """The ConfigMap's quarantine list, and what its regions wait for when that changed (`waiting`, for planb
        status: leftovers.WAITING_KEY); False when the ConfigMap changed meanwhile."""
        data: Obj = {quarantine.QUARANTINED_KEY: json.dumps(away) if away else None}
        kept = {k: v for k, v in (waiting or {}).items() if k in away}
        if waiting is not None and kept != self.written(state):
            data[leftovers.WAITING_KEY] = json.dumps(kept, sort_keys=True) if kept else None
        body = {"metadata": {"resourceVersion": state["metadata"]["resourceVersion"]}, "data": data}
        return self.patch(self.state_path, body, "ConfigMap")

    def patch(self, path: str, body: Obj, kind: str) -> bool:
        try:
            self.manager.merge_patch(path, body)
        except KubeError as exc:
            name = path.removesuffix("/status").rsplit("/", 1)[-1]
            if exc.status == 422:  # planb's policy: said, and the tick goes on, because the rest of it does not need it
                self.say(f"the manager refused the write of the {kind} {name} (422: {leftovers.cap(str(exc), 500)})")
                return False
            if exc.status != 409:
                raise
            self.say(f"the {kind} {name} changed meanwhile; trying again")
            return False
        return True
