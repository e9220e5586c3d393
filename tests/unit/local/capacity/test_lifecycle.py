"""DWS's ProvisioningRequest lifecycle in the capacity simulator, against an in-memory API server.

Each state is checked on the request's conditions (type, status, reason, message) and on the
nodes, with a clock the test moves; the pools come from the GKE emulator. The same states on the
real Kueue: tests/e2e/test_dws_lifecycle.py.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from planb.local.capacity import dws, machines, nodes, scaleup, webhook
from planb.local.capacity import settings as settings_mod
from planb.local.capacity import simulator as sim
from planb.local.capacity.pools import NodePool
from planb.local.capacity.settings import Lifecycle, Settings
from tests.support.capacity import ServePools
from tests.support.capacity_fakes import KUBECONFIG, NS, Clock, FakeApi

Obj = dict[str, Any]
DWS_POOL = {
    "name": "dws-pool",
    "initialNodeCount": 0,
    "config": {"machineType": "ct6e-standard-4t", "flexStart": True},
    "autoscaling": {"enabled": True, "totalMinNodeCount": 0, "totalMaxNodeCount": 8},
    "queuedProvisioning": {"enabled": True},
    "placementPolicy": {"tpuTopology": "4x4"},
}


@pytest.fixture()
def state(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture()
def simulator(state: Path, api: FakeApi, serve_pools: ServePools) -> sim.CapacitySimulator:
    kubeconfig = state / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    simulator = sim.CapacitySimulator(kubeconfig, state, log=lambda _: None, gke=serve_pools([DWS_POOL]))
    simulator.kube = api  # type: ignore[assignment]
    return simulator


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


def test_a_pool_switched_to_fail_fails_its_requests(
    simulator: sim.CapacitySimulator, api: FakeApi, clock: Clock
) -> None:
    api.add_request("wl-dws-prov-1")
    simulator.step(Settings(provisioning_delay_seconds=0, pools={"dws-pool": Lifecycle(fail=True)}))
    status, reason, message = api.conds("wl-dws-prov-1")["Failed"]
    assert (status, reason) == ("True", "QueuingInfeasibleNoCapacity")
    assert "insufficient capacity" in message and "planb capacity set --fail" in message
    assert api.nodes == {}


def test_fail_next_counts_down(simulator: sim.CapacitySimulator, api: FakeApi, state: Path, clock: Clock) -> None:
    settings_mod.save(Settings(provisioning_delay_seconds=0, fail_next=1), state)
    api.add_request("a-dws-prov-1")
    simulator.step()
    clock.sleep(settings_mod.GKE_INITIAL_BACKOFF_SECONDS)  # GKE backs the pool off after a's failed scale-up
    api.add_request("b-dws-prov-1")
    simulator.step()
    assert api.conds("a-dws-prov-1")["Failed"][0] == "True"
    assert api.conds("b-dws-prov-1")["Provisioned"][0] == "True"
    assert settings_mod.load(state).fail_next == 0


def test_a_request_of_several_podsets_is_provisioned_whole_in_one_pool(
    simulator: sim.CapacitySimulator, api: FakeApi, clock: Clock
) -> None:
    """GKE's orchestrator places all PodSets of one request in one node group (scaleup.ORCHESTRATOR L590-L598);
    the feature guard's refusal is off by default (dws.GKE_CA_FEATURE_GUARD L89-L93)."""
    api.add_request("wl-dws-prov-1", podsets=2, count=4)  # 8 pods: the pool's max
    simulator.step(Settings(provisioning_delay_seconds=0))
    conds = api.conds("wl-dws-prov-1")
    assert conds["Accepted"][:2] == ("True", "SuccessfullyQueued")
    assert conds["Provisioned"][:2] == ("True", "Provisioned")
    assert "Failed" not in conds
    assert len(api.nodes) == 8
    assert {n["metadata"]["labels"]["cloud.google.com/gke-nodepool"] for n in api.nodes.values()} == {"dws-pool"}
    details = api.requests[f"{NS}/wl-dws-prov-1"]["status"]["provisioningClassDetails"]
    assert details["PodTemplateName"] == "ppt-wl-dws-prov-1-0, ppt-wl-dws-prov-1-1"


