"""DWS's failure paths in the capacity simulator, against an in-memory API server: a pool switched to fail, GKE's
node-group backoff after a failed create call, and requests of several PodSets.

As in test_lifecycle.py: each state on the request's conditions and the nodes, with a clock the test moves; the
same paths on the real Kueue are in tests/e2e/topologies/test_dws_lifecycle.py and test_failover.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from planb.local.capacity import machines, scaleup
from planb.local.capacity import settings as settings_mod
from planb.local.capacity import simulator as sim
from planb.local.capacity.pools import NodePool
from planb.local.capacity.settings import Lifecycle, Settings
from tests.support.integration.capacity_fakes import NS, Clock, FakeApi

Obj = dict[str, Any]


def test_a_pool_switched_to_fail_fails_its_requests(
    simulator: sim.CapacitySimulator, api: FakeApi, clock: Clock
) -> None:
    api.add_request("wl-dws-prov-1")
    simulator.step(Settings(provisioning_delay_seconds=0, pools={"dws-pool": Lifecycle(fail=True)}))
    status, reason, message = api.conds("wl-dws-prov-1")["Failed"]
    assert (status, reason) == ("True", "QueuingInfeasibleNoCapacity")
    assert "insufficient capacity" in message and "planb local capacity set --fail" in message
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
