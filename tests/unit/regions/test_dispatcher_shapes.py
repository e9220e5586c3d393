"""The dispatcher against a region whose copy of the Workload is a JSON object of a shape planb does not expect:
dispatch.copy_outcome would raise; the region is said unreadable and left waiting,
never failed, and the other regions' copies are observed in the same tick."""

from __future__ import annotations

import pytest

from planb.regions.dispatcher.ledger import FAILED, PENDING, Key
from planb.regions.dispatcher.tick import Dispatcher
from tests.support.unit.dispatcher_fakes import (
    SHAPE,
    WL,
    Obj,
    dispatching,
    outcomes,
    stored,
    tick,
)

COPY = WL


@pytest.mark.parametrize(
    "copy",
    [
        {"metadata": {"uid": "c1"}, "status": "x"},
        {"metadata": {"uid": "c1"}, "status": {"admissionChecks": ["x"]}},
        {"metadata": {"uid": "c1"}, "status": {"schedulingStats": {"evictions": ["x"]}}},
    ],
    ids=["status-x", "check-string", "eviction-string"],
)
def test_a_copy_planb_cannot_read_leaves_its_region_waiting_and_the_others_are_observed(copy: Obj) -> None:
    dispatcher, manager, regions, clock, said = dispatching(
        {"us-east5": None, "europe-west4": None, "asia-northeast1": None}
    )
    tick(dispatcher, manager)
    assert manager.applies[-1][1]["status"]["nominatedClusterNames"] == ["us-east5", "europe-west4", "asia-northeast1"]
    regions["us-east5"].objects[COPY] = copy
    regions["asia-northeast1"].objects[COPY] = {
        "metadata": {"uid": "c2"},
        "status": {"admissionChecks": [{"name": "dws-prov", "state": "Retry", "message": "no capacity"}]},
    }
    clock.now += 5
    tick(dispatcher, manager)
    assert "default/job-1: us-east5 answers objects planb cannot read (AttributeError); taken as unreadable" in said
    ledger, _ = stored(manager)
    assert outcomes(ledger, "us-east5") == [PENDING], "a region planb could not read was failed"
    assert outcomes(ledger, "asia-northeast1")[0] == FAILED, "the next region was not observed"
    assert isinstance(dispatcher, Dispatcher) and Key("us-east5", "dws", SHAPE) in ledger.asks
