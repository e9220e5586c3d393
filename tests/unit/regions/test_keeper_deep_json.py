"""JSON nested deeper than Python's parser goes, where the keeper reads JSON that others can write: its ConfigMap in
kueue-system (the quarantined regions, what each waits for) and the ledger's. `json.loads` raises RecursionError
there, not ValueError, and `planb regions keep` (planb.regions.cli.run) goes on only after a KubeError,
RegionAccessError or KeeperStateError: the keeper exited and its pod restarted again and again. Such a value is read
as any other the keeper did not write (nothing quarantined, nothing waited for, the ledger's key said as a problem),
and the tick goes on. Fakes from tests/support/unit/keeper_fakes.py."""

from __future__ import annotations

import json

import pytest

from planb.regions.dispatcher import ledger_store as cs
from planb.regions.keeper import leftovers, quarantine
from tests.support.unit.keeper_fakes import (
    CONFIG,
    STATE,
    FakeKube,
    keeper_state,
    make,
    manager,
    manager_workload,
    ticks,
)

#: 100,000 lists, one inside the other: valid JSON of 200 KB, far under a ConfigMap's 1 MiB.
DEEP = "[" * 100_000 + "]" * 100_000


def test_the_parser_gives_up_on_it_with_recursion_not_value_error() -> None:
    with pytest.raises(RecursionError):
        json.loads(DEEP)


def test_the_keepers_configmap_nested_too_deep_reads_as_nothing_quarantined_and_nothing_waited_for() -> None:
    assert quarantine.quarantined({"data": {quarantine.QUARANTINED_KEY: DEEP}}) == []
    assert leftovers.waiting_of({"data": {leftovers.WAITING_KEY: DEEP}}) == {}


def test_a_ledger_nested_too_deep_is_said_as_a_problem_of_its_key() -> None:
    path = f"/api/v1/namespaces/{cs.KUEUE_NAMESPACE}/configmaps/{cs.CONFIGMAP}"
    stored = cs.read(FakeKube({path: {"data": {cs.LEDGER_KEY: DEEP}}}))  # type: ignore[arg-type]
    assert stored.found and stored.ledger is None
    assert len(stored.problems) == 1 and stored.problems[0].startswith(
        f"ConfigMap {cs.KUEUE_NAMESPACE}/{cs.CONFIGMAP}, key {cs.LEDGER_KEY}: "
    ), stored.problems


def test_the_keeper_ticks_on_with_its_configmap_nested_too_deep(regions: dict[str, FakeKube]) -> None:
    state = keeper_state()
    state["data"][quarantine.QUARANTINED_KEY] = DEEP
    state["data"][leftovers.WAITING_KEY] = DEEP
    workload = manager_workload("QuotaReserved", "Admitted", cluster_name="b")
    kube = manager(regions={"a": True, "b": True}, state=state, workload=workload)
    regions["a"], regions["b"] = FakeKube({}), FakeKube({})
    said: list[str] = []
    clock = [0.0]
    keeper = make(kube, said, clock)
    ticks(keeper, clock, 0, 1)  # each tick raised RecursionError before the fix
    # Both ticks looked at the keeper's ConfigMap and went past it: no region is taken for quarantined, so the
    # MultiKueueConfig keeps both and nothing is put back into it.
    assert kube.gets.count(STATE) == 2, kube.gets
    assert not [path for path, _ in kube.patches if path == CONFIG], kube.patches
