"""DWS's ProvisioningRequest lifecycle in the capacity simulator, against an in-memory API server.

Each state is checked on the request's conditions (type, status, reason, message) and on the
nodes, with a clock the test moves; the pools come from the GKE emulator. The same states on the
real Kueue: tests/e2e/topologies/test_dws_lifecycle.py.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from planb.local.capacity import dws, nodes, webhook
from planb.local.capacity import simulator as sim
from planb.local.capacity.settings import Lifecycle, Settings
from tests.support.integration.capacity_fakes import NS, Clock, FakeApi

Obj = dict[str, Any]


def test_queued_without_an_eta_then_all_nodes_at_once(
    simulator: sim.CapacitySimulator, api: FakeApi, clock: Clock
) -> None:
    api.add_request("wl-dws-prov-1")
    settings = Settings(provisioning_delay_seconds=30)
    simulator.step(settings)
    conds = api.conds("wl-dws-prov-1")
    assert conds["Accepted"] == ("True", "SuccessfullyQueued", "Provisioning Request was successfully queued.")
    assert conds["Provisioned"] == (
        "False",
        "ResourcePoolExhausted",
        "Waiting for resources. Currently there are not enough resources available to fulfill the request. "
        "Expected time is indefinite.",
    )  # the autoscaler sources' only expected time: "indefinite"
    assert api.nodes == {}
    assert simulator.next_deadline == clock.now + 30  # the loop wakes when the delay ends
    patches = api.patches
    clock.sleep(29)
    simulator.step(settings)
    assert api.nodes == {} and api.patches == patches  # still queued, nothing rewritten
    clock.sleep(1)
    simulator.step(settings)
    assert api.conds("wl-dws-prov-1")["Provisioned"] == (
        "True",
        "Provisioned",
        "Provisioning Request was successfully provisioned.",
    )
    assert len(api.nodes) == 4
    for node in api.nodes.values():
        assert node["metadata"]["annotations"][nodes.REQUEST] == f"{NS}/wl-dws-prov-1"
        assert node["metadata"]["labels"]["cloud.google.com/gke-nodepool"] == "dws-pool"


def test_each_requests_nodes_carry_its_resize_request_name_as_gke_labels_them(
    simulator: sim.CapacitySimulator, api: FakeApi, clock: Clock
) -> None:
    """Two requests provisioned in one pass: each node names its own request, as the request's details do."""
    api.add_request("wl-a-dws-prov-1")
    api.add_request("wl-b-dws-prov-1")
    simulator.step(Settings(provisioning_delay_seconds=0))
    labels_by_request: dict[str, set[str]] = {}
    for node in api.nodes.values():
        request = node["metadata"]["annotations"][nodes.REQUEST]
        labels_by_request.setdefault(request, set()).add(node["metadata"]["labels"][webhook.REQUEST_LABEL])
        assert node["metadata"]["labels"]["cloud.google.com/gke-provisioning"] == "flex-start"
    assert labels_by_request == {
        f"{NS}/wl-a-dws-prov-1": {webhook.resize_request_name(NS, "wl-a-dws-prov-1")},
        f"{NS}/wl-b-dws-prov-1": {webhook.resize_request_name(NS, "wl-b-dws-prov-1")},
    }
    for name in ("wl-a-dws-prov-1", "wl-b-dws-prov-1"):
        details = api.requests[f"{NS}/{name}"]["status"]["provisioningClassDetails"]
        assert details == {
            "ResizeRequestName": webhook.resize_request_name(NS, name),
            "NodePoolName": "dws-pool",
            "NodePoolAutoProvisioned": "false",
            "PodTemplateName": f"ppt-{name}-0",
            "ProvisioningMode": "resize_request",
        }


def test_a_delay_changed_while_queued_moves_the_delivery(
    simulator: sim.CapacitySimulator, api: FakeApi, clock: Clock
) -> None:
    api.add_request("wl-dws-prov-1")
    start = clock.now
    simulator.step(Settings(provisioning_delay_seconds=3600))
    shorter = Settings(provisioning_delay_seconds=3600, pools={"dws-pool": Lifecycle(delay_seconds=60)})
    clock.sleep(59)
    simulator.step(shorter)
    assert api.nodes == {} and simulator.next_deadline == start + 60
    clock.sleep(1)
    simulator.step(shorter)
    assert len(api.nodes) == 4


def test_switches_per_request_win_over_the_pool_and_the_pool_over_the_default() -> None:
    settings = Settings(
        provisioning_delay_seconds=5,
        booking_window_seconds=600,
        pools={"dws-pool": Lifecycle(delay_seconds=50, fail=True)},
        requests={f"{NS}/*-dws-prov-1": Lifecycle(booking_window_seconds=3, fail=False)},
    )
    first = settings.resolve("dws-pool", f"{NS}/wl-dws-prov-1")
    second = settings.resolve("dws-pool", f"{NS}/wl-dws-prov-2")
    other = settings.resolve("other-pool", f"{NS}/wl-dws-prov-2")
    assert (first.delay_seconds, first.booking_window_seconds, first.fail) == (50, 3, False)
    assert (second.delay_seconds, second.booking_window_seconds, second.fail) == (50, 600, True)
    assert (other.delay_seconds, other.booking_window_seconds, other.fail, other.max_run_seconds) == (
        5,
        600,
        False,
        None,
    )


