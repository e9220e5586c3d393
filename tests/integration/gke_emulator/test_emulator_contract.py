"""The emulator refuses what Google's discovery documents refuse, as Google answers it, and answers in their form.

A body with a field the schema does not list, a value of the wrong type or an enum value the document does not
list gets HTTP 400 INVALID_ARGUMENT naming the field, before anything is stored; int64 fields are accepted as JSON
numbers or strings and answered as strings; the stored state is checked by ``planb local gke-emulator validate``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from planb.local.gke_emulator import conformance, contract, discovery
from planb.local.gke_emulator.emulator import RunningEmulator
from planb.local.gke_emulator.errors import ApiError
from tests.support.integration.gke.gke_api import call, create
from tests.support.integration.gke.seed_bodies import CLUSTER_PATH, LOCATION, SEED_CLUSTER, SEED_ONDEMAND_POOL

Body = dict[str, Any]
POOLS = f"/v1/{CLUSTER_PATH}/nodePools"
RESERVATIONS = "/compute/v1/projects/planb-seed/zones/us-east5-b/reservations"


def _pool(**changes: Any) -> Body:
    body = json.loads(json.dumps(SEED_ONDEMAND_POOL))
    body["nodePool"].update(changes)
    return body


def _refused(emulator: RunningEmulator, path: str, body: Body) -> Body:
    status, answer = call(emulator, "POST", path, body)
    assert status == 400, answer
    assert answer["error"]["status"] == "INVALID_ARGUMENT", answer
    return dict(answer["error"])


@pytest.fixture
def cluster(emulator: RunningEmulator) -> RunningEmulator:
    create(emulator, LOCATION, f"{LOCATION}/clusters", SEED_CLUSTER)
    return emulator


def test_a_node_pool_create_with_an_unknown_field_is_refused_naming_it(cluster: RunningEmulator) -> None:
    error = _refused(cluster, POOLS, _pool(fooBar=1))
    unknown = "Invalid JSON payload received. Unknown name \"fooBar\" at 'node_pool': Cannot find field."
    assert error["message"] == unknown
    assert error["details"] == [
        {
            "@type": "type.googleapis.com/google.rpc.BadRequest",
            "fieldViolations": [{"field": "node_pool", "description": error["message"]}],
        }
    ]
    # Refused before anything changed: no pool, no operation.
    assert call(cluster, "GET", f"{POOLS}/on-demand-pool")[0] == 404
    assert [r["status"] for r in cluster.store.request_log() if r["path"] == POOLS] == [400]


def test_a_wrong_type_and_an_unlisted_enum_value_are_refused_naming_the_field(cluster: RunningEmulator) -> None:
    error = _refused(cluster, POOLS, _pool(initialNodeCount="three"))
    assert error["message"] == "Invalid value at 'node_pool.initial_node_count' (TYPE_INT32), \"three\""
    body = _pool()
    body["nodePool"]["config"]["reservationAffinity"]["consumeReservationType"] = "SOMETIMES"
    error = _refused(cluster, POOLS, body)
    field = "node_pool.config.reservation_affinity.consume_reservation_type"
    assert error["message"] == f"Invalid value at '{field}' (TYPE_ENUM), \"SOMETIMES\""
    assert error["details"][0]["fieldViolations"] == [{"field": field, "description": error["message"]}]


def test_every_violation_is_named_nested_fields_by_path_and_index(cluster: RunningEmulator) -> None:
    body = _pool(autoscaling={"enabled": "maybe"}, locations="us-east5-b")
    body["nodePool"]["config"]["accelerators"] = [{"acceleratorCount": 1.5}]
    body["nodePool"]["config"]["machineType"] = {"name": "x"}
    body["extra"] = True
    lines = _refused(cluster, POOLS, body)["message"].split("\n")
    assert lines == [
        "Invalid value at 'node_pool.autoscaling.enabled' (TYPE_BOOL), \"maybe\"",
        "Invalid value at 'node_pool.config' (machine_type), Starting an object on a scalar field",
        "Invalid value at 'node_pool.config.accelerators[0].accelerator_count' (TYPE_INT64), 1.5",
        "Invalid value at 'node_pool.locations' (TYPE_REPEATED), \"us-east5-b\"",
        'Invalid JSON payload received. Unknown name "extra": Cannot find field.',
    ]


def test_a_list_for_a_field_that_is_not_repeated_is_refused(cluster: RunningEmulator) -> None:
    message = _refused(cluster, POOLS, _pool(autoscaling=[]))["message"]
    assert message == (
        "Invalid JSON payload received. Unknown name \"autoscaling\" at 'node_pool': Proto field is not repeating, "
        "cannot start list."
    )


def test_output_only_fields_in_a_create_are_ignored_and_read_back_as_the_emulators_own(
    cluster: RunningEmulator,
) -> None:
    """AIP-203: the server clears an output-only ("readOnly") field of a request and raises no error for it."""
    made = _pool(status="ERROR", etag="x", statusMessage="forged", selfLink="https://evil.example/p")
    create(cluster, LOCATION, f"{CLUSTER_PATH}/nodePools", made)
    pool = call(cluster, "GET", f"{POOLS}/on-demand-pool")[1]
    assert pool["status"] == "RUNNING", pool
    # The client's values are gone; the emulator writes no etag or statusMessage of its own (docs/local-mode.md).
    assert "etag" not in pool and "statusMessage" not in pool, pool
    assert pool["selfLink"].startswith("https://container.googleapis.com/v1/"), pool["selfLink"]
    stored = cluster.store.node_pools[f"{CLUSTER_PATH}/nodePools/on-demand-pool"]
    assert stored["status"] == "RUNNING" and "etag" not in stored
    # Still parsed as protobuf parses it: an output-only field of the wrong type is refused.
    error = _refused(cluster, POOLS, _pool(name="other", status={"x": 1}))
    assert "Starting an object on a scalar field" in error["message"], error


def test_int64_is_accepted_as_number_or_string_and_answered_as_a_string(cluster: RunningEmulator) -> None:
    for name, count in (("gpu-a", 8), ("gpu-b", "8")):
        body = {
            "nodePool": {
                "name": name,
                "initialNodeCount": "0",
                "config": {
                    "machineType": "a3-highgpu-8g",
                    "accelerators": [{"acceleratorType": "nvidia-h100-80gb", "acceleratorCount": count}],
                    "diskSizeGb": 200,
                },
                "maxPodsConstraint": {"maxPodsPerNode": 32},
            }
        }
        create(cluster, LOCATION, f"{CLUSTER_PATH}/nodePools", body)
        pool = call(cluster, "GET", f"{POOLS}/{name}")[1]
        assert pool["config"]["accelerators"][0]["acceleratorCount"] == "8"
        assert pool["maxPodsConstraint"] == {"maxPodsPerNode": "32"}
        # int32 stays a number, also when sent as a string of digits.
        assert pool["config"]["diskSizeGb"] == 200 and pool["initialNodeCount"] == 0
        stored = cluster.store.node_pools[f"{CLUSTER_PATH}/nodePools/{name}"]
        assert stored["config"]["accelerators"][0]["acceleratorCount"] == "8"


def test_proto_field_names_and_protobufs_boolean_strings_are_read_as_google_reads_them(
    cluster: RunningEmulator,
) -> None:
    body = {"node_pool": {"name": "snake", "initial_node_count": 0, "management": {"auto_repair": "false"}}}
    create(cluster, LOCATION, f"{CLUSTER_PATH}/nodePools", body)
    pool = call(cluster, "GET", f"{POOLS}/snake")[1]
    assert pool["management"]["autoRepair"] is False and pool["initialNodeCount"] == 0


def test_a_reservation_insert_is_checked_against_compute_v1(emulator: RunningEmulator) -> None:
    bad = {"name": "res", "specificReservation": {"count": 2, "vmCount": 2}}
    error = _refused(emulator, RESERVATIONS, bad)
    assert error["message"] == (
        "Invalid JSON payload received. Unknown name \"vmCount\" at 'resource.specific_reservation': Cannot find field."
    )
    good = {"name": "res", "specificReservation": {"count": "2", "instanceProperties": {"machineType": "n2-x-2"}}}
    assert call(emulator, "POST", RESERVATIONS, good)[0] == 200
    assert call(emulator, "GET", f"{RESERVATIONS}/res")[1]["specificReservation"]["count"] == "2"


def test_a_service_enable_is_checked_and_emulator_only_paths_and_cloud_quotas_are_not(
    emulator: RunningEmulator,
) -> None:
    error = _refused(emulator, "/serviceusage/v1/projects/p/services/tpu.googleapis.com:enable", {"force": True})
    assert error["message"] == 'Invalid JSON payload received. Unknown name "force": Cannot find field.'
    assert call(emulator, "POST", "/planb/v1/faults", {"operationType": "CREATE_NODE_POOL"})[0] == 200
    assert discovery.find_method("GET", "/cloudquotas/v1/projects/p/locations/global/services/s/quotaInfos") is None


def test_the_stored_state_after_creates_validates_and_a_stored_int64_number_does_not(
    cluster: RunningEmulator, tmp_path: Path
) -> None:
    create(cluster, LOCATION, f"{CLUSTER_PATH}/nodePools", SEED_ONDEMAND_POOL)
    reservation = {"name": "r", "specificReservation": {"count": 1, "instanceProperties": {"machineType": "n2-x-2"}}}
    assert call(cluster, "POST", RESERVATIONS, reservation)[0] == 200
    assert conformance.state_violations(cluster.store.data) == []
    state = json.loads(json.dumps(cluster.store.data))
    state["reservations"]["projects/planb-seed/zones/us-east5-b/reservations/r"]["specificReservation"]["count"] = 1
    state["nodePools"][f"{CLUSTER_PATH}/nodePools/on-demand-pool"]["config"]["placement"] = "x"
    assert conformance.state_violations(state) == [
        f"nodePools {CLUSTER_PATH}/nodePools/on-demand-pool (container v1 NodePool): Invalid JSON payload received. "
        "Unknown name \"placement\" at 'config': Cannot find field.",
        "reservations projects/planb-seed/zones/us-east5-b/reservations/r (compute v1 Reservation): Invalid value at "
        "'specific_reservation.count' (TYPE_INT64), 1: Google answers int64 fields as a JSON string",
    ]


def test_planb_gke_emulator_validate_reads_the_state_file(cluster: RunningEmulator, tmp_path: Path) -> None:
    state_dir = cluster.store.root.parent
    command = [sys.executable, "-m", "planb.cli", "local", "gke-emulator", "validate", "--state-dir", str(state_dir)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every stored resource validates against the discovery documents (container v1 20261027" in done.stdout
    state = json.loads((state_dir / "gke-emulator" / "state.json").read_text())
    next(iter(state["clusters"].values()))["currentNodeCount"] = "3"
    (tmp_path / "bad" / "gke-emulator").mkdir(parents=True)
    (tmp_path / "bad" / "gke-emulator" / "state.json").write_text(json.dumps(state))
    done = subprocess.run([*command[:-1], str(tmp_path / "bad")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    wrong = "Invalid value at 'current_node_count' (TYPE_INT32), \"3\": Google answers int32 fields as a JSON number"
    assert wrong in done.stdout


def test_the_documents_load_only_when_first_used() -> None:
    code = (
        "import planb.local.gke_emulator.emulator, planb.local.gke_emulator.discovery as d;"
        " print(d.document.cache_info().currsize)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "0", done.stderr
    assert discovery.revision("container") == "20261027" and discovery.revision("compute") == "20261106"


@pytest.mark.parametrize(
    ("value", "accepted"),
    [(5, True), ("5", True), ("+5", True), (5.0, True), (5.5, False), (" 5", False), ("0x5", False), (True, False)],
)
def test_int32_reading_follows_protobufs_json_parser(value: object, accepted: bool) -> None:
    _, violations = contract.conform("container", "SetNodePoolSizeRequest", {"nodeCount": value})
    assert (violations == []) is accepted, violations


def test_an_answer_its_response_schema_refuses_is_the_emulators_bug_answered_500() -> None:
    method = discovery.find_method("GET", f"/v1/{CLUSTER_PATH}/nodePools/p")
    assert method is not None and method.response == "NodePool"
    assert conformance.checked_response(method, {"name": "p", "initialNodeCount": "2"}) == {
        "name": "p",
        "initialNodeCount": 2,
    }
    with pytest.raises(ApiError) as refused:
        conformance.checked_response(method, {"name": "p", "nodeCount": 2})
    assert refused.value.code == 500 and 'Unknown name "nodeCount"' in refused.value.message
    assert "container v1 (discovery revision 20261027) container.projects.locations.clusters.nodePools.get" in (
        refused.value.message
    )
