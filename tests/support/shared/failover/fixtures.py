"""Fixtures of the failover controller's tests (unit and, for its metrics server, integration): a pinned clock,
recorded sleeps, no network; each folder's conftest brings them in."""

from __future__ import annotations

import time
import urllib.request
from types import SimpleNamespace
from typing import Any

import pytest

from planb.failover import controller as failover
from planb.failover import moves
from tests.support.shared.failover.fake_api import (
    FakeCluster,
)
from tests.support.shared.failover.kueue_steps import (
    Clock,
    Kueue,
    make_cluster,
)


@pytest.fixture(autouse=True)
def naps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The controller's sleeps (its retry back-off), recorded instead of slept."""
    slept: list[float] = []
    monkeypatch.setattr(failover, "time", SimpleNamespace(sleep=slept.append, monotonic=time.monotonic))
    return slept


@pytest.fixture()
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever would go past the fakes fails here instead of opening a connection."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"a real Kubernetes API call: {args[:3]}")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)


@pytest.fixture()
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """The controller's RFC 3339 now (annotation and Event timestamps, planb.failover.moves), pinned."""
    pinned = Clock()
    monkeypatch.setattr(moves, "now_rfc3339", pinned)
    return pinned


@pytest.fixture()
def cluster(clock: Clock) -> FakeCluster:
    return make_cluster()


@pytest.fixture()
def kueue(cluster: FakeCluster) -> Kueue:
    return Kueue(cluster)


__all__ = ["clock", "cluster", "kueue", "naps", "no_network"]
