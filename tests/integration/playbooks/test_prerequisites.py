"""The seed's "before you begin", automated: APIs enabled and each plan's quota (on-demand for plan A, preemptible
for DWS and Spot) checked before the cluster is created, against the emulator's Service Usage and Cloud Quotas
endpoints and their switches."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from planb.cli import main as planb_main
from planb.local.gke_emulator.background import BackgroundEmulator
from planb.local.gke_emulator.emulator import RunningEmulator
from planb.local.gke_emulator.store import list_clusters, list_node_pools
from tests.support.integration.gke.modules import PROJECT, ModuleRunner, ansible_playbook

APIS = ["container.googleapis.com", "tpu.googleapis.com"]
QUOTA: dict[str, Any] = {"location": "us-east5-b", "machine_type": "ct6e-standard-4t", "needed": 16}


class ServiceRunner(ModuleRunner):
    """gcp_service takes no location."""

    def base_args(self) -> dict[str, Any]:
        return {k: v for k, v in super().base_args().items() if k != "location"}


def _call(emulator: RunningEmulator, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"{emulator.url}{path}", data=data, method=method, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _disable(emulator: RunningEmulator, service: str, **extra: Any) -> None:
    assert _call(emulator, "POST", "/planb/v1/services", {"service": service, "state": "DISABLED", **extra})[0] == 200


def _set_quota(
    emulator: RunningEmulator,
    value: int,
    region: str = "us-east5",
    machine: str = "ct6e-standard-4t",
    quota_type: str = "on-demand",
) -> None:
    body = {"region": region, "machineType": machine, "value": value, "quotaType": quota_type}
    assert _call(emulator, "POST", "/planb/v1/quotas", body)[0] == 200


def test_emulator_serves_service_usage_with_an_api_disabled_switch(emulator: RunningEmulator) -> None:
    service = f"/serviceusage/v1/projects/{PROJECT}/services/tpu.googleapis.com"
    assert _call(emulator, "GET", service)[1]["state"] == "ENABLED"
    _disable(emulator, "tpu.googleapis.com")
    assert _call(emulator, "GET", service)[1]["state"] == "DISABLED"
    status, operation = _call(emulator, "POST", f"{service}:enable", {})
    assert status == 200 and operation["name"].startswith("operations/")
    assert _call(emulator, "GET", f"/serviceusage/v1/{operation['name']}")[1]["done"] in (True, False)
    assert _call(emulator, "GET", service)[1]["state"] == "ENABLED"
    # While the Kubernetes Engine API is disabled, the GKE API answers the project 403, as Google does.
    _disable(emulator, "container.googleapis.com")
    status, error = _call(emulator, "GET", f"/v1/projects/{PROJECT}/locations/us-east5-b/clusters")
    assert status == 403 and "Kubernetes Engine API has not been used" in error["error"]["message"]


def test_emulator_pages_quota_infos_and_sets_a_quota(emulator: RunningEmulator) -> None:
    path = f"/cloudquotas/v1/projects/{PROJECT}/locations/global/services/compute.googleapis.com/quotaInfos"
    first = _call(emulator, "GET", path)[1]
    assert first["nextPageToken"]
    infos = first["quotaInfos"] + _call(emulator, "GET", f"{path}?pageToken={first['nextPageToken']}")[1]["quotaInfos"]
    _set_quota(emulator, 8)
    family = next(
        i for i in _call(emulator, "GET", f"{path}?pageSize=50")[1]["quotaInfos"] if "tpu_family" in i["dimensions"]
    )
    assert family["quotaDisplayName"] == "TPUs per TPU family" and family["quotaId"].startswith("planb-emulated-")
    assert family["dimensionsInfos"][0] == {
        "dimensions": {"region": "us-east5", "tpu_family": "CT6E"},
        "details": {"value": "8"},
        "applicableLocations": ["us-east5"],
    }
    assert len({i["quotaDisplayName"] for i in infos}) == len(infos)


def test_gcp_service_enables_what_is_disabled(emulator: RunningEmulator) -> None:
    modules = ServiceRunner(emulator)
    assert modules.run("gcp_service", {"services": APIS})["changed"] is False
    _disable(emulator, "tpu.googleapis.com")
    checked = modules.run("gcp_service", {"services": APIS}, check_mode=True)
    assert checked["changed"] and checked["enabled"] == ["tpu.googleapis.com"]
    assert not [r for r in emulator.store.request_log() if r["method"] == "POST"]
    enabled = modules.run("gcp_service", {"services": APIS})
    assert enabled["changed"] and enabled["services"] == {name: "ENABLED" for name in APIS}
    assert modules.run("gcp_service", {"services": APIS})["changed"] is False


def test_gcp_service_fails_fast_naming_the_fix(emulator: RunningEmulator) -> None:
    modules = ServiceRunner(emulator)
    _disable(emulator, "tpu.googleapis.com")
    only_check = modules.fail("gcp_service", {"services": APIS, "enable": False})
    assert f"`gcloud services enable tpu.googleapis.com --project {PROJECT}`" in only_check["msg"]
    _disable(emulator, "container.googleapis.com", enableRefused=True)
    refused = modules.fail("gcp_service", {"services": APIS})
    assert "answered 403" in refused["msg"] and "roles/serviceusage.serviceUsageAdmin" in refused["msg"]
    assert "gcloud services enable" in refused["msg"]
    bad = modules.fail("gcp_service", {"services": ["container"]})
    assert "is not an API name" in bad["msg"]


def test_gcp_quota_check_reports_found_and_needed(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    fits = modules.run("gcp_quota_check", QUOTA)
    assert fits["checked"] and fits["quota"]["value"] >= 16 and fits["region"] == "us-east5"
    _set_quota(emulator, 8)
    low = modules.fail("gcp_quota_check", QUOTA)["msg"]
    assert "has 8 chips" in low and "needs 16" in low and "'TPUs per TPU family' (tpu_family=CT6E)" in low
    assert "request an increase" in low and "planb_quota_check=false" in low
    # Another region's quota is not this one's.
    assert modules.run("gcp_quota_check", {**QUOTA, "location": "us-central1-b"})["checked"]
    unknown = modules.run("gcp_quota_check", {**QUOTA, "machine_type": "a4-highgpu-8g", "needed": 8})
    assert unknown["checked"] is False and "Not checked" in unknown["msg"]


def test_gcp_quota_check_reads_the_preemptible_quota(modules: ModuleRunner, emulator: RunningEmulator) -> None:
    preemptible = {**QUOTA, "quota_type": "preemptible"}
    fits = modules.run("gcp_quota_check", preemptible)
    assert fits["checked"] and fits["quota"]["display_name"] == "Preemptible TPU slices v6e", fits
    # Plan A's quota is another one: setting it leaves the preemptible one as it was, and the other way round.
    _set_quota(emulator, 8)
    assert modules.run("gcp_quota_check", preemptible)["checked"]
    # Google does not say whether one unit of "Preemptible TPU slices v6e" is a chip or a slice: 0 fits no slice in
    # either, 4 fits one slice of 16 chips only if it counts slices, so it is reported, not refused.
    _set_quota(emulator, 0, quota_type="preemptible")
    zero = modules.fail("gcp_quota_check", preemptible)["msg"]
    assert "Quota too low for the preemptible plans" in zero and "'Preemptible TPU slices v6e'" in zero, zero
    assert "request an increase of planb-emulated-preemptible-tpu-slices-v6e in us-east5 to at least 16" in zero
    # fail_when_short=false (the cluster play): the same finding, reported with the request link, not a failure.
    reported = modules.run("gcp_quota_check", {**preemptible, "fail_when_short": False})
    assert reported["short"] is True and reported["request_url"].endswith("/request_increase"), reported
    assert "Quota too low for the preemptible plans" in reported["msg"] and "can take days" in reported["msg"]
    _set_quota(emulator, 4, quota_type="preemptible")
    undecided = modules.run("gcp_quota_check", preemptible)
    assert undecided["checked"] is False, undecided
    assert "does not document whether one unit is a chip or a slice" in undecided["msg"]
    # v5e's preemptible quota counts chips: 4 of them do not fit a 2x4 slice of 8.
    v5e = {**preemptible, "machine_type": "ct5lp-hightpu-4t", "needed": 8}
    _set_quota(emulator, 4, machine="ct5lp-hightpu-4t", quota_type="preemptible")
    low = modules.fail("gcp_quota_check", v5e)["msg"]
    assert "has 4 chips of preemptible Compute Engine quota 'Preemptible TPU v5 Lite Podslice chips'" in low, low


def test_endpoints_default_to_google_off_loopback(modules: ModuleRunner) -> None:
    from ansible_collections.planb.gke.plugins.module_utils import project_apis

    google = {"api_endpoint": "https://container.googleapis.com"}
    assert project_apis.endpoint(google, "quota_endpoint", project_apis.CLOUDQUOTAS_ENDPOINT, "cloudquotas") == (
        "https://cloudquotas.googleapis.com"
    )
    local = {"api_endpoint": "http://127.0.0.1:8765/"}
    assert project_apis.endpoint(local, "serviceusage_endpoint", "x", "serviceusage") == (
        "http://127.0.0.1:8765/serviceusage"
    )
    explicit = {**local, "quota_endpoint": "https://quota.example/"}
    assert project_apis.endpoint(explicit, "quota_endpoint", "x", "cloudquotas") == "https://quota.example"


def test_cli_switches(
    emulator: RunningEmulator, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(BackgroundEmulator, "running", lambda self: (0, emulator.url))
    emulator_cli = ["local", "gke-emulator"]
    assert planb_main([*emulator_cli, "disable-api", "tpu.googleapis.com", "--project", PROJECT]) == 0
    tpu = ["--machine-type", "ct6e-standard-4t", "--region", "us-east5"]
    assert planb_main([*emulator_cli, "set-quota", *tpu, "--value", "4"]) == 0
    assert "reads 4 in us-east5" in capsys.readouterr().out
    preemptible = ["--machine-type", "ct6e-standard-4t", "--region", "us-east5", "--value", "0", "--preemptible"]
    assert planb_main([*emulator_cli, "set-quota", *preemptible]) == 0
    assert "the preemptible quota ct6e-standard-4t pools consume reads 0" in capsys.readouterr().out
    assert emulator.engine.project_apis.state["quotas"][0]["displayName"] == "Preemptible TPU slices v6e"
    assert emulator.engine.project_apis.service_state(PROJECT, "tpu.googleapis.com") == "DISABLED"
    cpu = ["--machine-type", "n2-standard-16", "--region", "us-east5", "--value", "4"]
    assert planb_main([*emulator_cli, "set-quota", *cpu]) != 0
    assert "no quota is known for machine type 'n2-standard-16'" in capsys.readouterr().err


def _play(emulator: RunningEmulator, tmp_path: Path, *extra: str) -> tuple[int, str]:
    env = {"GKE_API_ENDPOINT": emulator.url, "PLANB_STATE_DIR": str(tmp_path / "state")}
    done = ansible_playbook("playbooks/cluster.yml", "-i", "inventories/local", *extra, env=env)
    return done.returncode, done.stdout + done.stderr


def _gke_writes(emulator: RunningEmulator) -> list[dict[str, Any]]:
    return [r for r in emulator.writes() if r["path"].startswith("/v1/")]


def _pools(emulator: RunningEmulator) -> list[str]:
    return sorted(p["name"] for p in list_node_pools(emulator.store.root.parent))


def test_playbook_quota_too_low_gates_plan_a_s_pool_not_the_cluster(emulator: RunningEmulator, tmp_path: Path) -> None:
    """A quota too low stops the run before the cluster is created (it would bill while Google reviews the increase),
    naming the switch; asked to create it anyway, the CPU cluster does not wait, the pool that draws on it does."""
    _set_quota(emulator, 8)
    rc, out = _play(emulator, tmp_path)
    words = " ".join(out.split())
    assert rc != 0 and "Quota too low for plan A" in words and "Nothing was created" in words, out[-3000:]
    assert "-e planb_quota_create_anyway=true" in words, out[-3000:]
    assert _gke_writes(emulator) == []
    rc, out = _play(emulator, tmp_path, "-e", "planb_quota_create_anyway=true")
    assert rc == 0, out[-3000:]
    words = " ".join(out.split())
    assert "Quota too low for plan A" in words and "has 8 chips" in words and "needs 16" in words, out[-3000:]
    assert "https://cloud.google.com/docs/quotas/help/request_increase" in words and "can take days" in words
    assert "Waiting for quota: pool on-demand-pool of plan on-demand (on-demand) was not created" in words, out[-3000:]
    clusters = list_clusters(emulator.store.root.parent)
    assert [c["name"] for c in clusters] == ["tpu-cluster"]
    assert _pools(emulator) == ["default-pool", "dws-pool"]
    # The inventory's costs settings: its labels on the cluster and the pools' VMs, cost allocation on,
    # default-pool autoscaled from its floor.
    labels = {"managed-by": "planb", "planb-cluster": "tpu-cluster"}
    assert clusters[0]["resourceLabels"] == labels and clusters[0]["costManagementConfig"] == {"enabled": True}
    pools = {p["name"]: p for p in list_node_pools(emulator.store.root.parent)}
    assert pools["dws-pool"]["config"]["resourceLabels"].items() >= labels.items(), pools["dws-pool"]["config"]
    scaling = pools["default-pool"]["autoscaling"]
    assert (scaling["enabled"], scaling["minNodeCount"], scaling["maxNodeCount"]) == (True, 1, 3), scaling


def test_playbook_preemptible_quota_zero_gates_plan_b_not_the_cluster(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    # The tutorial's plan B (DWS flex-start) draws on preemptible quota; plan A's on-demand quota is ample.
    _set_quota(emulator, 0, quota_type="preemptible")
    rc, out = _play(emulator, tmp_path, "-e", "planb_quota_create_anyway=true")
    assert rc == 0, out[-3000:]
    words = " ".join(out.split())
    assert "Quota too low for the preemptible plans" in words, out[-3000:]
    assert "has 0 units of preemptible Compute Engine quota 'Preemptible TPU slices v6e'" in words, out[-3000:]
    assert "request an increase of planb-emulated-preemptible-tpu-slices-v6e in us-east5 to at least 16" in words
    assert "Waiting for quota: pool dws-pool of plan dws (dws) was not created" in words, words[-3000:]
    assert _pools(emulator) == ["default-pool", "on-demand-pool"]
    # The run after Google approves the increase creates the pool: the rehearsal
    # (tests/integration/collection/test_first_run_rehearsal.py) runs it, so it is not run twice here.


def test_playbook_enables_a_disabled_api_first(emulator: RunningEmulator, tmp_path: Path) -> None:
    _disable(emulator, "container.googleapis.com")
    _disable(emulator, "containerfilesystem.googleapis.com")
    rc, out = _play(emulator, tmp_path)
    assert rc == 0, out[-3000:]
    log = emulator.store.request_log()
    enables = [i for i, r in enumerate(log) if r["path"].endswith(":enable")]
    first_gke = next(i for i, r in enumerate(log) if r["path"].startswith("/v1/"))
    assert len(enables) == 2 and max(enables) < first_gke


def test_playbook_without_enabling_fails_fast_naming_the_fix(emulator: RunningEmulator, tmp_path: Path) -> None:
    _disable(emulator, "tpu.googleapis.com")
    rc, out = _play(emulator, tmp_path, "-e", "planb_enable_apis=false")
    assert rc != 0 and "gcloud services enable tpu.googleapis.com --project planb-local" in out, out[-3000:]
    assert [r for r in emulator.store.request_log() if r["path"].startswith("/v1/")] == []
