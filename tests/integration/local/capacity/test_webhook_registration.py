"""The pod webhook's configuration is removed on stop only while it is still the stopping simulator's own.

Two simulators share the stack's API server here: an in-memory one that keeps the configuration as the
API server does (a PUT keeps the uid, every write a new resourceVersion) and answers a DELETE whose
DeleteOptions.preconditions do not hold with 409 Conflict, as kube-apiserver does. Each simulator serves
its real TLS webhook server. On the real stack: tests/e2e/topologies/test_dws_binding.py.
"""

from __future__ import annotations

import copy
import itertools
from pathlib import Path
from typing import Any

import pytest

from planb.kube import KubeError
from planb.local.capacity import registration
from planb.local.capacity import simulator as sim
from tests.support.integration.capacity_fakes import KUBECONFIG

Obj = dict[str, Any]


class ConfigApi:
    """One MutatingWebhookConfiguration, kept like the API server keeps it."""

    def __init__(self) -> None:
        self.obj: Obj | None = None
        self.versions = itertools.count(1)
        self.uids = itertools.count(1)
        self.deletes: list[Obj | None] = []
        #: Called between a GET and the next write: another client's change in that window.
        self.on_get: list[Any] = []

    def _stored(self, body: Obj, uid: str) -> Obj:
        stored = copy.deepcopy(body)
        stored["metadata"].update(uid=uid, resourceVersion=str(next(self.versions)))
        self.obj = stored
        return copy.deepcopy(stored)

    def get(self, path: str, query: dict[str, str] | None = None) -> Obj | None:
        assert path == registration.PATH
        found = copy.deepcopy(self.obj)
        while self.on_get:
            self.on_get.pop()(self)
        return found

    def create(self, path: str, body: Obj) -> Obj:
        assert path == registration.COLLECTION and self.obj is None
        return self._stored(body, f"uid-{next(self.uids)}")

    def request(self, method: str, path: str, body: Obj | None = None) -> Obj:
        assert (method, path) == ("PUT", registration.PATH) and self.obj is not None and body is not None
        if body["metadata"].get("resourceVersion") != self.obj["metadata"]["resourceVersion"]:
            raise KubeError(409, "Conflict", "the object has been modified")
        return self._stored(body, self.obj["metadata"]["uid"])

    def delete(self, path: str, options: Obj | None = None) -> bool:
        assert path == registration.PATH
        self.deletes.append(copy.deepcopy(options))
        if self.obj is None:
            return False
        wanted = (options or {}).get("preconditions") or {}
        meta = self.obj["metadata"]
        if any(wanted.get(k) not in (None, meta[k]) for k in ("uid", "resourceVersion")):
            raise KubeError(409, "Conflict", "Precondition failed")
        self.obj = None
        return True

    def url(self) -> str:
        assert self.obj is not None
        return str(self.obj["webhooks"][0]["clientConfig"]["url"])


@pytest.fixture()
def api() -> ConfigApi:
    return ConfigApi()


def _simulator(tmp_path: Path, api: ConfigApi, logs: list[str], name: str) -> sim.CapacitySimulator:
    kubeconfig = tmp_path / f"kubeconfig-{name}"
    kubeconfig.write_text(KUBECONFIG)
    simulator = sim.CapacitySimulator(kubeconfig, tmp_path, log=lambda m: logs.append(f"{name}: {m}"))
    simulator.kube = api  # type: ignore[assignment]
    return simulator


def test_a_stopping_simulator_leaves_the_configuration_another_one_registered(tmp_path: Path, api: ConfigApi) -> None:
    logs: list[str] = []
    first, second = (_simulator(tmp_path, api, logs, n) for n in ("first", "second"))
    served_first = first._serve_webhook(lambda: False)
    served_second = second._serve_webhook(lambda: False)
    assert served_first is not None and served_second is not None
    assert api.url() == served_second[0].url != served_first[0].url
    first._remove_webhook(served_first)
    assert api.obj is not None and api.url() == served_second[0].url
    assert api.deletes == []
    assert f"first: pod webhook planb-capacity-simulator left in place: it now points at {served_second[0].url}" in (
        "\n".join(logs)
    )
    second._remove_webhook(served_second)
    assert api.obj is None
    [options] = api.deletes
    assert options is not None and options["kind"] == "DeleteOptions"
    assert options["preconditions"]["uid"] == served_second[1].uid == "uid-1"


def test_its_own_configuration_is_deleted_with_a_uid_precondition(tmp_path: Path, api: ConfigApi) -> None:
    logs: list[str] = []
    simulator = _simulator(tmp_path, api, logs, "only")
    served = simulator._serve_webhook(lambda: False)
    assert served is not None and api.obj is not None
    stored = api.obj["metadata"]
    simulator._remove_webhook(served)
    assert api.obj is None
    assert api.deletes == [
        {
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "preconditions": {"uid": stored["uid"], "resourceVersion": stored["resourceVersion"]},
        }
    ]
    assert logs[-1] == "only: pod webhook planb-capacity-simulator removed"


def test_a_configuration_made_anew_under_the_same_name_is_not_deleted(tmp_path: Path, api: ConfigApi) -> None:
    """Same name and even the same url, but another object (a new uid): it is not this simulator's to delete."""
    logs: list[str] = []
    simulator = _simulator(tmp_path, api, logs, "old")
    served = simulator._serve_webhook(lambda: False)
    assert served is not None and api.obj is not None
    body = copy.deepcopy(api.obj)
    api.obj = None
    api.create(registration.COLLECTION, body)
    simulator._remove_webhook(served)
    assert api.obj is not None and api.obj["metadata"]["uid"] == "uid-2"
    assert api.deletes == []


def test_a_change_between_the_read_and_the_delete_is_refused_by_the_precondition(
    tmp_path: Path, api: ConfigApi
) -> None:
    logs: list[str] = []
    simulator = _simulator(tmp_path, api, logs, "racing")
    served = simulator._serve_webhook(lambda: False)
    assert served is not None and api.obj is not None
    other = copy.deepcopy(api.obj)
    other["webhooks"][0]["clientConfig"]["url"] = "https://127.0.0.1:1/mutate-pods"
    api.on_get.append(lambda a: a.request("PUT", registration.PATH, other))  # another simulator, just after the read
    simulator._remove_webhook(served)
    assert api.obj is not None and api.url() == "https://127.0.0.1:1/mutate-pods"
    assert (
        logs[-1]
        == "racing: pod webhook planb-capacity-simulator left in place: it changed after this simulator read it"
    )
