"""The watch cache (planb.local.informer): list, watch from the list's version, resume, relist after a 410."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from planb.kube import KubeError
from planb.local import informer as informer_mod

Obj = dict[str, Any]
PR_LIST = "/apis/autoscaling.x-k8s.io/v1/provisioningrequests"
NS = "default"


class WatchApi:
    """Lists, then serves scripted watch streams; a 410 forces a new list."""

    def __init__(self) -> None:
        self.lists = 0
        self.streams: list[list[Obj] | KubeError] = []
        self.watched_from: list[str] = []

    def get(self, path: str, query: dict[str, str] | None = None) -> Obj:
        self.lists += 1
        return {"metadata": {"resourceVersion": "10"}, "items": [pr("a", "5")]}

    def watch(self, path: str, version: str, timeout: int) -> Iterator[Obj]:
        self.watched_from.append(version)
        if not self.streams:
            raise KubeError(0, "done", "no more streams")
        step = self.streams.pop(0)
        if isinstance(step, KubeError):
            raise step
        yield from step


def pr(name: str, version: str, extra: str = "") -> Obj:
    return {"metadata": {"namespace": NS, "name": name, "resourceVersion": version, "labels": {"x": extra}}}


def test_informer_lists_watches_resumes_and_relists_after_410() -> None:
    api = WatchApi()
    api.streams = [
        [{"type": "ADDED", "object": pr("b", "11")}, {"type": "BOOKMARK", "object": pr("", "12")}],
        [{"type": "MODIFIED", "object": pr("a", "13", "new")}, {"type": "DELETED", "object": pr("b", "14")}],
        KubeError(410, "Gone", "too old"),
    ]
    changes: list[int] = []

    def on_change() -> None:
        changes.append(1)
        if not api.streams:
            informer.stop()  # every scripted stream served: end the loop

    informer = informer_mod.Informer(api, PR_LIST, on_change, log=lambda _: None)  # type: ignore[arg-type]
    informer._loop()
    assert api.watched_from[:3] == ["10", "12", "14"]  # resumed from the last version, bookmarks included
    assert api.lists == 2  # the 410 made it list again
    assert informer.synced.is_set()
    assert len(changes) == 5  # two lists and three changes; the bookmark is none
    assert set(informer.items) == {f"{NS}/a"}


def test_informer_keeps_a_newer_own_write_over_an_older_event() -> None:
    informer = informer_mod.Informer(WatchApi(), PR_LIST)  # type: ignore[arg-type]
    informer.put(pr("a", "20", "mine"))
    informer.put(pr("a", "19", "older"))
    assert informer.items[f"{NS}/a"]["metadata"]["labels"]["x"] == "mine"
