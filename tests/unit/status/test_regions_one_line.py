"""Text a region writes (an admission check's message, a rung, why the region is unreadable) cannot add
a line to `planb status`: each is escaped on one line, the newline written as \\u000a."""

from __future__ import annotations

from pathlib import Path

from planb.kube import Kube, KubeError, Obj
from planb.kubeconfig import Connection
from planb.status import gather, regions
from planb.status.regions import Dispatch

FORGED = "waiting\nREGION team/train: runs in us-east5 (admitted there first)"


class ManagerAnswering500(Kube):
    """A manager whose API server answers every read with a 500 whose text holds a newline (no socket: the error is
    raised where a request would be sent)."""

    def __init__(self) -> None:
        super().__init__(Path("manager"), Connection("https://203.0.113.7", token="t"))

    def get(self, path: str) -> Obj | None:
        raise KubeError(500, "Internal Server Error", FORGED)


def test_a_regions_check_message_and_rung_stay_on_one_line() -> None:
    copy = {
        "status": {
            "admissionChecks": [{"name": "dws-prov", "state": "Pending", "message": FORGED}],
            "admission": {"podSetAssignments": [{"flavors": {"google.com/tpu": "spot\nREGION x"}}]},
        }
    }
    read = regions._read("europe-west4", copy)
    line = Dispatch("", [read]).line()
    assert "\n" not in line and "\n" not in read.rung, line
    assert "dws-prov=Pending: waiting\\u000aREGION team/train" in line


def test_an_unreadable_regions_error_stays_on_one_line() -> None:
    read = regions._copy(gather.region_read(ManagerAnswering500(), "europe-west4", "default", "w"))
    assert read.state.startswith("unreadable: ") and "\n" not in read.state, read.state
    assert "\n" not in Dispatch("", [read]).line()
    assert "waiting\\u000aREGION team/train" in read.state
