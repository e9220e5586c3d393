"""The four-rung ladder the chart tests render: reservation, on-demand, DWS and Spot, each quota its slices."""

from __future__ import annotations

from typing import Any

from planb.catalog import values

PROFILE = "tpu-v6e-4x4"


def quota(slices: int) -> dict[str, Any]:
    quota: dict[str, Any] = values.chart_values(PROFILE, on_demand_slices=slices)["queues"]["quotas"]["onDemand"]
    return quota


FOUR = [
    {"name": "reserved", "kind": "reservation", "reservation": "r1", "quota": quota(1)},
    {"name": "on-demand", "kind": "on-demand", "quota": quota(1)},
    {"name": "dws", "kind": "dws", "quota": quota(1)},
    {"name": "spot", "kind": "spot", "quota": quota(2)},
]
