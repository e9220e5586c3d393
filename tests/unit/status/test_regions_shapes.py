"""`planb status` on a MultiKueue manager against a region whose copy of the Workload is a JSON object of a shape
planb does not expect: that region reads "unreadable: ..." (the exception's type only),
the other regions as usual, instead of the command stopping."""

from __future__ import annotations

from typing import Any

import pytest

from planb.status import gather, regions

Obj = dict[str, Any]
KUEUE = "/apis/kueue.x-k8s.io/v1beta2"


class Region:
    def __init__(self, copy: Obj | None) -> None:
        self.copy = copy

    def get(self, path: str) -> Obj | None:
        assert path == f"{KUEUE}/namespaces/default/workloads/job-1"
        return self.copy


class Manager:
    def items(self, path: str, query: dict[str, str] | None = None) -> list[Obj]:
        return [{"metadata": {"name": n}} for n in ("a", "b")]

    def get(self, path: str) -> Obj | None:  # no keeper's ConfigMap: no region quarantined
        return None


@pytest.mark.parametrize(
    "copy",
    [
        {"status": "x"},
        {"status": {"conditions": ["x"]}},
        {"status": {"admissionChecks": ["x"]}},
        {"status": {"admission": {"podSetAssignments": [{"flavors": ["x"]}]}}},
    ],
    ids=["status-x", "condition-string", "check-string", "flavors-list"],
)
def test_a_region_whose_copy_planb_cannot_read_is_shown_unreadable(monkeypatch: pytest.MonkeyPatch, copy: Obj) -> None:
    copies = {"a": Region(copy), "b": Region({"status": {"conditions": [{"type": "Admitted", "status": "False"}]}})}
    monkeypatch.setattr(gather, "region_kube", lambda kube, region: copies[region])
    workload = {"metadata": {"namespace": "default", "name": "job-1"}, "status": {"nominatedClusterNames": ["a", "b"]}}
    out = regions.dispatch(workload, gather.dispatch_reads(Manager(), workload))  # type: ignore[arg-type]
    assert [(r.region, r.state) for r in out.regions] == [
        ("a", "unreadable: planb cannot read its objects (AttributeError)"),
        ("b", "waiting"),
    ]
    assert (
        out.line() == "waits in every region: a unreadable: planb cannot read its objects (AttributeError); b waiting"
    )