def test_booking_expires_and_unused_nodes_are_taken_back(
    simulator: sim.CapacitySimulator, api: FakeApi, clock: Clock
) -> None:
    api.add_request("wl-dws-prov-1")
    settings = Settings(provisioning_delay_seconds=0, booking_window_seconds=5)
    simulator.step(settings)
    assert len(api.nodes) == 4 and "BookingExpired" not in api.conds("wl-dws-prov-1")
    clock.sleep(5)
    simulator.step(settings)
    assert api.conds("wl-dws-prov-1")["BookingExpired"] == (
        "True",
        "BookingExpired",
        dws.BOOKING_EXPIRED_MESSAGE,
    )
    assert api.conds("wl-dws-prov-1")["Provisioned"][0] == "True"
    assert api.nodes == {}


def test_booking_expires_on_used_nodes_which_stay_until_their_pods_are_gone(
    simulator: sim.CapacitySimulator, api: FakeApi, clock: Clock
) -> None:
    api.add_request("wl-dws-prov-1")
    settings = Settings(provisioning_delay_seconds=0, booking_window_seconds=5, scale_down_after_seconds=10)
    simulator.step(settings)
    for node in list(api.nodes):
        api.run_pod_on(node)
    clock.sleep(6)
    simulator.step(settings)
    assert api.conds("wl-dws-prov-1")["BookingExpired"][0] == "True"
    assert len(api.nodes) == 4  # in use: Kueue ignores BookingExpired of an admitted workload
    api.pods.clear()
    simulator.step(settings)
    clock.sleep(10)
    simulator.step(settings)
    assert api.nodes == {}


def test_capacity_is_revoked_at_the_requests_max_run_duration(
    simulator: sim.CapacitySimulator, api: FakeApi, clock: Clock
) -> None:
    api.add_request("wl-dws-prov-1", max_run="20")
    settings = Settings(provisioning_delay_seconds=0)
    simulator.step(settings)
    for node in list(api.nodes):
        api.run_pod_on(node)
    clock.sleep(19)
    simulator.step(settings)
    assert len(api.nodes) == 4 and "CapacityRevoked" not in api.conds("wl-dws-prov-1")
    clock.sleep(1)
    simulator.step(settings)
    conds = api.conds("wl-dws-prov-1")
    assert conds["CapacityRevoked"] == ("True", "CapacityRevoked", dws.CAPACITY_REVOKED_MESSAGE)
    assert conds["BookingExpired"][0] == "True"  # GKE's revoked requests have passed through it
    assert api.nodes == {}
    simulator.step(settings)  # terminal: nothing comes back
    assert api.nodes == {}


def test_a_max_run_switch_revokes_a_request_now(simulator: sim.CapacitySimulator, api: FakeApi, clock: Clock) -> None:
    api.add_request("wl-dws-prov-1")
    simulator.step(Settings(provisioning_delay_seconds=0))
    assert len(api.nodes) == 4
    simulator.step(Settings(requests={f"{NS}/wl-dws-prov-1": Lifecycle(max_run_seconds=0)}))
    assert api.conds("wl-dws-prov-1")["CapacityRevoked"][0] == "True"
    assert api.nodes == {}


@pytest.mark.parametrize("max_run", [None, "junk", "99999999"])
def test_without_a_valid_parameter_the_run_lasts_gke_s_seven_days(max_run: str | None) -> None:
    pr = {"spec": {"parameters": {} if max_run is None else {"maxRunDurationSeconds": max_run}}}
    assert dws.max_run_parameter(pr) == 7 * 24 * 3600


def test_a_request_whose_pod_template_is_not_there_yet_waits_for_it(
    simulator: sim.CapacitySimulator, api: FakeApi, clock: Clock
) -> None:
    api.add_request("wl-dws-prov-1")
    template = api.templates.pop("ppt-wl-dws-prov-1-0")
    simulator.step(Settings(provisioning_delay_seconds=0))
    assert api.nodes == {}
    assert api.conds("wl-dws-prov-1") == {"Accepted": ("False", "NotAccepted", "Provisioning Request wasn't accepted.")}
    api.templates["ppt-wl-dws-prov-1-0"] = template
    simulator.step(Settings(provisioning_delay_seconds=0))
    assert len(api.nodes) == 4


