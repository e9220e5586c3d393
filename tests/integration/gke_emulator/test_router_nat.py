"""gcp_router_nat against the emulator's Compute Engine routers: Cloud NAT for private nodes.

routers.get, routers.insert and routers.patch (https://cloud.google.com/compute/docs/reference/rest/v1/routers) are
served only after compute v1's discovery document accepted each body (``gke_emulator.conformance``), and the
router the module makes is what the day-0 check's routers.list then reads as the nodes' NAT. Each refusal names the
input and the fix before any write.
"""

from __future__ import annotations

from planb.local.gke_emulator import discovery
from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.integration.gke.gke_api import call
from tests.support.integration.gke.modules import PROJECT, ModuleRunner

ROUTERS = f"/compute/v1/projects/{PROJECT}/regions/us-east5/routers"
PRIVATE = {
    "machine_type": "ct6e-standard-4t",
    "needed": 16,
    "rungs": [{"name": "on-demand", "kind": "on-demand"}, {"name": "dws", "kind": "dws"}],
    "private_nodes": True,
}


def test_the_methods_are_compute_v1s_routers() -> None:
    for method, path in (("GET", f"{ROUTERS}/r"), ("POST", ROUTERS), ("PATCH", f"{ROUTERS}/r")):
        found = discovery.find_method(method, path)
        assert found is not None and found.id.startswith("compute.routers."), (method, found)


def test_the_nat_is_created_once_then_left_and_the_day0_check_reads_it(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    planned = modules.run("gcp_router_nat", {}, check_mode=True)
    assert planned["changed"] and planned["actions"] == ["create router"] and emulator.writes() == []
    assert modules.fail("gcp_project_check", PRIVATE)["blockers"][0]["what"].startswith("the network default")
    created = modules.run("gcp_router_nat", {})
    assert created["actions"] == ["create router"], created
    status, router = call(emulator, "GET", f"{ROUTERS}/planb-nat-router")
    assert status == 200 and router["network"].endswith("/global/networks/default"), router
    assert router["nats"] == [
        {
            "name": "planb-nat",
            "natIpAllocateOption": "AUTO_ONLY",
            "sourceSubnetworkIpRangesToNat": "ALL_SUBNETWORKS_ALL_IP_RANGES",
        }
    ]
    writes = len(emulator.writes())
    assert not modules.run("gcp_router_nat", {})["changed"] and len(emulator.writes()) == writes
    # The day-0 check's routers.list now finds the nodes' NAT.
    assert modules.run("gcp_project_check", PRIVATE)["blockers"] == []


def test_a_router_without_nat_gets_one_and_one_on_another_network_is_refused_naming_the_fix(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    assert (
        call(emulator, "POST", "/planb/v1/networks", {"project": PROJECT, "name": "other", "subnetworks": []})[0] == 200
    )
    status, _ = call(
        emulator, "POST", ROUTERS, {"name": "bare", "network": f"projects/{PROJECT}/global/networks/default"}
    )
    assert status == 200
    added = modules.run("gcp_router_nat", {"router": "bare"})
    assert (
        added["actions"] == ["add nat"]
        and call(emulator, "GET", f"{ROUTERS}/bare")[1]["nats"][0]["name"] == "planb-nat"
    )
    writes = len(emulator.writes())
    msg = modules.fail("gcp_router_nat", {"router": "bare", "network": "other"})["msg"]
    assert "is on network default, not other" in msg and "Fix: name another router" in msg, msg
    msg = modules.fail("gcp_router_nat", {"router": "NAT_router"})["msg"]
    assert "router 'NAT_router' is not a Compute Engine name" in msg and "for example planb-nat-router" in msg, msg
    assert len(emulator.writes()) == writes
    # Compute Engine's own refusals, as the emulator answers them: a missing network, a router that exists.
    missing = {"name": "r2", "network": f"projects/{PROJECT}/global/networks/nowhere"}
    assert call(emulator, "POST", ROUTERS, missing)[0] == 404
    assert call(emulator, "POST", ROUTERS, {"name": "bare", "network": "default"})[0] == 409
    # A body compute v1's schema refuses is Google's 400, before the emulator reads it.
    status, answer = call(emulator, "POST", ROUTERS, {"name": "r3", "network": "default", "nats": [{"nope": 1}]})
    assert status == 400 and "nope" in answer["error"]["message"], answer


def test_teardown_deletes_planbs_router_and_only_planbs_nat_from_a_router_it_did_not_create(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    found = discovery.find_method("DELETE", f"{ROUTERS}/r")
    assert found is not None and found.id == "compute.routers.delete"
    modules.run("gcp_router_nat", {})
    assert call(emulator, "GET", f"{ROUTERS}/planb-nat-router")[1]["description"].endswith("(planb.gke.gcp_router_nat)")
    default = f"projects/{PROJECT}/global/networks/default"
    assert call(emulator, "POST", ROUTERS, {"name": "bare", "network": default})[0] == 200
    modules.run("gcp_router_nat", {"router": "bare"})
    theirs = {
        "name": "theirs",
        "natIpAllocateOption": "MANUAL_ONLY",
        "sourceSubnetworkIpRangesToNat": "LIST_OF_SUBNETWORKS",
    }
    assert call(emulator, "POST", ROUTERS, {"name": "org", "network": default, "nats": [theirs]})[0] == 200
    assert call(emulator, "PATCH", f"{ROUTERS}/org", {"nats": [theirs, {**theirs, "name": "planb-nat"}]})[0] == 200
    preview = modules.run("gcp_router_nat", {"state": "absent"}, check_mode=True)
    assert preview["actions"] == ["delete router"] and call(emulator, "GET", f"{ROUTERS}/planb-nat-router")[0] == 200
    assert modules.run("gcp_router_nat", {"state": "absent"})["actions"] == ["delete router"]
    assert call(emulator, "GET", f"{ROUTERS}/planb-nat-router")[0] == 404
    # A router planb only added its NAT to: the NAT goes, the router stays.
    assert modules.run("gcp_router_nat", {"router": "bare", "state": "absent"})["actions"] == ["remove nat"]
    status, bare = call(emulator, "GET", f"{ROUTERS}/bare")
    assert status == 200 and bare.get("nats", []) == [], bare
    # A NAT named planb-nat with the organisation's settings is not planb's: left, as the router's own NAT.
    kept = modules.run("gcp_router_nat", {"router": "org", "state": "absent"})
    assert kept["changed"] is False and len(call(emulator, "GET", f"{ROUTERS}/org")[1]["nats"]) == 2, kept
    writes = len(emulator.writes())
    for router in ("planb-nat-router", "bare", "org"):
        assert modules.run("gcp_router_nat", {"router": router, "state": "absent"})["changed"] is False
    assert len(emulator.writes()) == writes
