"""Invalid inputs: each is refused with a typed error whose message names the input and the choices."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from planb.catalog import (
    CatalogError,
    CountError,
    FlexStartError,
    MachineTypeError,
    TopologyError,
    UnknownProfileError,
    chart_values,
    get,
    node_pool,
    tpu,
)
from planb.cli import main

V6E_TOPOLOGIES = "1x1, 2x2, 2x4, 4x4, 4x8, 8x8, 8x16, 16x16"
V5P_TOPOLOGIES = "2x2x1, 2x2x2, 2x2x4, 2x4x4, 4x4x4, 4x4x8, 4x8x8, 8x8x8, 8x8x16, 8x16x16, 16x16x16"
FAMILIES = (
    "tpu-v4-<AxBxC>, tpu-v5e-<AxB>, tpu-v5p-<AxBxC>, tpu-v6e-<AxB>, tpu7x-<AxBxC>, gpu-a3-h100-1, "
    "gpu-a3-h100-2, gpu-a3-h100-4, gpu-a3-h100-8, gpu-a3-mega-h100-8, gpu-a3-ultra-h200-8, gpu-a4-b200-8"
)

CASES: list[tuple[str, Callable[[], object], type[CatalogError], str]] = [
    (
        "unknown generation",
        lambda: get("tpu-v9-4x4"),
        UnknownProfileError,
        f"unknown profile 'tpu-v9-4x4': did you mean 'tpu-v6e-4x4'? valid profiles: {FAMILIES} "
        "('planb profiles' lists every one)",
    ),
    (
        "unknown name, nothing close",
        lambda: get("banana"),
        UnknownProfileError,
        f"unknown profile 'banana': valid profiles: {FAMILIES} ('planb profiles' lists every one)",
    ),
    (
        "empty name",
        lambda: get(""),
        UnknownProfileError,
        f"unknown profile '': valid profiles: {FAMILIES} ('planb profiles' lists every one)",
    ),
    (
        "unknown GPU count",
        lambda: get("gpu-a3-h100-3"),
        UnknownProfileError,
        f"unknown profile 'gpu-a3-h100-3': did you mean 'gpu-a3-h100-8'? valid profiles: {FAMILIES} "
        "('planb profiles' lists every one)",
    ),
    (
        "topology not offered for the generation",
        lambda: get("tpu-v6e-3x3"),
        TopologyError,
        "profile 'tpu-v6e-3x3': topology '3x3' (9 chips) is not offered for TPU v6e: "
        f"nearest valid topology '2x4'; valid topologies: {V6E_TOPOLOGIES}",
    ),
    (
        "2D topology for a 3D generation",
        lambda: get("tpu-v5p-4x4"),
        TopologyError,
        "profile 'tpu-v5p-4x4': topology '4x4' is not valid for TPU v5p, which takes 3D (AxBxC) topologies: "
        f"nearest valid topology '2x2x4'; valid topologies: {V5P_TOPOLOGIES}",
    ),
    (
        "3D topology for a 2D generation",
        lambda: get("tpu-v6e-2x2x2"),
        TopologyError,
        "profile 'tpu-v6e-2x2x2': topology '2x2x2' is not valid for TPU v6e, which takes 2D (AxB) topologies: "
        f"nearest valid topology '2x4'; valid topologies: {V6E_TOPOLOGIES}",
    ),
    (
        "malformed topology",
        lambda: get("tpu-v6e-4by4"),
        TopologyError,
        "profile 'tpu-v6e-4by4': topology '4by4' is malformed: TPU v6e takes 2D (AxB) topologies such as "
        f"'16x16'; valid topologies: {V6E_TOPOLOGIES}",
    ),
    (
        "chip-count alias with no slice",
        lambda: get("tpu-v6e-12"),
        UnknownProfileError,
        "unknown profile 'tpu-v6e-12': no TPU v6e slice has 12 chips; nearest valid profile 'tpu-v6e-2x4' "
        "(8 chips); valid chip counts: 1, 4, 8, 16, 32, 64, 128, 256",
    ),
    (
        "topology too big",
        lambda: get("tpu-v6e-32x32"),
        TopologyError,
        "profile 'tpu-v6e-32x32': topology '32x32' (1024 chips) is not offered for TPU v6e: "
        f"nearest valid topology '16x16'; valid topologies: {V6E_TOPOLOGIES}",
    ),
    (
        "machine type of another generation",
        lambda: get("tpu-v6e-4x4", "ct5lp-hightpu-4t"),
        MachineTypeError,
        "machine type 'ct5lp-hightpu-4t' is not a TPU v6e machine type; valid machine types: "
        "ct6e-standard-1t, ct6e-standard-4t, ct6e-standard-8t",
    ),
    (
        "topology the machine type cannot form",
        lambda: get("tpu-v6e-4x4", "ct6e-standard-8t"),
        TopologyError,
        "topology '4x4' cannot be formed from ct6e-standard-8t (TPU v6e); ct6e-standard-8t forms: 2x4",
    ),
    (
        "machine type override on a GPU profile",
        lambda: get("gpu-a3-h100-8", "a3-megagpu-8g"),
        MachineTypeError,
        "machine type 'a3-megagpu-8g' does not fit GPU profile 'gpu-a3-h100-8': a GPU profile names its "
        "machine type (a3-highgpu-8g); pick another GPU profile instead",
    ),
    (
        "max nodes not a multiple of hosts per slice",
        lambda: node_pool("tpu-v6e-4x4", max_nodes=6),
        CountError,
        "max_nodes 6 is not a multiple of the 4 nodes of one tpu-v6e-4x4 slice "
        "(GKE scales a multi-host TPU slice atomically): use 4 or 8",
    ),
    (
        "max nodes below one slice",
        lambda: node_pool("tpu-v5p-2x2x4", max_nodes=3),
        CountError,
        "max_nodes 3 is not a multiple of the 4 nodes of one tpu-v5p-2x2x4 slice "
        "(GKE scales a multi-host TPU slice atomically): use 4",
    ),
    (
        "zero max nodes",
        lambda: node_pool("tpu-v6e-4x4", max_nodes=0),
        CountError,
        "max_nodes must be at least 1, got 0",
    ),
    (
        "zero slices",
        lambda: node_pool("tpu-v6e-4x4", slices=0),
        CountError,
        "slices must be at least 1, got 0",
    ),
    (
        "negative slices",
        lambda: chart_values("tpu-v6e-4x4", slices=-2),
        CountError,
        "--slices must be at least 1, got -2",
    ),
    (
        "zero on-demand slices",
        lambda: chart_values("tpu-v6e-4x4", on_demand_slices=0),
        CountError,
        "--on-demand-slices must be at least 1, got 0",
    ),
    (
        "zero DWS slices",
        lambda: chart_values("tpu-v6e-4x4", dws_slices=0),
        CountError,
        "--dws-slices must be at least 1, got 0",
    ),
    (
        "slices not a number",
        lambda: node_pool("tpu-v6e-4x4", slices="two"),  # type: ignore[arg-type]
        CountError,
        "slices must be a whole number of at least 1, got 'two'",
    ),
    (
        "flex-start on TPU v4",
        lambda: node_pool("tpu-v4-2x2x2", flex_start=True),
        FlexStartError,
        "flex-start (DWS queued provisioning) is not offered by GKE for TPU v4 (GKE's TPU flex-start excludes TPU "
        "v3 and v4; https://cloud.google.com/kubernetes-engine/docs/how-to/tpu-flex-start); "
        "choose a generation that offers it: v5e, v5p, v6e",
    ),
]


@pytest.mark.parametrize(("what", "call", "error", "message"), CASES, ids=[c[0] for c in CASES])
def test_refused_with_message(what: str, call: Callable[[], object], error: type[CatalogError], message: str) -> None:
    with pytest.raises(error) as caught:
        call()
    assert str(caught.value) == message


def test_topology_chips_refuses_garbage() -> None:
    with pytest.raises(TopologyError) as caught:
        tpu.topology_chips("0x4")
    assert str(caught.value) == (
        "topology '0x4' is malformed: write 2 or 3 positive numbers joined by 'x', e.g. '4x4' or '2x2x2'"
    )


def test_cli_prints_the_message_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["values", "tpu-v6e-4x4", "--on-demand-slices", "0"]) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "planb: error: --on-demand-slices must be at least 1, got 0\n")
