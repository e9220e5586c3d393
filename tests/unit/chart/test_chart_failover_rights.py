"""The failover controller's rights in the chart are the calls it makes, and its package needs no PyPI.

The controller moves a job against the in-memory API server of tests/support/shared/failover (the recorded calls of a
whole move, a list and a metrics scrape); every call must be granted by the chart's Role, so a verb left
out of the chart fails here. tests/e2e/topologies/test_failover_rights.py asks the real API server the same.
The package the ConfigMap carries is run from a folder laid out as the pod's volume, with Python's
site-packages off: only the standard library is there.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from planb.build import golden
from tests.support.shared.failover.kueue_steps import Kueue, make_cluster, start_controller, timeout, watch
from tests.support.shared.failover.objects import PLAN_A

Render = Callable[..., list[dict[str, Any]]]
ON = ("--set", "mode=queues", "--set", "failover.afterMinutes=10")
NAME = f"{golden.RELEASE}-failover"
#: FakeCluster.calls' plural -> (API group, resource) as RBAC names them.
RESOURCES = {
    "workloads": ("kueue.x-k8s.io", "workloads"),
    "rayjobs": ("ray.io", "rayjobs"),
    "events": ("", "events"),
    "resourceflavors": ("kueue.x-k8s.io", "resourceflavors"),
}


def granted(rules: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {(g, r, v) for rule in rules for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}


def test_every_call_of_a_move_is_granted_by_the_role_and_nothing_more(template: Render) -> None:
    objs = template(*ON)
    (role,) = [o for o in objs if o["kind"] == "Role" and o["metadata"]["name"] == NAME]
    (deployment,) = [o for o in objs if o["kind"] == "Deployment" and o["metadata"]["name"] == NAME]
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    label = next(a for a in args if a.startswith("--plan-a-label=")).split("=", 1)[1]
    key, value = label.split("=", 1)

    cluster = make_cluster()
    controller = start_controller(cluster, plan_a_label=(key, value), namespaces=(role["metadata"]["namespace"],))
    watch(controller, *timeout(Kueue(cluster), PLAN_A))
    controller.poll_once()  # a resync, which also lists what the metrics show
    calls = len(cluster.calls)
    scraped = controller.metrics()
    # Its polls never saw the job admitted (the steps went to reconcile alone): the move names no ClusterQueue.
    moves = 'planb_failover_moves_total{plan="on-demand",cluster_queue="",region=""} 1.0'
    assert moves in scraped, scraped
    assert "planb_failover_moved_jobs 1.0" in scraped, scraped
    assert len(cluster.calls) == calls, "a scrape must read the resync's cache, not the API server"
    made = {(*RESOURCES[plural], verb) for verb, plural, _ in cluster.calls}
    assert [w.plural for w in cluster.writes] == ["rayjobs", "workloads", "events"], "a whole move was made"
    assert made <= granted(role["rules"]), f"calls the chart does not grant: {sorted(made - granted(role['rules']))}"
    assert granted(role["rules"]) == made, f"rights no call needs: {sorted(granted(role['rules']) - made)}"


def test_the_package_runs_on_the_standard_library_alone(template: Render, tmp_path: Path) -> None:
    objs = template(*ON)
    (cm,) = [o for o in objs if o["kind"] == "ConfigMap" and o["metadata"]["name"] == NAME]
    (deployment,) = [o for o in objs if o["kind"] == "Deployment" and o["metadata"]["name"] == NAME]
    pod = deployment["spec"]["template"]["spec"]
    for item in pod["volumes"][0]["configMap"]["items"]:
        target = tmp_path / item["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(cm["data"][item["key"]])
    container = pod["containers"][0]
    # -S: no site-packages (no kubernetes client, no planb install); -E: no PYTHONPATH; -s: no user site.
    command = [sys.executable, "-S", "-E", "-s", *container["command"][1:], *container["args"], "--help"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "--cluster-queues" in done.stdout
    probe = "import sys, planb.failover.controller as c; print(sorted(m.split('.')[0] for m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-S", "-E", "-s", "-c", probe], cwd=tmp_path, capture_output=True,
                            text=True, timeout=60, check=True).stdout  # fmt: skip
    assert "kubernetes" not in loaded and "yaml" not in loaded and "urllib3" not in loaded
    assert str(tmp_path) in subprocess.run(
        [sys.executable, "-S", "-E", "-s", "-c", "import planb.failover.kubeapi as k; print(k.__file__)"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
