"""playbooks/cluster.yml with a four-rung ladder against the emulator.

planb_plans = reservation -> on-demand -> dws -> spot: every plan's pools are created in that order with the GKE
settings of their kind, a second run changes nothing, a check run of site.yml writes nothing, and a missing
reservation stops the play before any write; what the converge leaves in the emulator validates against Google's
discovery documents. (The Kueue side of the ladder is tested with the queues chart.)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from planb.local.gke_emulator.conformance import state_dir_violations
from planb.local.gke_emulator.emulator import RunningEmulator
from planb.local.gke_emulator.store import list_node_pools
from tests.support.integration.gke.gke_api import call
from tests.support.integration.gke.modules import ansible_playbook
from tests.support.integration.gke.refusals import assert_plain_refusal

PROJECT, ZONE = "planb-local", "us-east5-b"
RESERVATIONS = f"/compute/v1/projects/{PROJECT}/zones/{ZONE}/reservations"
CT6E = "VM_FAMILY_CLOUD_TPU_LITE_POD_SLICE_CT6E"
LADDER: list[dict[str, Any]] = [
    {"name": "reserved", "kind": "reservation", "slices": 2, "nodepool": "reserved-pool", "reservation": "tpu-res"},
    {"name": "on-demand", "kind": "on-demand", "slices": 1, "nodepool": "on-demand-pool"},
    {"name": "dws", "kind": "dws", "slices": 1, "nodepool": "dws-pool"},
    {"name": "spot", "kind": "spot", "slices": 1, "nodepool": "spot-pool"},
]


def _run(
    emulator: RunningEmulator,
    tmp_path: Path,
    *extra: str,
    ladder: object = LADDER,
    playbook: str = "playbooks/cluster.yml",
) -> tuple[int, str]:
    plans = tmp_path / "plans.yml"
    plans.write_text(yaml.safe_dump({"planb_plans": ladder}))
    env = {"GKE_API_ENDPOINT": emulator.url, "PLANB_STATE_DIR": str(tmp_path / "state")}
    done = ansible_playbook(playbook, "-i", "inventories/local", "-e", f"@{plans}", *extra, env=env)
    return done.returncode, done.stdout + done.stderr


def _reserve(
    emulator: RunningEmulator, chips: int = 32, workload: str = "BATCH", vm_family: str = CT6E, name: str = "tpu-res"
) -> None:
    """The TPU reservation Google makes (an aggregate one), as gcloud's --tpu-version --chip-count sends it."""
    body = {
        "name": name,
        "specificReservationRequired": True,
        "aggregateReservation": {
            "vmFamily": vm_family,
            "workloadType": workload,
            "reservedResources": [{"accelerator": {"acceleratorCount": chips}}],
        },
    }
    status, answer = call(emulator, "POST", RESERVATIONS, body)
    assert status == 200, answer


def _pools(emulator: RunningEmulator) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in list_node_pools(emulator.store.root.parent)}


def _changed(output: str) -> int:
    match = re.search(r"localhost\s+: ok=\d+\s+changed=(\d+)", output)
    assert match, output[-3000:]
    return int(match.group(1))


