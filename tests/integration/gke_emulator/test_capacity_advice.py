"""Compute Engine's advice.capacity and advice.calendarMode on the emulator, scored by planb's own model.

The methods are held to ``compute.v1.json`` (revision 20261106) as google-api-python-client ships it
(https://cloud.google.com/compute/docs/reference/rest/v1/advice/capacity and .../advice/calendarMode); the scores are
planb's model of the grants, stockouts and Spot preemptions seen (``planb.local.gke_emulator.obtainability``), a Spot
``estimatedUptime`` is one of the values Google's page gives, a TPU machine type gets no recommendation ("you can't
view the availability of TPUs", https://cloud.google.com/compute/docs/instances/view-vm-availability), and a shape
can be refused.
"""

from __future__ import annotations

from typing import Any

from planb.local.gke_emulator import discovery
from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.integration.gke.gke_api import call
from tests.support.integration.gke.modules import PROJECT

REGION = "us-east5"
CAPACITY = f"/compute/v1/projects/{PROJECT}/regions/{REGION}/advice/capacity"
CALENDAR = f"/compute/v1/projects/{PROJECT}/regions/{REGION}/advice/calendarMode"
V6E = "ct6e-standard-4t"
#: A3: a GPU machine type, which advice.capacity shows (a TPU one it does not).
A3 = "a3-highgpu-8g"


def _ask(model: str = "STANDARD", machine_type: str = A3, **extra: Any) -> dict[str, Any]:
    return {
        "size": 4,
        "instanceProperties": {"scheduling": {"provisioningModel": model}},
        "instanceFlexibilityPolicy": {"instanceSelections": {"a3": {"machineTypes": [machine_type]}}},
        "distributionPolicy": {
            "zones": [{"zone": f"zones/{REGION}-a"}, {"zone": f"projects/{PROJECT}/zones/{REGION}-b"}]
        },
        **extra,
    }


def _signal(
    emulator: RunningEmulator, zone: str, outcome: str, model: str = "STANDARD", machine: str = A3, **extra: Any
) -> None:
    body = {"zone": zone, "machineType": machine, "provisioningModel": model, "outcome": outcome, **extra}
    status, answer = call(emulator, "POST", "/planb/v1/capacity-signals", body)
    assert status == 200, answer


def _advice(emulator: RunningEmulator, body: dict[str, Any]) -> dict[str, Any]:
    status, answer = call(emulator, "POST", CAPACITY, body)
    assert status == 200, answer
    (recommendation,) = answer["recommendations"]
    return dict(recommendation)


def test_the_methods_are_the_discovery_documents_and_requests_are_held_to_their_schema(
    emulator: RunningEmulator,
) -> None:
    capacity = discovery.find_method("POST", CAPACITY)
    calendar = discovery.find_method("POST", CALENDAR)
    assert discovery.revision("compute") == "20261106"
    assert capacity is not None and (capacity.id, capacity.request, capacity.response) == (
        "compute.advice.capacity", "CapacityAdviceRequest", "CapacityAdviceResponse",
    )  # fmt: skip
    assert calendar is not None and calendar.id == "compute.advice.calendarMode"
    status, answer = call(emulator, "POST", CAPACITY, _ask(machineType=A3))
    assert status == 400 and 'Unknown name "machineType"' in answer["error"]["message"], answer
    assert answer["error"]["status"] == "INVALID_ARGUMENT"
    status, answer = call(emulator, "POST", CAPACITY, _ask(model="PREEMPTIBLE"))
    assert status == 400 and "(TYPE_ENUM)" in answer["error"]["message"], answer
    status, answer = call(emulator, "POST", CAPACITY, _ask(size="four"))
    assert status == 400 and "(TYPE_INT32)" in answer["error"]["message"], answer
    status, answer = call(
        emulator, "POST", CAPACITY, _ask(distributionPolicy={"zones": [{"zone": "zones/us-west4-a"}]})
    )
    assert status == 400 and "not in region us-east5" in answer["error"]["message"], answer
    # With nothing seen, planb's model answers 0.5 in the first zone, the whole size in one shard.
    assert _advice(emulator, _ask()) == {
        "scores": {"obtainability": 0.5},
        "shards": [{"zone": f"{REGION}-a", "machineType": A3, "provisioningModel": "STANDARD", "instanceCount": 4}],
    }
    status, answer = call(emulator, "POST", CALENDAR, {"futureResourcesSpecs": {"a": {}, "b": {}}})
    assert status == 400 and "exactly one spec" in answer["error"]["message"], answer


