"""A cluster created without ``releaseChannel`` is enrolled in a channel, as GKE does.

container v1 Cluster.releaseChannel (defaults.DOC_RELEASE_CHANNEL_DEFAULT): no channel and no version, REGULAR; a
version, the most mature channel that offers it (STABLE, then REGULAR, then RAPID); a body that names a channel, or
UNSPECIFIED (no channel), keeps its own.
"""

from __future__ import annotations

from typing import Any

import pytest

from planb.cli import main as planb_main
from planb.local.gke_emulator import defaults
from planb.local.gke_emulator.background import BackgroundEmulator
from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.integration.gke.gke_api import call
from tests.support.integration.gke.modules import CLUSTER_ARGS, ONDEMAND_ARGS, ModuleRunner

BASE = "/v1/projects/p/locations/us-east5-b/clusters"


@pytest.mark.parametrize(
    ("extra", "channel"),
    [
        ({}, {"channel": "REGULAR"}),
        ({"initialClusterVersion": "latest"}, {"channel": "REGULAR"}),
        ({"initialClusterVersion": "1.33"}, {"channel": "STABLE"}),
        ({"initialClusterVersion": "1.34.1-gke.1829001"}, {"channel": "REGULAR"}),
        ({"initialClusterVersion": "1.35"}, {"channel": "RAPID"}),
        ({"releaseChannel": {"channel": "EXTENDED"}}, {"channel": "EXTENDED"}),
        ({"releaseChannel": {"channel": "UNSPECIFIED"}}, {"channel": "UNSPECIFIED"}),
    ],
)
def test_a_cluster_without_a_channel_is_enrolled_in_one(
    instant_emulator: RunningEmulator, extra: dict[str, Any], channel: dict[str, str]
) -> None:
    status, answer = call(instant_emulator, "POST", BASE, {"cluster": {"name": "c", **extra}})
    assert status == 200, answer
    status, cluster = call(instant_emulator, "GET", f"{BASE}/c")
    assert status == 200 and cluster["releaseChannel"] == channel, cluster


def test_the_rule_cites_googles_reference() -> None:
    assert defaults.DOC_RELEASE_CHANNEL_DEFAULT.startswith(
        "https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters"
    )
    assert [c for c, _ in defaults.CHANNEL_MINORS] == ["STABLE", "REGULAR", "RAPID"]


def test_the_version_is_a_floor_a_cluster_gke_upgraded_is_left_there(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    """GKE upgrades a channel's clusters by itself (gke_emulator.upgrades.auto_upgrade cites the
    pages), so gke_cluster's version is a minimum: a cluster above it changes nothing, one below it is upgraded to
    it."""
    assert modules.run("gke_cluster", CLUSTER_ARGS)["changed"]
    (name,) = emulator.store.clusters
    status, answer = call(emulator, "POST", "/planb/v1/upgrades", {"cluster": name, "version": "1.35"})
    assert status == 200 and answer["currentMasterVersion"].startswith("1.35."), answer
    # GKE never downgrades: the switch refuses an older version.
    assert call(emulator, "POST", "/planb/v1/upgrades", {"cluster": name, "version": "1.34"})[0] == 400
    again = modules.run("gke_cluster", {**CLUSTER_ARGS, "version": "1.34"}, check_mode=True, diff=True)
    assert not again["changed"] and again["actions"] == [], again
    assert not modules.run("gke_cluster", {**CLUSTER_ARGS, "version": "1.34"})["changed"]
    # A floor above the cluster's version upgrades its control plane (clusters.update, desiredMasterVersion).
    raised = modules.run("gke_cluster", {**CLUSTER_ARGS, "version": "1.35.1-gke.1000000"})
    assert raised["changed"], raised
    assert call(emulator, "GET", f"/v1/{name}")[1]["currentMasterVersion"] == "1.35.1-gke.1000000"


def test_a_tpu_pool_s_maintenance_exclusion_is_set_changed_in_place_and_spares_its_nodes(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    """container v1 NodePool.maintenancePolicy.exclusionUntilEndOfSupport: sent at creation, updated in place
    (UpdateNodePoolRequest.maintenancePolicy), and GKE's own upgrade leaves the excluded pool's nodes alone."""
    assert modules.run("gke_cluster", CLUSTER_ARGS)["changed"]
    pool = {**ONDEMAND_ARGS, "maintenance_exclusion": True}
    created = modules.run("gke_node_pool", pool)
    assert created["node_pool"]["maintenancePolicy"] == {"exclusionUntilEndOfSupport": {"enabled": True}}, created
    assert not modules.run("gke_node_pool", pool)["changed"]
    (name,) = emulator.store.clusters
    assert call(emulator, "POST", "/planb/v1/upgrades", {"cluster": name, "version": "1.35"})[0] == 200
    status, served = call(emulator, "GET", f"/v1/{name}/nodePools/{ONDEMAND_ARGS['name']}")
    assert status == 200 and served["version"].startswith("1.34."), served
    lifted = modules.run("gke_node_pool", {**pool, "maintenance_exclusion": False})
    assert lifted["changed"] and lifted["actions"] == ["update"], lifted
    status, served = call(emulator, "GET", f"/v1/{name}/nodePools/{ONDEMAND_ARGS['name']}")
    assert served["maintenancePolicy"] == {"exclusionUntilEndOfSupport": {"enabled": False}}, served


def test_the_cli_upgrades_a_cluster_as_gke_does(
    modules: ModuleRunner,
    emulator: RunningEmulator,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`planb local gke-emulator upgrade` (docs/local-mode.md): GKE's upgrade, unasked; an older version is refused."""
    assert modules.run("gke_cluster", CLUSTER_ARGS)["changed"]
    (name,) = emulator.store.clusters
    _, project, _, location, _, cluster = name.split("/")
    monkeypatch.setattr(BackgroundEmulator, "running", lambda self: (0, emulator.url))
    where = ["--location", location, "--project", project]
    assert planb_main(["local", "gke-emulator", "upgrade", cluster, "--version", "1.35", *where]) == 0
    assert f"GKE upgraded {name} to 1.35" in capsys.readouterr().out
    assert planb_main(["local", "gke-emulator", "upgrade", cluster, "--version", "1.34", *where]) != 0
    assert "Cannot upgrade" in capsys.readouterr().err
