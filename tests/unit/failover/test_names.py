"""The failover names planb reads (planb.failover.names) are the ones the controller writes.

The controller takes them from planb.failover.names (the queues chart ships the whole package), so
`planb status` and the controller agree; these tests check that by value: each name the controller
writes, and the message it writes, equal what planb.failover.names (and so `planb status`) reads.
"""

from __future__ import annotations

import pytest

from planb.catalog import gpu, tpu
from planb.failover import controller, names
from planb.status import report

CONSTANTS = [n for n, v in vars(names).items() if n.isupper() and isinstance(v, str)]
#: How long plan A was given, in seconds, and how the message says it.
DURATIONS = [
    (600, "10m"),
    (90, "90s"),
    (59.6, "1m"),
    (61, "61s"),
    (60, "1m"),
    (3600, "1h"),
    (5400, "1h30m"),
    (7200, "2h"),
]


def test_names_holds_the_names_status_shows() -> None:
    assert {"MOVED_ANNOTATION", "AFTER_ANNOTATION", "FROM_ANNOTATION", "EVENT_REASON"} <= set(CONSTANTS)


@pytest.mark.parametrize("name", CONSTANTS)
def test_the_controller_writes_the_names_module_s_value(name: str) -> None:
    assert getattr(controller, name) == getattr(names, name), f"controller.py's {name} differs from names.py's"


@pytest.mark.parametrize(("seconds", "said"), DURATIONS)
def test_the_controller_s_message_is_the_one_status_reads(seconds: float, said: str) -> None:
    message = f"moved to plan B after {said}: plan A had no capacity"
    assert controller.human(seconds) == names.human(seconds) == said
    assert controller.move_message(seconds) == names.move_message(seconds) == report.move_message(seconds) == message


def test_status_reads_the_annotations_the_controller_writes() -> None:
    assert (report.FAILOVER_MOVED, report.FAILOVER_AFTER) == (controller.MOVED_ANNOTATION, controller.AFTER_ANNOTATION)
    assert (report.FAILOVER_MOVED, report.FAILOVER_AFTER) == ("planb.dev/failover-moved-at", "planb.dev/failover-after")


def test_the_profile_labels_are_the_catalog_s() -> None:
    """The failover package ships without the catalog, so it names GKE's accelerator labels itself."""
    assert set(names.PROFILE_LABELS) == {tpu.ACCELERATOR_LABEL, tpu.TOPOLOGY_LABEL, gpu.ACCELERATOR_LABEL}


@pytest.mark.parametrize(
    ("node_labels", "found"),
    [
        # The queues chart's flavors: the plan label beside the profile's accelerator labels.
        (
            {tpu.ACCELERATOR_LABEL: "tpu-v6e-slice", tpu.TOPOLOGY_LABEL: "4x4", "planb.dev/plan": "on-demand"},
            ("planb.dev/plan", "on-demand"),
        ),
        # A plan of other labels: the first of them, never an accelerator label every plan shares.
        ({gpu.ACCELERATOR_LABEL: "nvidia-h100-80gb", "team": "ml"}, ("team", "ml")),
        ({tpu.ACCELERATOR_LABEL: "tpu-v6e-slice", tpu.TOPOLOGY_LABEL: "4x4"}, None),
    ],
)
def test_plan_a_s_label_is_never_the_profile_s(node_labels: dict[str, str], found: tuple[str, str] | None) -> None:
    assert names.plan_label(node_labels) == found
