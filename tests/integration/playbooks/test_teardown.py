"""Teardown cannot reach the wrong cluster: project/location/name confirmed, project ids checked, paths quoted."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from planb.local.gke_emulator.emulator import RunningEmulator
from planb.paths import REPO
from tests.support.integration.gke.modules import CLUSTER, LOCATION, ModuleRunner, ansible_playbook, load_module
from tests.support.integration.gke.refusals import assert_plain_refusal

#: A project id that, pasted into a path unquoted, would address cluster `prod` of project `other`.
EVIL_PROJECT = "other/locations/x/clusters/prod?x="
DOC = "https://cloud.google.com/resource-manager/docs/creating-managing-projects"


def _create_cluster(emulator: RunningEmulator, project: str, location: str, name: str) -> None:
    body = json.dumps({"cluster": {"name": name, "initialClusterVersion": "1.34"}}).encode()
    url = f"{emulator.url}/v1/projects/{project}/locations/{location}/clusters"
    with urllib.request.urlopen(
        urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json"}), timeout=10
    ):
        pass


def _clusters(emulator: RunningEmulator) -> list[str]:
    emulator.engine.advance()
    return sorted(emulator.store.clusters)


@pytest.mark.parametrize(
    "project",
    [EVIL_PROJECT, "Planb-Test", "short", "a" * 31, "ends-with-hyphen-", "1starts-with-digit", "123456789012"],
)
@pytest.mark.parametrize("module", ["gke_cluster", "gke_node_pool", "gke_cluster_info", "gke_node_pool_info"])
def test_a_project_that_is_no_gcp_project_id_is_refused_before_any_call(
    modules: ModuleRunner, emulator: RunningEmulator, module: str, project: str
) -> None:
    args: dict[str, Any] = {"project": project, "state": "absent"} if "info" not in module else {"project": project}
    if module != "gke_node_pool_info":
        args["name"] = "dws-pool" if module == "gke_node_pool" else CLUSTER
    if "node_pool" in module:
        args["cluster"] = CLUSTER
    failed = modules.fail(module, args)
    assert f"project {project!r}" in failed["msg"] and DOC in failed["msg"], failed["msg"]
    assert emulator.store.request_log() == []


def test_every_path_segment_is_quoted(emulator: RunningEmulator) -> None:
    # Even past validation (a caller of module_utils), a project with '/' or '?' stays one path segment.
    client_module = load_module("gke_cluster")  # makes ansible_collections.planb.gke importable
    assert client_module
    from ansible_collections.planb.gke.plugins.module_utils.client import GkeClient, api_path
    from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError

    _create_cluster(emulator, "other", "x", "prod")
    assert _clusters(emulator) == ["projects/other/locations/x/clusters/prod"]
    params = {"api_endpoint": emulator.url, "auth_kind": "none", "timeout": 5, "poll_interval": 0.05}
    client = GkeClient(params)
    path = api_path("projects", EVIL_PROJECT, "locations", LOCATION, "clusters", CLUSTER)
    assert "?" not in path and path.count("/") == 5
    with pytest.raises(GkeError, match="404"):
        client.request("DELETE", path)
    assert _clusters(emulator) == ["projects/other/locations/x/clusters/prod"]
    assert [r["method"] for r in emulator.writes()] == ["POST", "DELETE"]
    # A path that was not built from quoted segments is refused, not sent.
    with pytest.raises(GkeError, match="not a GKE API path"):
        client.request("DELETE", f"projects/{EVIL_PROJECT}/locations/{LOCATION}/clusters/{CLUSTER}")
    assert len(emulator.writes()) == 2


def _teardown(emulator: RunningEmulator, tmp_path: Path, *extra: str, **env: str) -> tuple[int, str]:
    full_env = {"GKE_API_ENDPOINT": emulator.url, "PLANB_STATE_DIR": str(tmp_path / "state"), **env}
    done = ansible_playbook("playbooks/teardown.yml", "-i", "inventories/local", *extra, env=full_env)
    return done.returncode, done.stdout + done.stderr


def test_teardown_confirms_project_location_and_name(emulator: RunningEmulator, tmp_path: Path) -> None:
    for project in ("planb-local", "other-project"):
        _create_cluster(emulator, project, LOCATION, CLUSTER)
    before = _clusters(emulator)
    writes = len(emulator.writes())
    target = f"planb-local/{LOCATION}/{CLUSTER}"
    for confirm in (CLUSTER, f"other-project/{LOCATION}/{CLUSTER}", f"planb-local/us-east5-a/{CLUSTER}"):
        rc, out = _teardown(emulator, tmp_path, "-e", f"planb_teardown_confirm={confirm}")
        assert rc != 0 and f"-e planb_teardown_confirm={target}" in out, out[-3000:]
        assert len(emulator.writes()) == writes and _clusters(emulator) == before
    rc, out = _teardown(emulator, tmp_path, "-e", f"planb_teardown_confirm={target}")
    assert rc == 0, out[-3000:]
    assert _clusters(emulator) == [f"projects/other-project/locations/{LOCATION}/clusters/{CLUSTER}"]


def _bare_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TMPDIR")}
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {**keep, "HOME": str(home), "ANSIBLE_LOCAL_TEMP": str(tmp_path / "ansible-tmp"), **extra}


@pytest.mark.parametrize("playbook", ["playbooks/teardown.yml", "playbooks/cluster.yml"])
@pytest.mark.parametrize(
    ("env", "missing"),
    [
        ({"GCP_PROJECT": "other-project", "ZONE": "us-east5-b"}, "PROJECT_ID"),
        ({"PROJECT_ID": "", "GCP_PROJECT": "other-project", "ZONE": "us-east5-b"}, "PROJECT_ID"),
        ({"PROJECT_ID": "my-project"}, "ZONE"),
    ],
    ids=["PROJECT_ID unset, GCP_PROJECT set", "PROJECT_ID empty", "ZONE unset"],
)
def test_gke_inventory_needs_project_id_and_zone(
    tmp_path: Path, playbook: str, env: dict[str, str], missing: str
) -> None:
    # No fallback to another variable or a default: the fix is named instead.
    confirm = "planb_teardown_confirm=other-project/us-east5-b/tpu-cluster"
    full_env = {
        **_bare_env(tmp_path, GCP_AUTH_KIND="accesstoken", GCP_ACCESS_TOKEN="t", **env),
        "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"),
        "ANSIBLE_NOCOLOR": "1",
    }
    command = [str(Path(sys.executable).parent / "ansible-playbook"), playbook, "-i", "inventories/gke", "-e", confirm]
    done = subprocess.run(command, cwd=REPO, env=full_env, capture_output=True, text=True, timeout=120)
    out = done.stdout + done.stderr
    assert done.returncode != 0
    assert_plain_refusal(out, f"inventories/gke needs {missing}", f"export {missing}=")
    assert "Delete plan B" not in out and "Create the cluster" not in out


def test_a_regions_teardown_deletes_every_confirmed_cluster_or_none(emulator: RunningEmulator, tmp_path: Path) -> None:
    """inventories/gke-regions: the manager and each region are hosts; all are confirmed in one list, or none goes."""
    clusters = {
        "manager": ("europe-west4-a", "planb-manager"),
        "us-east5": ("us-east5-b", "tpu-us-east5"),
        "asia-northeast1": ("asia-northeast1-b", "tpu-asia-northeast1"),
    }
    for zone, name in clusters.values():
        _create_cluster(emulator, "planb-local", zone, name)
    _create_cluster(emulator, "planb-local", LOCATION, CLUSTER)  # not the inventory's: never touched
    before = _clusters(emulator)
    targets = [f"planb-local/{zone}/{name}" for zone, name in clusters.values()]
    env = {
        **_bare_env(tmp_path, PROJECT_ID="planb-local", ZONE="us-east5-b", GKE_API_ENDPOINT=emulator.url),
        "GCP_AUTH_KIND": "none",
        "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"),
        "ANSIBLE_NOCOLOR": "1",
    }

    def teardown(confirm: str) -> tuple[int, str]:
        # The emulator finishes a deletion in moments: the inventory's Google pace (a poll every 10 s) would only wait.
        command = [str(Path(sys.executable).parent / "ansible-playbook"), "playbooks/teardown.yml",
                   "-i", "inventories/gke-regions", "-e", f"planb_teardown_confirm={confirm}",
                   "-e", "planb_gke_poll_interval=0.2"]  # fmt: skip
        done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
        return done.returncode, done.stdout + done.stderr

    writes = len(emulator.writes())
    # Only the manager confirmed: the two regions refuse, and so nothing is deleted, the manager neither.
    rc, out = teardown(targets[0])
    assert rc != 0 and f"-e planb_teardown_confirm={','.join(sorted(targets))}" in _sorted_confirm(out), out[-3000:]
    assert len(emulator.writes()) == writes and _clusters(emulator) == before
    rc, out = teardown(",".join(targets))
    assert rc == 0, out[-3000:]
    assert _clusters(emulator) == [f"projects/planb-local/locations/{LOCATION}/clusters/{CLUSTER}"]


def _sorted_confirm(out: str) -> str:
    """`out` with each suggested confirmation list's targets sorted (the play names them in the inventory's order)."""
    return re.sub(
        r"-e planb_teardown_confirm=(\S+)",
        lambda m: "-e planb_teardown_confirm=" + ",".join(sorted(m[1].split(","))),
        out,
    )


def _planb_state(emulator: RunningEmulator) -> dict[str, list[str]]:
    """Every resource of the emulator's state a converge can make: clusters, pools, routers, buckets."""
    emulator.engine.advance()
    data = emulator.store.data
    return {
        "clusters": sorted(data["clusters"]),
        "nodePools": sorted(data["nodePools"]),
        "routers": sorted(data["projectApis"].get("setup", {}).get("routers", {})),
        "buckets": sorted(data["buckets"]),
    }


