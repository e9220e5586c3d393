"""The failover names planb reads (planb.failover.names) are the ones the controller writes.

The controller imports its names from planb.failover.names, so comparing the two modules would compare
an object with itself. These tests check by value instead: the names are the strings clusters already
carry, and a move the controller makes (against the fake API server) reads back through `planb status`
as the message the controller wrote.
"""

from __future__ import annotations

import pytest

from planb.catalog import gpu, pool_layout, tpu
from planb.failover import names
from planb.status import derive
from tests.support.shared.failover.fake_api import FakeCluster
from tests.support.shared.failover.kueue_steps import Clock, Kueue, start_controller
from tests.support.shared.failover.objects import JOB, PLAN_A

#: What a RayJob or Event on a cluster carries: renaming one strands the jobs moved before.
WIRE_NAMES = {
    "MOVED_ANNOTATION": "planb.dev/failover-moved-at",
    "FROM_ANNOTATION": "planb.dev/failover-from",
    "AFTER_ANNOTATION": "planb.dev/failover-after",
    "EVENT_REASON": "MovedToPlanB",
    "EVICTED_REASON": "PodsReadyTimeout",
    "PLAN_LABEL": "planb.dev/plan",
}
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

pytestmark = pytest.mark.usefixtures("no_network")


def test_every_string_name_is_pinned_to_the_value_clusters_carry() -> None:
    held = {n: v for n, v in vars(names).items() if n.isupper() and isinstance(v, str)}
    assert held == WIRE_NAMES


@pytest.mark.parametrize(("seconds", "said"), DURATIONS)
def test_the_message_says_how_long_plan_a_was_given(seconds: float, said: str) -> None:
    assert names.human(seconds) == said
    assert names.move_message(seconds) == f"moved to plan B after {said}: plan A had no capacity"


def test_status_shows_the_move_the_controller_wrote(cluster: FakeCluster, kueue: Kueue, clock: Clock) -> None:
    controller = start_controller(cluster, after_seconds=5400)
    controller.reconcile(kueue.admit(PLAN_A))
    controller.reconcile(kueue.evict())
    clock.now = "2026-05-04T10:00:03Z"
    controller.reconcile(kueue.release())

    said = "moved to plan B after 1h30m: plan A had no capacity"
    annotations = cluster.read("rayjobs", JOB)["metadata"]["annotations"]
    assert derive._move_note(annotations) == f"{said} (at 2026-05-04T10:00:02Z)"
    (event,) = cluster.events()
    assert (event["reason"], event["message"]) == ("MovedToPlanB", said)


def test_the_plan_label_is_the_one_the_collection_puts_on_the_pools() -> None:
    """The catalog's pool layout runs standalone in the collection, so it writes the plan label itself."""
    assert pool_layout.PLAN_LABEL == names.PLAN_LABEL


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
