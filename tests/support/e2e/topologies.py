"""End-to-end fixtures: the local stack after `ansible-playbook site.yml`, and Helm against it."""

from __future__ import annotations

import atexit
import json
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from ansible_collections.planb.gke.plugins.filter.ladder import surplus_pools

from planb import paths
from planb.kube import METADATA_LIST, Kube
from planb.local.capacity import settings as capacity_settings
from planb.local.gke_emulator.conformance import state_dir_violations
from planb.local.gke_emulator.store import list_node_pools
from planb.local.rayhead import settings as rayhead_settings
from planb.local.stack.stack import LocalStack
from planb.status.report import KUEUE, PROVREQ, RAY
from tests.support.e2e.outside import OutsideController
from tests.support.e2e.waits import wait_until

Run = Callable[..., subprocess.CompletedProcess[str]]
PROFILE = "tpu-v6e-4x4"


def run(
    *argv: str, check: bool = True, timeout: float = 600, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        list(argv), capture_output=True, text=True, timeout=timeout, check=False, cwd=paths.REPO, env=env
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
        )
    return proc


def ansible_playbook(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run(str(Path(sys.executable).parent / "ansible-playbook"), *args, check=check)


#: The capacity simulator's settings every e2e test starts from: DWS delivers in 2 s, idle nodes go after 5 s.
TEST_CAPACITY = capacity_settings.Settings(provisioning_delay_seconds=2.0, scale_down_after_seconds=5.0)
#: The four-rung ladder: a reservation the emulator holds, on-demand, DWS, Spot; one slice each.
RESERVATION = "planb-e2e-reservation"
FOUR = [
    {"name": "reserved", "kind": "reservation", "slices": 1, "nodepool": "reserved-pool", "reservation": RESERVATION},
    {"name": "on-demand", "kind": "on-demand", "slices": 1, "nodepool": "on-demand-pool"},
    {"name": "dws", "kind": "dws", "slices": 1, "nodepool": "dws-pool"},
    {"name": "spot", "kind": "spot", "slices": 1, "nodepool": "spot-pool"},
]
#: Plan A's time to make a job's pods ready (Kueue's waitForPodsReady timeout): the local inventory's default
#: planb_failover_after_minutes (0.25), on in every topology but the concurrent one (FAILOVER_OFF).
FAILOVER_AFTER_SECONDS = 15
#: The topologies whose inventory turns failover off (the concurrent ladder mode's default is 0; the regions'
#: inventories set 0: the manager's Kueue only dispatches, and a region's jobs are the manager's copies,
#: inventories/regions/group_vars).
FAILOVER_OFF = frozenset({"concurrent", "regions"})
#: Two slices per plan: on-demand-pool(-2) and dws-pool(-2).
TWO_SLICES = ("-e", "planb_ondemand_slices=2", "-e", "planb_dws_slices=2")
WORKLOADS = f"{KUEUE}/namespaces/default/workloads"
RAYJOBS = f"{RAY}/namespaces/default/rayjobs"
REQUESTS = f"{PROVREQ}/namespaces/default/provisioningrequests"
RAYCLUSTERS = f"{RAY}/namespaces/default/rayclusters"
PODS = "/api/v1/namespaces/default/pods"


#: The local inventory's cluster, as planb_scale_down_confirm names it.
CLUSTER_PATH = "planb-local/us-east5-b/tpu-cluster"
#: Each topology's plans as (nodepool, slices), in ladder order: what its pools are named from.
PLAN_POOLS: dict[str, list[tuple[str, int]]] = {
    "site": [("on-demand-pool", 1), ("dws-pool", 1)],
    "two_slices": [("on-demand-pool", 2), ("dws-pool", 2)],
    "ladder": [(str(plan["nodepool"]), 1) for plan in FOUR],
    "concurrent": [(str(plan["nodepool"]), 1) for plan in FOUR],
}


def scale_down_confirmation(topology: str) -> str:
    """The planb_scale_down_confirm a converge to `topology` needs on the pools the emulator holds now ('' for
    none): the play's own rule (the collection's planb.gke.surplus_pools filter) on the topology's pool names."""
    ladder = [
        {"nodepool": pool, "pools": [{"name": pool if i == 1 else f"{pool}-{i}"} for i in range(1, slices + 1)]}
        for pool, slices in PLAN_POOLS[topology]
    ]
    surplus = surplus_pools(list_node_pools(paths.state_dir(), "tpu-cluster"), ladder)
    return f"{CLUSTER_PATH}/{','.join(surplus)}" if surplus else ""


def converge_site(topology: str, *extra: str, playbook: Run = ansible_playbook) -> subprocess.CompletedProcess[str]:
    """site.yml for `topology`, confirming the scale-down of pools the topology no longer has (the suite's own
    topologies are the only pools on the local project). The confirmation is worked out beforehand; should the
    play still refuse, it is run again with the confirmation the play names. `playbook` runs ansible-playbook: the
    checkout's, or an ops controller's outside it (`outside_controller`)."""
    confirm = scale_down_confirmation(topology)
    done = playbook("site.yml", *extra, *(("-e", f"planb_scale_down_confirm={confirm}") if confirm else ()),
                    check=False)  # fmt: skip
    if done.returncode != 0:
        named = re.search(r"-e (planb_scale_down_confirm=\S+)", done.stdout)
        if not named:
            raise AssertionError(f"site.yml {' '.join(extra)} failed:\n{done.stdout[-4000:]}\n{done.stderr[-2000:]}")
        done = playbook("site.yml", *extra, "-e", named.group(1))
    return done


_OUTSIDE: list[OutsideController] = []
_OUTSIDE_LOCK = threading.Lock()


def outside_controller() -> OutsideController:
    """The session's ops controller outside the checkout (the collection's tarball, an inventory, site.yml), made
    once; a call while `prepare_outside_controller`'s thread makes it waits for that one."""
    with _OUTSIDE_LOCK:
        if not _OUTSIDE:
            controller = OutsideController()
            atexit.register(controller.remove)
            _OUTSIDE.append(controller)
        return _OUTSIDE[0]


def prepare_outside_controller() -> None:
    """Make the outside controller in a thread (about 7 s: the tarball's build and install) while the tests before
    the `site` converge run, so that converge does not wait for it. Should it fail there, the converge's own call
    makes it again and fails with the reason."""
    threading.Thread(target=outside_controller, name="outside-controller", daemon=True).start()


def _converge_seed(current: str | None) -> None:
    # The seed's topology is converged the way an operator with only the collection's tarball does it.
    converge_site("site", playbook=outside_controller().ansible_playbook)


def _converge_two_slices(current: str | None) -> None:
    converge_site("two_slices", *TWO_SLICES)


def _converge_ladder(current: str | None) -> None:
    # The reservation Google makes for the profile's one slice: aggregate (TPU chips, BATCH for a multi-host
    # slice) for a TPU profile, specific (VMs of its machine type) for a GPU one.
    made = run(
        str(Path(sys.executable).parent / "planb"), "local", "gke-emulator", "reservation", "create", RESERVATION,
        "--for-profile", PROFILE, "--slices", "1", "--zone", "us-east5-b",
        check=False,
    )  # fmt: skip
    if made.returncode != 0 and "already exists" not in made.stdout + made.stderr:
        raise AssertionError(f"the ladder's reservation could not be made: {made.stdout}{made.stderr}")
    converge_site("ladder", "-e", json.dumps({"planb_plans": FOUR}))
    # Google's contract: every cluster, node pool, operation and reservation the converge left validates against
    # the discovery documents (what `planb local gke-emulator validate` checks).
    violations = state_dir_violations()
    assert violations == [], "\n".join(violations)


def delete_cluster_queue(check: bool = False) -> None:
    run(shutil.which("kubectl") or "kubectl", f"--kubeconfig={paths.local_kubeconfig()}", "delete", "clusterqueue",
        "cluster-queue", "--ignore-not-found", "--wait=true", check=check)  # fmt: skip


def _converge_concurrent(current: str | None) -> None:
    # Kueue refuses to change an existing ClusterQueue's concurrentAdmissionPolicy (clusterqueue_webhook.go
    # ValidateClusterQueueUpdate), and the role refuses a mode change: the queue goes first, the converge makes
    # it anew (also a concurrent queue a stack reused from an earlier session may hold).
    delete_cluster_queue()
    if current != "ladder":
        _converge_ladder(current)  # the four rungs' pools and reservation
        delete_cluster_queue()
    # The ladder's pools are there: only Kueue (its ConcurrentAdmission gate) and the queues change, which is
    # what the operator's kueue playbook does.
    ansible_playbook("playbooks/kueue.yml", "-e", json.dumps({"planb_plans": FOUR, "planb_ladder_mode": "concurrent"}))


CONVERGES: dict[str, Callable[[str | None], None]] = {
    "site": _converge_seed,
    "two_slices": _converge_two_slices,
    "ladder": _converge_ladder,
    "concurrent": _converge_concurrent,
}


class Topologies:
    """One converge per inventory topology per test session, and a reset of seconds between tests.

    The stack tests are ordered by topology (tests/conftest.py, TOPOLOGY_ORDER), so each topology's converge
    runs once. The stack the topology was converged on is recognised by its kubeconfig: a test that takes the
    stack down (they run last) or a restart from nothing makes the next topology converge again.
    """

    def __init__(self, stack: LocalStack) -> None:
        self.stack = stack
        self.current: str | None = None
        self.stamp: tuple[int, int] | None = None
        self.queues_revision = 0

    def _stack_stamp(self) -> tuple[int, int]:
        st = self.stack.kubeconfig.stat()
        return (st.st_ino, st.st_mtime_ns)

    def ensure(self, name: str) -> Path:
        self.stack.up()
        if self.current is not None and self.stamp != self._stack_stamp():
            self.current = None  # a new stack since the last converge
        if self.current != name:
            self.reset()  # a converge may delete pools: no job is left on them
            print(f"\n[e2e] converging topology {name} (from {self.current or 'an unconverged stack'}) ...")
            CONVERGES[name](self.current)
            # The host failover controller runs exactly while the inventory switches failover on: by default.
            running = self.stack.failover.pid() is not None
            assert running == (name not in FAILOVER_OFF), f"failover controller running={running} after {name}"
            self.current, self.stamp = name, self._stack_stamp()
            self.queues_revision = self._release_revisions().get("planb-queues", 0)
        self.reset()
        return self.stack.kubeconfig

    # ------------------------------------------------------------------------------------------------ reset
    def helm(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return run(str(paths.tool("helm")), f"--kubeconfig={self.stack.kubeconfig}", *args, check=check)

    def _release_revisions(self) -> dict[str, int]:
        """Each Helm release in `default` and its newest revision from the labels of Helm's release Secrets (owner,
        name, version; helm pkg/storage/driver/secrets.go) in one list: no helm list or helm history process."""
        found = Kube(self.stack.kubeconfig).request(
            "GET", "/api/v1/namespaces/default/secrets", query={"labelSelector": "owner=helm"}, accept=METADATA_LIST
        )
        revisions: dict[str, int] = {}
        for item in found.get("items") or []:  # a metadata list of nothing has "items": null
            labels = item["metadata"].get("labels") or {}
            if labels.get("status") != "uninstalled":
                revisions[labels["name"]] = max(revisions.get(labels["name"], 0), int(labels.get("version", "0")))
        return revisions

    def restore_queues(self) -> None:
        """The queues release back at the converge's revision (test_teams.py calls it before removing its teams'
        namespaces). Its kept objects (helm.sh/resource-policy: keep) an upgrade left out fail Helm 3's first
        rollback, "no ServiceAccount with the name "planb-job" found" (helm/helm#13142, fixed in Helm 4 by
        helm/helm#31412); the failed attempt's revision holds them, so the second succeeds (docs/upgrading.md)."""
        rollback = ("rollback", "planb-queues", str(self.queues_revision))
        if (first := self.helm(*rollback, check=False)).returncode != 0:
            assert "with the name" in first.stderr, first.stderr
            self.helm(*rollback)
        self.queues_revision = self._release_revisions().get("planb-queues", 0)

    def reset(self) -> None:
        """What a test may have changed, back as the converge left it: job releases uninstalled (one call), no
        Workload, RayJob, RayCluster, ProvisioningRequest, job pod or plan node left, the capacity simulator's and
        the Ray head stand-in's settings back, the failover controller restarted (fresh metrics, no test
        switches), and the queues release rolled back to the converge's revision without a playbook.

        `helm uninstall --wait` polls every 2 s, so the wait is ours (0.2 s). A job pod whose node the simulator
        has deleted (a DWS request's nodes go with it) stays Terminating: the pod garbage collector takes it only
        after its 40 s quarantine, so the reset deletes it as that collector would (grace period 0)."""
        kube = Kube(self.stack.kubeconfig)
        rayhead_settings.settings_file().unlink(missing_ok=True)
        # Idle nodes go at once while resetting; TEST_CAPACITY's 5 s again once they are gone.
        capacity_settings.save(replace(TEST_CAPACITY, scale_down_after_seconds=0.0))
        revisions = self._release_revisions()
        releases = sorted(r for r in revisions if r.startswith("job-"))
        if releases:
            self.helm("uninstall", *releases, "-n", "default")
        if self.queues_revision and revisions.get("planb-queues", 0) != self.queues_revision:
            self.restore_queues()

        def left() -> dict[str, list[str]]:
            nodes = kube.items("/api/v1/nodes")
            names = {o["metadata"]["name"] for o in nodes}
            pods = [
                p
                for p in kube.items(PODS)
                if p["metadata"].get("labels", {}).get("app.kubernetes.io/instance", "").startswith("job-")
            ]
            for pod in pods:
                if pod["metadata"].get("deletionTimestamp") and pod["spec"].get("nodeName") not in names:
                    kube.delete(f"{PODS}/{pod['metadata']['name']}", {"gracePeriodSeconds": 0})
            found = {
                "workloads": [o["metadata"]["name"] for o in kube.items(WORKLOADS)],
                "rayjobs": [o["metadata"]["name"] for o in kube.items(RAYJOBS)],
                "rayclusters": [o["metadata"]["name"] for o in kube.items(RAYCLUSTERS)],
                "provisioningrequests": [o["metadata"]["name"] for o in kube.items(REQUESTS)],
                "job pods": [p["metadata"]["name"] for p in pods],
                "plan nodes": [
                    o["metadata"]["name"] for o in nodes if "planb.dev/plan" in o["metadata"].get("labels", {})
                ],
            }
            return {kind: names for kind, names in found.items() if names}

        wait_until(lambda: not left(), "the previous test's jobs, requests, pods and nodes to go", 90, explain=left)
        capacity_settings.save(TEST_CAPACITY)
        if self.current is not None and self.current not in FAILOVER_OFF:  # also after a test switched it off
            self.stack.failover.stop()
            assert self.stack.start_failover(), "the failover controller did not start"


@pytest.fixture(scope="session")
def topologies(_stack_session: LocalStack) -> Topologies:
    return Topologies(_stack_session)


@pytest.fixture()
def site(topologies: Topologies) -> Path:
    """The seed's cluster, pools, Kueue and queues (site.yml on the local inventory, so with stockout failover on
    after FAILOVER_AFTER_SECONDS), reset; the kubeconfig."""
    return topologies.ensure("site")


@pytest.fixture()
def two_slices(topologies: Topologies) -> Path:
    """Two slices per plan (planb_ondemand_slices=2, planb_dws_slices=2), reset."""
    return topologies.ensure("two_slices")


@pytest.fixture()
def ladder(topologies: Topologies) -> Path:
    """The four-rung ladder (FOUR), reset."""
    return topologies.ensure("ladder")


@pytest.fixture()
def concurrent(topologies: Topologies) -> Path:
    """The four-rung ladder in the concurrent mode (Kueue's ConcurrentAdmission), reset."""
    return topologies.ensure("concurrent")


@pytest.fixture()
def helm(topologies: Topologies) -> Run:
    """Helm against the local stack (the topology fixture the test uses resets the job releases before it)."""

    def helm_run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return topologies.helm(*args, check=check)

    return helm_run