def test_the_score_moves_with_the_stockouts_grants_and_preemptions_seen(emulator: RunningEmulator) -> None:
    before = _advice(emulator, _ask())
    for _ in range(3):
        _signal(emulator, f"{REGION}-a", "STOCKOUT")
    _signal(emulator, f"{REGION}-b", "GRANT", count=2)
    after = _advice(emulator, _ask())
    assert before["scores"]["obtainability"] == 0.5
    assert after["scores"] == {"obtainability": 0.75}  # (2 + 1) / (2 + 0 + 2) in us-east5-b, the best zone now
    assert after["shards"][0]["zone"] == f"{REGION}-b"
    balanced = _advice(emulator, _ask(distributionPolicy=_ask()["distributionPolicy"] | {"targetShape": "BALANCED"}))
    assert [(s["zone"], s["instanceCount"]) for s in balanced["shards"]] == [(f"{REGION}-b", 2), (f"{REGION}-a", 2)]
    assert balanced["scores"]["obtainability"] == 0.2  # the worst zone used: (0 + 1) / (3 + 2)
    # Spot: estimatedUptime from the preemptions seen, as one of the values Google's page gives (3,600 s, 600 s):
    # planb's model's mean, a day's prior with nothing seen, rounded down to one of them.
    assert _advice(emulator, _ask("SPOT"))["scores"] == {"obtainability": 0.5, "estimatedUptime": "3600s"}
    for _ in range(2):
        _signal(emulator, f"{REGION}-a", "PREEMPTION", model="SPOT", uptimeSeconds=3600)
    assert _advice(emulator, _ask("SPOT"))["scores"]["estimatedUptime"] == "3600s"  # a mean of 31,200 s
    _signal(emulator, f"{REGION}-a", "PREEMPTION", model="SPOT", uptimeSeconds=60, count=60)
    assert _advice(emulator, _ask("SPOT"))["scores"]["estimatedUptime"] == "600s"  # a mean of about 1,543 s
    # calendarMode recommends the zone that granted, and lists the one that stocked out as without capacity.
    for zone, outcome in ((f"{REGION}-a", "STOCKOUT"), (f"{REGION}-b", "GRANT")):
        _signal(emulator, zone, outcome, machine=V6E, count=3)
    spec = {"targetResources": {"aggregateResources": {"vmFamily": "VM_FAMILY_CLOUD_TPU_LITE_POD_SLICE_CT6E"}}}
    status, answer = call(emulator, "POST", CALENDAR, {"futureResourcesSpecs": {"v6e": spec}})
    assert status == 200, answer
    advice = answer["recommendations"][0]["recommendationsPerSpec"]["v6e"]
    assert (advice["location"], advice["recommendationType"]) == (f"zones/{REGION}-b", "FUTURE_RESERVATION")
    assert advice["otherLocations"][f"zones/{REGION}-a"] == {"status": "NO_CAPACITY"}


def test_a_tpu_machine_type_gets_no_recommendation_from_advice_capacity(emulator: RunningEmulator) -> None:
    """Google: "When you send a request to the advice.capacity API, you can't view the availability of TPUs". The
    emulator answers 200 with nothing to view, whatever it was told of the TPU shape; calendar mode still takes it."""
    for machine in (V6E, "ct5lp-hightpu-4t", "ct5p-hightpu-4t", "tpu7x-standard-4t"):
        _signal(emulator, f"{REGION}-a", "GRANT", machine=machine, count=5)
        for model in ("STANDARD", "SPOT", "FLEX_START"):
            assert call(emulator, "POST", CAPACITY, _ask(model, machine)) == (200, {}), (machine, model)
    # A TPU machine type beside a GPU one is left out of the choice.
    both = _ask() | {"instanceFlexibilityPolicy": {"instanceSelections": {"a": {"machineTypes": [V6E, A3]}}}}
    assert {s["machineType"] for s in _advice(emulator, both)["shards"]} == {A3}
    spec = {"targetResources": {"aggregateResources": {"vmFamily": "VM_FAMILY_CLOUD_TPU_LITE_POD_SLICE_CT6E"}}}
    status, answer = call(emulator, "POST", CALENDAR, {"futureResourcesSpecs": {"v6e": spec}})
    assert status == 200 and answer["recommendations"][0]["recommendationsPerSpec"]["v6e"]["location"], answer


def test_a_refused_shape_is_answered_400_and_not_supported(emulator: RunningEmulator) -> None:
    status, answer = call(emulator, "POST", "/planb/v1/advice", {"machineType": "a3-*", "refuse": True})
    assert status == 200 and answer == {"refusedMachineTypes": ["a3-*"]}, answer
    status, answer = call(emulator, "POST", CAPACITY, _ask())
    assert status == 400 and answer["error"]["status"] == "INVALID_ARGUMENT", answer
    assert A3 in answer["error"]["message"]
    assert _advice(emulator, _ask(machine_type="n2-standard-8"))["scores"]["obtainability"] == 0.5
    assert call(emulator, "POST", "/planb/v1/advice", {"machineType": "ct6e-*", "refuse": True})[0] == 200
    spec = {"targetResources": {"aggregateResources": {"vmFamily": "VM_FAMILY_CLOUD_TPU_LITE_POD_SLICE_CT6E"}}}
    status, answer = call(emulator, "POST", CALENDAR, {"futureResourcesSpecs": {"v6e": spec}})
    assert status == 200, answer
    advice = answer["recommendations"][0]["recommendationsPerSpec"]["v6e"]
    assert "location" not in advice and {v["status"] for v in advice["otherLocations"].values()} == {"NOT_SUPPORTED"}
    for pattern in ("ct6e-*", "a3-*"):
        status, answer = call(emulator, "POST", "/planb/v1/advice", {"machineType": pattern, "refuse": False})
    assert answer == {"refusedMachineTypes": []}
    assert call(emulator, "POST", CAPACITY, _ask())[0] == 200