def test_several_podsets_that_no_one_pool_holds_are_not_accepted(
    simulator: sim.CapacitySimulator, api: FakeApi, clock: Clock
) -> None:
    api.add_request("big-dws-prov-1", podsets=2, count=8)  # 16 pods, the pool holds 8
    api.add_request("mixed-dws-prov-1", podsets=1)
    api.templates["ppt-other"] = {"template": {"spec": {"nodeSelector": {"cloud.google.com/gke-nodepool": "other"}}}}
    api.requests[f"{NS}/mixed-dws-prov-1"]["spec"]["podSets"].append(
        {"podTemplateRef": {"name": "ppt-other"}, "count": 1}
    )
    simulator.step(Settings(provisioning_delay_seconds=0))
    # While retrying, a pool too small gives no option and is not skipped: GKE's reason is then the default one.
    assert api.conds("big-dws-prov-1")["Accepted"][:2] == ("False", "NoQueuedNodepoolAvailable")
    mixed = api.conds("mixed-dws-prov-1")["Accepted"]
    assert mixed[:2] == ("False", "ProvisioningRequestNotSchedulableInNodepool")  # one PodSet misses the pool
    clock.sleep(120)
    simulator.step(Settings(provisioning_delay_seconds=0))
    assert api.conds("big-dws-prov-1")["Failed"][:2] == ("True", "NodepoolSizeReached")
    assert api.conds("mixed-dws-prov-1")["Failed"][:2] == ("True", "ProvisioningRequestNotSchedulableInNodepool")
    assert api.nodes == {}


def test_gke_refuses_several_podsets_only_with_its_rollout_flag_off(
    simulator: sim.CapacitySimulator, api: FakeApi, clock: Clock
) -> None:
    api.add_request("wl-dws-prov-1", podsets=2)
    simulator.step(Settings(provisioning_delay_seconds=0, provisioning_request_multiple_podsets_enabled=False))
    assert api.conds("wl-dws-prov-1")["Failed"] == (
        "True",
        "MultiplePodSetsUnsupported",
        "Provisioning Request doesn't support multiple PodSets, please define only 1.",
    )
    assert api.nodes == {}


def test_a_failed_create_call_goes_from_pending_to_failed_and_backs_the_pool_off(
    simulator: sim.CapacitySimulator, api: FakeApi, state: Path, clock: Clock
) -> None:
    """dws.GKE_CA_CREATE_FAILED: details, then Failed=True (QueuingInfeasibleNoCapacity) with Accepted still False;
    scaleup.SCALEUP_EXECUTOR backs the pool off; the next requests get NodepoolInBackoff until it ends."""
    settings_mod.save(Settings(provisioning_delay_seconds=0, fail_next=1), state)
    failed_at = clock.now
    api.add_request("a-dws-prov-1")
    simulator.step()
    conds = api.conds("a-dws-prov-1")
    assert conds["Accepted"] == ("False", "NotAccepted", "Provisioning Request wasn't accepted.")
    status, reason, message = conds["Failed"]
    assert (status, reason) == ("True", "QueuingInfeasibleNoCapacity")
    assert message.startswith("Could not enqueue the Provisioning Request due to insufficient capacity in zone ")
    assert "Provisioned" not in conds
    # Never Accepted=True on the way: pending, details, then Failed.
    assert all(c["status"] == "False" for name, written in api.writes for c in written if c["type"] == "Accepted")
    details = api.requests[f"{NS}/a-dws-prov-1"]["status"]["provisioningClassDetails"]
    assert details["NodePoolName"] == "dws-pool"
    assert settings_mod.load(state).fail_next == 0

    in_backoff = (
        "False",
        "NodepoolInBackoff",
        "Nodepool in backoff after failed scale-up, affected nodepools: dws-pool",
    )
    api.add_request("b-dws-prov-1")
    simulator.step()
    assert api.conds("b-dws-prov-1")["Accepted"] == in_backoff
    assert api.nodes == {}
    clock.sleep(scaleup.RETRY_PERIOD_SECONDS)  # GKE fails a request no pool takes after two minutes
    simulator.step()
    assert api.conds("b-dws-prov-1")["Failed"] == ("True", *in_backoff[1:])
    clock.sleep(80)
    api.add_request("c-dws-prov-1")
    simulator.next_deadline = float("inf")  # as the loop does before each pass
    simulator.step()
    assert api.conds("c-dws-prov-1")["Accepted"] == in_backoff
    assert simulator.next_deadline == failed_at + settings_mod.GKE_INITIAL_BACKOFF_SECONDS  # the loop wakes then
    clock.now = failed_at + settings_mod.GKE_INITIAL_BACKOFF_SECONDS  # the backoff ends
    simulator.step()
    assert api.conds("c-dws-prov-1")["Provisioned"][:2] == ("True", "Provisioned")
    assert len(api.nodes) == 4


