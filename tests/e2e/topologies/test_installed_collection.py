"""The seed's flow from the collection's tarball alone: what an ops controller outside the checkout runs.

The `site` topology was converged by `tests/e2e/outside.py`: the tarball `make collection` builds, installed into
an empty collections path, an inventory of its own and the collection README's one-line playbook. Here the same
controller runs it again: nothing changes, and no write reaches the GKE emulator.
"""

from __future__ import annotations

import re
from pathlib import Path

from planb.kube import Kube
from planb.local.gke_emulator.store import read_request_log
from tests.support.topologies import outside_controller


def test_the_tarballs_site_playbook_converged_the_seed_and_a_second_run_changes_nothing(site: Path) -> None:
    controller = outside_controller()
    assert not (controller.home / "collections" / "ansible_collections" / "planb" / "gke").is_symlink()
    kube = Kube(site)
    flavors = {item["metadata"]["name"] for item in kube.get("/apis/kueue.x-k8s.io/v1beta2/resourceflavors")["items"]}
    assert {"on-demand", "dws"} <= flavors
    writes = _writes()
    again = controller.ansible_playbook("site.yml")
    recap = re.search(r"localhost\s*:\s*ok=\d+\s+changed=(\d+)", again.stdout)
    assert recap and recap.group(1) == "0", again.stdout[-3000:]
    assert _writes() == writes, "the second run wrote to the GKE emulator"


def _writes() -> int:
    return len([entry for entry in read_request_log() if entry["method"] != "GET"])