def test_teardown_leaves_nothing_of_planbs_and_deletes_the_bucket_only_when_asked(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    """The cluster play with a bucket it creates and Cloud NAT, then teardown with the same inventory: the cluster,
    its pools and the router go, the bucket stays; asked, the bucket goes; a re-run writes nothing."""
    bucket = "planb-local-teardown-checkpoints"
    made_by_planb = ("-e", f"planb_checkpoint_bucket=gs://{bucket}", "-e", "planb_cloud_nat_create=true")
    env = {"GKE_API_ENDPOINT": emulator.url, "PLANB_STATE_DIR": str(tmp_path / "state")}
    done = ansible_playbook(
        "playbooks/cluster.yml", "-i", "inventories/local", *made_by_planb, "-e", "planb_checkpoint_bucket_create=true",
        env=env,
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    before = _planb_state(emulator)
    router = "planb-local/us-east5/planb-nat-router"
    assert before["clusters"] and before["nodePools"] and before["routers"] == [router], before
    assert before["buckets"] == [bucket], before
    confirm = ("-e", f"planb_teardown_confirm=planb-local/{LOCATION}/{CLUSTER}")
    rc, out = _teardown(emulator, tmp_path, *confirm, *made_by_planb)
    assert rc == 0, out[-3000:]
    assert _planb_state(emulator) == {"clusters": [], "nodePools": [], "routers": [], "buckets": [bucket]}, out[-3000:]
    deletes = [r["path"] for r in emulator.writes() if r["method"] == "DELETE"]
    assert f"/compute/v1/projects/{router.replace('/us-east5/', '/regions/us-east5/routers/')}" in deletes, deletes
    rc, out = _teardown(emulator, tmp_path, *confirm, *made_by_planb, "-e", "planb_teardown_bucket=true")
    assert rc == 0, out[-3000:]
    assert _planb_state(emulator) == {"clusters": [], "nodePools": [], "routers": [], "buckets": []}, out[-3000:]
    writes = len(emulator.writes())
    rc, out = _teardown(emulator, tmp_path, *confirm, *made_by_planb, "-e", "planb_teardown_bucket=true")
    assert rc == 0 and re.search(r"localhost\s*: ok=\d+\s+changed=0 ", out), out[-3000:]
    assert len(emulator.writes()) == writes