def test_a_deleted_request_takes_its_nodes(simulator: sim.CapacitySimulator, api: FakeApi, clock: Clock) -> None:
    api.add_request("wl-dws-prov-1")
    simulator.step(Settings(provisioning_delay_seconds=0))
    del api.requests[f"{NS}/wl-dws-prov-1"]
    simulator.step(Settings(provisioning_delay_seconds=0))
    assert api.nodes == {}


class StaleInformer:
    """A watch cache that has not yet seen the simulator's own last write."""

    def __init__(self, items: list[Obj]) -> None:
        self.items = items
        self.synced = type("Synced", (), {"is_set": staticmethod(lambda: True)})()
        #: The watch's last error ("" while it follows the API server).
        self.error = ""

    @property
    def usable(self) -> bool:
        return self.synced.is_set() and not self.error

    def snapshot(self) -> list[Obj]:
        return copy.deepcopy(self.items)

    def put(self, obj: Obj) -> None:
        pass


def test_a_stale_cached_request_is_not_delivered_twice(
    simulator: sim.CapacitySimulator, api: FakeApi, clock: Clock
) -> None:
    api.add_request("wl-dws-prov-1")
    stale = [copy.deepcopy(api.requests[f"{NS}/wl-dws-prov-1"])]
    simulator.informer = StaleInformer(stale)  # type: ignore[assignment]
    simulator.step(Settings(provisioning_delay_seconds=0))
    simulator.step(Settings(provisioning_delay_seconds=0))
    assert len(api.nodes) == 4


def test_no_request_is_acted_on_before_the_watch_has_listed(
    simulator: sim.CapacitySimulator, api: FakeApi, clock: Clock
) -> None:
    api.add_request("wl-dws-prov-1")
    simulator.step(Settings(provisioning_delay_seconds=0))
    unsynced = StaleInformer([])
    unsynced.synced = type("Unsynced", (), {"is_set": staticmethod(lambda: False)})()
    simulator.informer = unsynced  # type: ignore[assignment]
    simulator.step(Settings(provisioning_delay_seconds=0))
    assert len(api.nodes) == 4  # an empty, unsynced cache does not mean every request is gone


def test_the_pod_watchs_cache_is_read_only_while_the_watch_follows_the_api_server(
    simulator: sim.CapacitySimulator, api: FakeApi
) -> None:
    api.run_pod_on("dws-node-1")  # bound after the cache's last event
    cache = StaleInformer([])
    simulator.ctx.pod_informer = cache  # type: ignore[assignment]
    assert simulator.ctx.pods() == []  # a following watch's cache is read as it is, with no list
    cache.error = "watch of /api/v1/pods: connection refused (will retry)"
    # A failing watch may have missed the binding (scale-down would take the node for idle): the pass lists.
    assert [pod["spec"]["nodeName"] for pod in simulator.ctx.pods()] == ["dws-node-1"]


def test_a_failing_request_watchs_cache_is_not_read(simulator: sim.CapacitySimulator, api: FakeApi) -> None:
    api.add_request("wl-dws-prov-1")
    simulator.step(Settings(provisioning_delay_seconds=0))
    assert len(api.nodes) == 4
    cache = StaleInformer([copy.deepcopy(api.requests[f"{NS}/wl-dws-prov-1"])])
    del api.requests[f"{NS}/wl-dws-prov-1"]  # deleted after the cache's last event
    simulator.informer = cache  # type: ignore[assignment]
    simulator.step(Settings(provisioning_delay_seconds=0))
    assert len(api.nodes) == 4  # a following watch's cache is read as it is, with no list (the delete comes soon)
    cache.error = "watch of provisioningrequests: connection refused (will retry)"
    simulator.step(Settings(provisioning_delay_seconds=0))
    # A failing watch may have missed the delete: the pass lists, finds the request gone and takes its nodes.
    assert api.nodes == {}


def test_the_node_watchs_cache_is_read_except_right_after_the_simulator_wrote_a_node(
    simulator: sim.CapacitySimulator, api: FakeApi
) -> None:
    api.add_request("wl-dws-prov-1")
    simulator.step(Settings(provisioning_delay_seconds=0))  # its four nodes made
    assert simulator.ctx.nodes_written
    cache = StaleInformer([])  # has not seen them yet
    simulator.ctx.node_informer = cache  # type: ignore[assignment]
    assert len(simulator.managed_nodes()) == 4  # the pass after the writes lists
    assert simulator.managed_nodes() == []  # then the cache is read as it is, with no list
    cache.items = [copy.deepcopy(n) for n in api.nodes.values()] + [{"metadata": {"name": "kwok-node", "labels": {}}}]
    assert sorted(n["metadata"]["name"] for n in simulator.managed_nodes()) == sorted(api.nodes)  # only its own
    del api.requests[f"{NS}/wl-dws-prov-1"]
    simulator.step(Settings(provisioning_delay_seconds=0))  # the request's nodes go
    assert api.nodes == {} and simulator.ctx.nodes_written
    assert simulator.managed_nodes() == []  # listed, not the cache's four