def test_a_four_rung_ladder_converges_in_order_and_a_rerun_changes_nothing(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    _reserve(emulator)
    rc, out = _run(emulator, tmp_path)
    assert rc == 0, out[-4000:]
    pools = _pools(emulator)
    assert sorted(pools) == [
        "default-pool",
        "dws-pool",
        "on-demand-pool",
        "reserved-pool",
        "reserved-pool-2",
        "spot-pool",
    ]
    # Created rung by rung, in the list's order.
    pattern = r"TASK \[planb\.gke\.gke_node_pool : Create, update or delete the node pool - tpu-cluster/([\w-]+)\]"
    created = re.findall(pattern, out)
    assert created == ["reserved-pool", "reserved-pool-2", "on-demand-pool", "dws-pool", "spot-pool"], out[-4000:]
    for name, plan in [("reserved-pool", "reserved"), ("reserved-pool-2", "reserved"), ("spot-pool", "spot")]:
        assert pools[name]["config"]["labels"]["planb.dev/plan"] == plan
        assert pools[name]["autoscaling"]["maxNodeCount"] == 4
    reserved = pools["reserved-pool-2"]["config"]
    assert reserved["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["tpu-res"],
    }
    assert not reserved.get("spot") and not reserved.get("flexStart")
    on_demand = pools["on-demand-pool"]["config"]
    assert on_demand["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    dws = pools["dws-pool"]
    assert dws["config"]["flexStart"] and dws["queuedProvisioning"]["enabled"]
    assert not dws["management"]["autoRepair"] and dws["autoscaling"]["locationPolicy"] == "ANY"
    spot = pools["spot-pool"]
    assert spot["config"]["spot"] is True and not spot["config"].get("flexStart")
    assert not spot["queuedProvisioning"]["enabled"]
    # GKE's own Spot label, and the taint planb sends so that only pods which tolerate it land there.
    assert spot["config"]["labels"]["cloud.google.com/gke-spot"] == "true"
    assert {"key": "cloud.google.com/gke-spot", "value": "true", "effect": "NO_SCHEDULE"} in spot["config"]["taints"]
    # Every cluster, node pool, operation and reservation the converge left validates against Google's discovery
    # documents (what `planb local gke-emulator validate` checks).
    assert state_dir_violations(emulator.store.root.parent) == []

    writes = len(emulator.writes())
    rc, out = _run(emulator, tmp_path)
    assert rc == 0 and _changed(out) == 0, out[-4000:]
    assert emulator.writes()[writes:] == []
    rc, out = _run(emulator, tmp_path, "--check", "--diff")
    assert rc == 0 and _changed(out) == 0, out[-4000:]
    assert emulator.writes()[writes:] == []

    # Dropping the Spot rung leaves its pool over: refused until confirmed, naming it.
    rc, out = _run(emulator, tmp_path, ladder=LADDER[:3])
    assert rc != 0, out[-4000:]
    assert_plain_refusal(out, "leave node pool(s) spot-pool of cluster tpu-cluster over")
    assert f"-e planb_scale_down_confirm={PROJECT}/{ZONE}/tpu-cluster/spot-pool" in out
    assert emulator.writes()[writes:] == []


def test_site_check_diff_on_a_fresh_project_shows_the_ladder_and_writes_nothing(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    """`ansible-playbook site.yml --check --diff` on a project with no cluster yet, the ladder's reservation made: no
    cluster means no API server to reach, so the GKE emulator alone serves it (no stack). The run shows what it would
    create (the cluster, the plans' pools, with their diffs) and says Kueue and the queues would be installed once the
    cluster exists; it sends GKE no write and leaves no kubeconfig behind."""
    _reserve(emulator)
    rc, out = _run(emulator, tmp_path, "--check", "--diff", playbook="site.yml")
    assert rc == 0, out[-4000:]
    # The diffs of what it would create: the plans' pools, the DWS plan's with queued provisioning.
    assert "+    name: on-demand-pool" in out and "+    name: dws-pool" in out, out[-4000:]
    assert "+    queuedProvisioning:\n+        enabled: true" in out, out[-4000:]
    words = " ".join(out.split())  # the messages as the YAML callback folds them
    assert "does not exist yet (no cluster): Kueue v0.19.2 would be installed." in words, out[-4000:]
    assert "does not exist yet (no cluster): the queues of profile tpu-v6e-4x4 would be installed." in words
    # Only the test's own reservations.insert.
    assert [w for w in emulator.writes() if not w["path"].startswith("/compute/")] == []
    assert _pools(emulator) == {}
    assert not list((tmp_path / "state").rglob("*kubeconfig*")), "a check run wrote a kubeconfig"


def test_a_missing_or_too_small_reservation_stops_the_play_before_any_write(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    rc, out = _run(emulator, tmp_path)
    assert rc != 0
    assert_plain_refusal(out, f"reservation tpu-res does not exist in project {PROJECT}, zone {ZONE}")
    # The hint is the command Google documents for TPU reservations (aggregate, chips), not --machine-type.
    assert "gcloud beta compute future-reservations create tpu-res" in out
    assert "--tpu-version=V6E --chip-count=32 --workload-type=BATCH" in out and "--vm-count" not in out
    assert emulator.writes() == []
    _reserve(emulator, chips=16)
    rc, out = _run(emulator, tmp_path)
    assert rc != 0 and "reservation tpu-res holds 16 ct6e chips and the plan's slices need 32: planb's policy" in out
    assert [w["method"] for w in emulator.writes()] == ["POST"]  # the test's own reservations.insert


def test_a_reservation_of_the_wrong_accelerator_or_workload_type_is_refused_naming_the_fix(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    _reserve(emulator, vm_family="VM_FAMILY_CLOUD_TPU_LITE_POD_SLICE_CT5LP")
    rc, out = _run(emulator, tmp_path)
    assert rc != 0
    assert_plain_refusal(out, "reservation tpu-res reserves TPU chips 32 ct5lp, the pool's machine type")
    assert "use a reservation of ct6e chips, or the profile of the reserved family" in out
    _reserve(emulator, workload="SERVING", name="serving-res")
    rc, out = _run(emulator, tmp_path, ladder=[{**LADDER[0], "reservation": "serving-res"}, *LADDER[1:]])
    assert rc != 0
    assert_plain_refusal(out, "reservation serving-res has workloadType SERVING and the pool is a multi-host TPU slice")
    assert "use a reservation created with --workload-type=BATCH" in out
    assert [w["method"] for w in emulator.writes()] == ["POST", "POST"]  # the test's own reservations.insert
