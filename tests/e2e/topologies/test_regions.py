"""The regions' failure paths on one multi-region topology (tests/support/e2e/regions_topology.py): the e2e stack as the
MultiKueue manager, us-east5 and europe-west4 as regions, each on the real Kueue v0.19.2 with a DWS-only ladder.

Each test sets the regions' DWS switches, installs job-1 on the manager with the unchanged chart
(planb.local.regions_race.race), checks where it runs and what `planb status` on the manager says, then uninstalls
it there, which must leave no Workload, RayJob or ProvisioningRequest of it in any region (the "deleted on the
manager" path; docs/regions.md, section 4). The last test loses a region while its job runs there: planb's regions
keeper (`planb regions keep`, started by the topology) quarantines it, the job moves, and the region comes back clean.
The class after it runs the keeper as Kueue's External dispatcher (advice-ordered dispatch, `planb regions keep
--dispatch`; docs/regions.md, "Advice-ordered dispatch in a cluster") for the regions' TPU job, which Google gives no
advice for and the keeper asks none: with nothing known both regions are offered; then the region the ledger scores
best alone is nominated and the job lands there with one request; then its stocking out widens the offer at once and
the job runs in the other.

Holds one thing: the regions' paths on that one stateful topology, in the order the tests build on (the dispatch class
needs us-east5 to grant, and the last test leaves the failing region's DWS pool in GKE's backoff); pytest orders by
file, so a second file would run after the last test and find the region backing off.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
from functools import partial
from pathlib import Path

import pytest

from planb import paths
from planb.kube import Kube, KubeError
from planb.local import regions as local_regions
from planb.local.regions import Member
from planb.local.regions_race import (
    FAILS,
    GONE_WITHIN,
    JOB,
    NEVER,
    RAYJOB,
    SHAPE,
    Race,
    capacity_status,
    copies,
    race,
    set_dws,
    uninstall,
    worker_kubeconfig,
)
from planb.regions.keeper.options import RELEASE_AFTER_S
from tests.support.e2e import regions_keeper
from tests.support.e2e.regions_dispatch import NOT_ASKED, asked_since, log_mark, pair_line, reset_backoff, said_since
from tests.support.e2e.regions_topology import keeper_log, restart_keeper, stop_keeper

pytestmark = [pytest.mark.slow]

KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
#: The granting region's DWS delay: long enough that a failing region's request has failed before it grants.
GRANT_AFTER = 6.0
#: The same where no region fails: long enough that the stocked-out region's request says it waits before the win.
GRANT_SOON = 3.0
#: How long a job no region grants is watched: its copies' requests say they wait well within it.
WAIT_WATCH = 7.0


#: The lost-region test's job: pods with a short grace period (the chart's default: the profile's for the workers, 75 s
#: here, and Kubernetes' 30 s for the head).
SHORT_GRACE = ("job.workers.terminationGracePeriodSeconds=5", "job.head.terminationGracePeriodSeconds=5")


def race_to(
    granting: Member,
    other: Member,
    other_switches: tuple[str, ...],
    regions: list[Member],
    after: float = GRANT_AFTER,
    values: tuple[str, ...] = (),
) -> Race:
    """One race in which `granting` grants after `after` seconds and `other` has `other_switches`, the job installed
    with `values`; it must run in `granting` (the manager's Workload names it and the manager's RayJob reports
    Running)."""
    switches = {other.name: other_switches, granting.name: ("--delay", str(after))}
    out = race(paths.local_kubeconfig(), regions, switches, 90, values=values)
    assert out.winner == granting.name, f"the manager's Workload names {out.winner or 'no region'}: {out}"
    assert out.running_after is not None, f"the RayJob on the manager never reported Running: {out}"
    return out


def test_the_managers_cluster_queue_admits_only_its_local_queue_namespace(regions: list[Member]) -> None:
    """docs/security.md: the manager's ClusterQueue admits only the LocalQueue's namespace, the one namespace where
    the region token may write; an empty selector would admit a LocalQueue of any namespace."""
    queue = Kube(paths.local_kubeconfig()).get(f"{KUEUE}/clusterqueues/cluster-queue")
    assert queue["spec"]["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "default"}}, queue


def test_the_keepers_deployment_runs_planb_regions_keep_with_the_rights_it_uses_and_no_more(
    regions: list[Member], tmp_path: Path
) -> None:
    """roles/regions_keeper (docs/regions.md, "The keeper on the manager"): the converge left a Deployment of one
    replica that never runs two keepers (Recreate), under the chart's pod security, running `planb regions keep` with
    the playbook's config and origin. kwok runs no container, so its command and arguments run here, once, with a
    token of its ServiceAccount: a quarantine list naming a region still in the MultiKueueConfig makes that look read
    every object a tick reads and write the keeper's ConfigMap; a right it lacks is an error said, and the list stays.
    The rights a quiet manager's tick does not reach are asked of the API server's authorizer, and so are a few it
    must not have."""
    admin = Kube(paths.local_kubeconfig())
    deploy = regions_keeper.deployment(admin)
    spec, pod = deploy["spec"], deploy["spec"]["template"]["spec"]
    assert (spec["replicas"], spec["strategy"]) == (1, {"type": "Recreate"}), spec
    keeper = regions_keeper.container(deploy)
    assert pod["securityContext"]["runAsNonRoot"] is True, pod["securityContext"]
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}, pod["securityContext"]
    assert keeper["securityContext"]["readOnlyRootFilesystem"] is True, keeper["securityContext"]
    assert keeper["securityContext"]["capabilities"] == {"drop": ["ALL"]}, keeper["securityContext"]
    assert keeper["resources"]["limits"]["memory"], keeper["resources"]
    # No kubeconfig from a ConfigMap: one names a command to run and the server the token goes to, so
    # whoever may write ConfigMaps in Kueue's namespace would run code as the keeper; the pod's own ServiceAccount.
    assert "--in-cluster" in keeper["args"] and not any(a.startswith("--kubeconfig") for a in keeper["args"]), keeper
    assert not [v for v in pod.get("volumes") or [] if "configMap" in v or "secret" in v], pod.get("volumes")
    assert admin.get("/api/v1/namespaces/kueue-system/configmaps/planb-regions-keeper-kubeconfig") is None
    state_path = "/api/v1/namespaces/kueue-system/configmaps/planb-regions-keeper"
    origin = admin.get(state_path)["data"]["origin"]
    assert f"--origin={origin}" in keeper["args"] and "--config=planb-regions" in keeper["args"], keeper["args"]

    kubeconfig = regions_keeper.service_account_kubeconfig(paths.local_kubeconfig(), deploy, tmp_path)
    listed = admin.get(f"{KUEUE}/multikueueconfigs/planb-regions")["spec"]["clusters"]
    stop_keeper()  # the topology's own keeper would clear the list first
    try:
        admin.merge_patch(state_path, {"data": {"quarantined": json.dumps(listed[:1])}})
        done = regions_keeper.run_once(deploy, kubeconfig)
        said = done.stdout + done.stderr
        assert done.returncode == 0, said
        assert "did not answer" not in said and "forbidden" not in said.lower(), said
        assert "quarantined" not in (admin.get(state_path)["data"]), f"the list was not cleared:\n{said}"
    finally:
        admin.merge_patch(state_path, {"data": {"quarantined": None}})
        restart_keeper()

    may = partial(regions_keeper.allowed, kubeconfig)
    for region in listed:
        assert may("get", "secrets", "kueue-system", f"{region}-multikueue"), region
        assert may("get", "multikueueclusters", name=region, group="kueue.x-k8s.io"), region
    assert may("patch", "multikueueconfigs", name="planb-regions", group="kueue.x-k8s.io")
    assert may("get", "rayjobs", "default", "job-1", "ray.io") and may(
        "patch", "rayjobs/status", "default", "job-1", "ray.io"
    )
    # And no more: no other Secret, no delete, no other config, no job write but the release's.
    assert not may("get", "secrets", "kueue-system", "kueue-webhook-server-cert")
    assert not may("list", "secrets", "kueue-system")
    assert not may("patch", "multikueueconfigs", name="another", group="kueue.x-k8s.io")
    assert not may("delete", "workloads", "default", group="kueue.x-k8s.io")
    assert not may("patch", "rayjobs", "default", "job-1", "ray.io")
    assert not may("patch", "configmaps", "kueue-system", "planb-regions-ledger")  # --dispatch's, off here

    # The role again with the same settings changes nothing.
    out = regions_keeper.rerun_role(paths.local_kubeconfig(), deploy, tmp_path)
    assert re.search(r"localhost\s+: ok=\d+\s+changed=0 ", out), out[-3000:]
    # Checked only, with --diff: turned off, the Deployment and the token renewal's CronJob would go and the
    # ServiceAccounts and their rights stay; with planb's dispatcher, --dispatch's rights would be added. Nothing
    # changes.
    changes = ("--check", "--diff", "-e", "regions_keeper_deploy=false", "-e", "regions_keeper_dispatch=true")
    out = regions_keeper.rerun_role(paths.local_kubeconfig(), deploy, tmp_path, *changes)
    assert regions_keeper.changed_tasks(out) == [
        "Create the keeper's ServiceAccount, its ClusterRole, Roles and bindings on the manager",
        "Run planb regions keep as a Deployment on the manager",
        "Renew the regions' tokens on the manager as a CronJob",
    ], out[-3000:]
    rbac = out[out.index("TASK [planb.gke.regions_keeper : Create the keeper's ServiceAccount") :]
    assert re.search(r"^\+\s+- planb-regions-ledger$", rbac, re.M), rbac[:4000]
    assert regions_keeper.deployment(admin)["metadata"]["uid"] == deploy["metadata"]["uid"]  # check mode: still there
    assert not may("patch", "configmaps", "kueue-system", "planb-regions-ledger")


def test_every_region_stocked_out_the_job_waits_and_status_says_so_per_region(regions: list[Member]) -> None:
    out = race(paths.local_kubeconfig(), regions, {m.name: NEVER for m in regions}, WAIT_WATCH)
    assert (out.winner, out.running_after) == ("", None), f"the job ran although no region granted: {out}"
    assert out.status_line.startswith("waits in every region: "), out.status_line
    for region in regions:
        assert f"{region.name} waiting" in out.status_line, out.status_line
    uninstall(paths.local_kubeconfig(), regions)


def _until(what: str, check, within: float) -> float:
    """Seconds until check() is true; fails naming `what` after `within` seconds."""
    start = time.monotonic()
    while time.monotonic() < start + within:
        if check():
            return time.monotonic() - start
        time.sleep(0.5)
    raise AssertionError(f"{what}: not within {within:.0f} s; the keeper said:\n{keeper_log().read_text()[-2000:]}")


def test_the_granting_region_wins_and_when_it_is_lost_the_job_moves_holds_no_quota_and_the_region_returns_clean(
    regions: list[Member],
) -> None:
    """Region B stocked out, region A granting: the job runs in A, B's copy and request go, `planb status` on the
    manager names A and why B lost. Then A's API server is killed (the local "unreachable": Kueue, KubeRay and the
    nodes there keep running). planb's regions keeper quarantines A (Kueue's own workerLostTimeout is 15 min) and A is
    brought back at once. Kueue evicts the job on the manager, where its RayJob, suspended, still reads Running and so
    keeps the quota (kueue#15380) until the keeper releases it. B then grants: the job runs there, the manager's
    ClusterQueue holds quota for that one Workload, and A rejoins the config only once the keeper has deleted its stale
    copy and RayJob. (One test, so the race that puts the job in A is run once.)"""
    # A is the region the failing-request test below has grant: a region whose API server was restarted may take its
    # time over its next request, and that test needs the failing region's request failed within GRANT_AFTER.
    other, lost = regions
    # The job's pods get a 5 s grace period, so the keeper, at --release-margin 2, waits 7 s to release and to let the
    # region back, not the chart's default job's 105 s.
    out = race_to(lost, other, NEVER, regions, GRANT_SOON, values=SHORT_GRACE)
    assert out.gone_after is not None, f"{other.name}'s copy or request was still there {GONE_WITHIN} s on"
    assert "waiting for resources" in out.last_word.get(other.name, "").lower(), out.last_word
    assert out.status_line.startswith(f"runs in {lost.name} on rung dws "), out.status_line
    assert f"{other.name} lost" in out.status_line, out.status_line

    boss = Kube(paths.local_kubeconfig())
    pid_file = lost.state / "local" / "kwok" / "clusters" / "planb" / "pids" / "kube-apiserver.pid"
    os.kill(int(pid_file.read_text().split()[0]), signal.SIGKILL)
    killed = time.monotonic()

    def listed() -> bool:
        config = boss.get(f"{KUEUE}/multikueueconfigs/planb-regions") or {}
        return lost.name in (config.get("spec") or {}).get("clusters", [])

    _until(f"{lost.name} quarantined", lambda: not listed(), 60)
    assert f"quarantining {lost.name}: Kueue has not reached it" in keeper_log().read_text()
    local_regions.start([lost])  # `planb local up` there restarts its API server
    set_dws(lost, NEVER)  # when it rejoins, its fresh copy must not win: the job is to run in the other region

    released = f"released the quota of default/{JOB}: its Workload was evicted"
    # The keeper waits the job's pods' largest grace period plus its margin (planb.regions.keeper.grace), 7 s here:
    # at most RELEASE_AFTER_S for the chart's catalog profiles.
    within = 60 + RELEASE_AFTER_S
    _until(
        "the keeper releasing the quota the evicted RayJob holds", lambda: released in keeper_log().read_text(), within
    )
    set_dws(other, ("--delay", "1"))

    def moved() -> bool:
        workload = next(iter(copies(boss)), {})
        job = boss.get(RAYJOB) or {}
        return (workload.get("status") or {}).get("clusterName") == other.name and (
            (job.get("status") or {}).get("jobDeploymentStatus") == "Running" and not job["spec"].get("suspend")
        )

    _until(f"the job running in {other.name}", moved, 120)
    print(f"\n[e2e] {JOB} ran in {other.name} {time.monotonic() - killed:.1f} s after {lost.name} was lost")
    # No quota is left held: the manager's ClusterQueue reserves for one Workload, the one admitted in the other region.
    usage = boss.get(f"{KUEUE}/clusterqueues/cluster-queue")["status"]
    assert (usage.get("reservingWorkloads"), usage.get("admittedWorkloads")) == (1, 1), usage

    stale = Kube(worker_kubeconfig(lost))

    def back_clean() -> bool:
        try:
            clean = not copies(stale) and stale.get(RAYJOB) is None
        except KubeError:  # not answering yet
            return False
        return clean and listed()

    _until(
        f"{lost.name} back in the MultiKueueConfig with nothing of {JOB} left there", back_clean, 90 + RELEASE_AFTER_S
    )
    print(f"[e2e] {lost.name} back, clean, {time.monotonic() - killed:.1f} s after it was lost")
    said = keeper_log().read_text()
    assert f"{lost.name}: deleted the stale workload default/rayjob-{JOB}-" in said, said
    assert f"{lost.name} back in the MultiKueueConfig planb-regions: nothing stale left" in said, said
    home = next(iter(copies(boss)), {})
    assert (home.get("status") or {}).get("clusterName") == other.name, f"the job left {other.name}: {home}"
    uninstall(paths.local_kubeconfig(), regions)


@pytest.mark.usefixtures("dispatching")
class TestAdviceOrderedDispatch:
    """Advice-ordered dispatch of the regions' TPU job (tpu-v6e-4x4, DWS alone in each region: the only shape and rung
    this topology runs). Google gives no TPU availability in advice.capacity ("When you send a request to the
    advice.capacity API, you can't view the availability of TPUs",
    https://cloud.google.com/compute/docs/instances/view-vm-availability, "Limitations"), so the keeper asks none
    (the emulator's request log shows no advice.capacity request) and orders the job by its reservation reads and its
    ledger; no region here has a reservation rung, so by the ledger alone. The tests run in order and build on it:
    with nothing known both regions are offered and the ledger records us-east5's grant; then us-east5, best by the
    ledger, is nominated alone and the job lands there with one request; then us-east5 stocks out and the offer
    widens at once to europe-west4. Google's advice ordering the pairs (a GPU shape: an A3, which Google does advise)
    is not run here, as no region of this topology runs a GPU shape: tests/unit/regions/test_dispatcher.py (the
    dispatcher, the best-advised region first, a stockout widening at once) and
    tests/integration/regions/test_advice_failure_paths.py (the emulator's real answers) hold it."""

    def test_with_nothing_known_both_regions_are_offered_without_advice_and_the_ledger_records_the_grant(
        self, regions: list[Member]
    ) -> None:
        """A fresh ledger scores both pairs alike (its neutral prior, 0.5), and one alone is not even odds of a
        grant within its bound (offer_order rule 4), so both are nominated at once; not AllAtOnce by failure
        (rule 6: no advice by design is no failed call), and no advice.capacity request is sent."""
        best, other = regions
        mark = log_mark()
        switches = {best.name: ("--delay", str(GRANT_SOON)), other.name: NEVER}
        out = race(paths.local_kubeconfig(), regions, switches, 90)
        said = said_since(mark)
        assert [sorted(n) for n in out.nominations] == [sorted([best.name, other.name])], f"{out}\n{said}"
        assert (out.winner, out.running_after is not None) == (best.name, True), out
        assert (len(out.asked[best.name]), len(out.asked[other.name])) == (1, 1), out.asked
        capacity = capacity_status(paths.local_kubeconfig())
        assert "advice-ordered" in capacity and "AllAtOnce" not in capacity, capacity
        assert "advice not asked: advice.capacity gives no TPU availability" in capacity, capacity
        for member in regions:
            line = pair_line(capacity, member)
            assert line.startswith(f"{member.name}/dws/{SHAPE}: {NOT_ASKED}; ledger 0.0 granted, 0.0 missed -> p 0.50")
            assert line.endswith("offered first"), line
        assert f"granted in {best.name}/dws/{SHAPE} after" in said and "2 request(s) asked" in said, said
        assert asked_since(mark) == [], "the keeper asked advice.capacity about a TPU shape"
        uninstall(paths.local_kubeconfig(), regions)

    def test_the_region_the_ledger_scores_best_alone_is_nominated_and_the_job_lands_there_with_one_request(
        self, regions: list[Member]
    ) -> None:
        """us-east5 granted the last job: its ledger state is a grant (p 0.99), europe-west4's withdrawn ask says
        nothing (p 0.50), so us-east5 alone is offered first and europe-west4 only after its bound."""
        best, other = regions
        mark = log_mark()
        switches = {best.name: ("--delay", str(GRANT_SOON)), other.name: NEVER}
        out = race(paths.local_kubeconfig(), regions, switches, 90)
        assert out.nominations == [[best.name]], f"the keeper's nominations: {out}\n{said_since(mark)}"
        assert (out.winner, out.running_after is not None) == (best.name, True), out
        assert (out.requests_made, out.asked[other.name]) == (1, set()), out.asked
        capacity = capacity_status(paths.local_kubeconfig())
        first, later = pair_line(capacity, best), pair_line(capacity, other)
        assert first.startswith(f"{best.name}/dws/{SHAPE}: {NOT_ASKED}; ledger 1.0 granted, 0.0 missed"), first
        assert first.endswith("offered first"), first
        assert later.startswith(f"{other.name}/dws/{SHAPE}: {NOT_ASKED}; ledger 0.0 granted, 0.0 missed -> p 0.50")
        assert later.endswith("without a grant"), later
        said = said_since(mark)
        assert f"granted in {best.name}/dws/{SHAPE} after" in said and "1 request(s) asked" in said, said
        assert asked_since(mark) == [], "the keeper asked advice.capacity about a TPU shape"
        uninstall(paths.local_kubeconfig(), regions)

    def test_the_best_region_stocking_out_widens_the_offer_at_once_and_the_job_runs_in_the_other(
        self, regions: list[Member]
    ) -> None:
        """us-east5, best by the ledger, is nominated alone; its request fails (GKE's QueuingInfeasibleNoCapacity):
        the keeper drops it and nominates the other region at once, not at the bound (120 s at least). The failing
        pool's backoff is cut to 1 s here and put back after, so the last test's failure in the same region is a
        failure again, not a wait in backoff."""
        best, other = regions
        mark = log_mark()
        switches = {best.name: (*FAILS, "--node-group-backoff", "1"), other.name: ("--delay", str(GRANT_AFTER))}
        try:
            out = race(paths.local_kubeconfig(), regions, switches, 90)
        finally:
            reset_backoff(best)
        said = said_since(mark)
        assert out.nominations == [[best.name], [other.name]], f"the keeper's nominations: {out}\n{said}"
        assert (out.winner, out.running_after is not None) == (other.name, True), out
        assert (len(out.asked[best.name]), len(out.asked[other.name])) == (1, 1), out.asked
        assert f"{best.name}/dws/{SHAPE} failed" in said and "the offer moves on" in said, said
        took = out.running_after or 0.0
        assert took < 60, f"the offer did not widen at once: running after {took:.1f} s"
        ledger = capacity_status(paths.local_kubeconfig())
        assert any(line.split()[:2] == [best.name, "dws"] and line.split()[5] == "1" for line in ledger.splitlines())
        uninstall(paths.local_kubeconfig(), regions)


# Last: the failed request leaves the failing region's DWS pool in GKE's backoff after a failed scale-up (the capacity
# simulator models it), so no test after it may need that region to grant.
def test_a_request_failing_after_dispatch_leaves_the_job_to_the_region_that_grants(regions: list[Member]) -> None:
    failing, granting = regions
    out = race_to(granting, failing, FAILS, regions)
    # Kueue's provisioning check retries the failed request (its copy keeps racing, it is not held there).
    assert out.last_word.get(failing.name, "").startswith("Retrying after failure: "), out.last_word
    uninstall(paths.local_kubeconfig(), regions)