def test_a_request_accepted_before_the_fail_switch_is_not_failed(
    simulator: sim.CapacitySimulator, api: FakeApi, clock: Clock
) -> None:
    """QueuingInfeasibleNoCapacity comes only from the resize request's create call: a queued request is past it."""
    api.add_request("wl-dws-prov-1")
    simulator.step(Settings(provisioning_delay_seconds=30))
    clock.sleep(30)
    simulator.step(Settings(provisioning_delay_seconds=30, pools={"dws-pool": Lifecycle(fail=True)}))
    assert api.conds("wl-dws-prov-1")["Provisioned"][:2] == ("True", "Provisioned")


def test_gke_s_backoff_doubles_after_it_ended_and_is_forgotten_after_the_reset_timeout() -> None:
    """scaleup.UPSTREAM_BACKOFF and scaleup.GKE_BACKOFF: 5 min, the same again while backed off, doubled after,
    at most 30 min, forgotten 3 h after the last failure."""
    backoff = scaleup.NodeGroupBackoff()
    first = settings_mod.GKE_INITIAL_BACKOFF_SECONDS
    assert backoff.fail("p", 0, first) == 300
    assert backoff.until("p", 299) == 300 and backoff.until("p", 300) is None and backoff.until("q", 0) is None
    assert backoff.fail("p", 100, first) == 400  # while backed off: the same duration from now
    assert backoff.fail("p", 500, first) == 500 + 600  # after it ended: doubled
    assert backoff.fail("p", 2000, first) == 2000 + 1200
    assert backoff.fail("p", 4000, first) == 4000 + 1800  # at most 30 min
    assert backoff.fail("p", 4000 + 3 * 3600 + 1, first) == 4000 + 3 * 3600 + 1 + 300  # reset after 3 h


def test_nodepool_in_backoff_comes_after_size_and_before_predicate_errors() -> None:
    """scaleup.SCALEUP_REASONS L74-L84: the reasons' order; a backed-off pool is skipped before its size is read."""
    shape = machines.machine("ct6e-standard-4t")
    pools = {
        name: NodePool("c", name, "ct6e-standard-4t", 0, 4, 0, True, True, True, "4x4", shape)
        for name in ("a", "b", "c")
    }
    selector = {"cloud.google.com/gke-nodepool": "a"}
    backed_off = {"a"}

    def decide(names: list[str], room: int = 4) -> scaleup.Decision:
        return scaleup.decide(
            [pools[n] for n in names], [selector], 4, lambda p: room, False, lambda p: p.name in backed_off
        )

    assert decide(["a", "b"]).reason == "NodepoolInBackoff"  # b misses the selector: the backoff wins
    assert decide(["a", "b"]).message == "Nodepool in backoff after failed scale-up, affected nodepools: a"
    assert decide(["a", "b"], room=0).reason == "NodepoolSizeReached"  # b is full: the size wins
    backed_off.clear()
    assert decide(["a"]).pool == pools["a"]


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
