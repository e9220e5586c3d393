"""`PLANB_DEMO_SCENARIO=regions make demo`: a job goes to the region whose DWS request GKE grants (issue 38).

1. `planb local up --regions 3`: the MultiKueue manager and three regions (us-east5, europe-west4, asia-northeast1),
   each a local stack of its own (planb.local.regions);
2. each region converged by site.yml with a capacity-backed ladder, DWS alone (docs/regions.md, option C:
   a dispatched copy is admitted only once its ProvisioningRequest is provisioned), the three side by side;
3. playbooks/regions.yml connects the manager's Kueue to the three (roles/multikueue);
4. each run: two regions stocked out (their DWS requests wait for resources), the third grants after
   ``--grant-delay`` seconds; the regions' order is shuffled every run, and so is which one grants. job-1 is
   installed on the manager with the unchanged chart. The run passes if the manager's Workload names the granting
   region, the job runs within ``--grant-delay`` + 60 s of its submission, and the losing regions hold no copy
   and no ProvisioningRequest of it within 30 s after the win, and `planb status` on the manager names the
   winner and the regions that lost;
5. two of issue 38's failure paths: every region stocked out (the job runs nowhere, and `planb status` says each
   region waits), and one region's request failing after dispatch while another grants (the job runs there).
   After every run the job is uninstalled on the manager, and no Workload, RayJob or ProvisioningRequest of it
   may be left in any region.

Each losing region's last word (its copy's DWS check message) is printed: why it lost. The stacks are left up
(`planb local down --regions` stops them). Exits 0 only if every run and both failure paths passed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from planb import paths
from planb.kube import Kube, KubeError
from planb.local import regions
from planb.local.regions import Member

JOB = "job-1"
CHART = paths.REPO / "charts" / "planb"
#: Each region's ladder: DWS alone, the capacity-backed rung a dispatched copy may take (docs/regions.md, option C).
DWS_ONLY = {"planb_plans": [{"name": "dws", "kind": "dws", "slices": 1, "nodepool": "dws-pool"}]}
#: A DWS request in a stocked-out region waits for resources for longer than any run.
STOCKED_OUT = 100000.0
WORKLOADS = "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads"
REQUESTS = "/apis/autoscaling.x-k8s.io/v1/namespaces/default/provisioningrequests"
RAYJOB = f"/apis/ray.io/v1/namespaces/default/rayjobs/{JOB}"


def say(msg: str) -> None:
    print(f"[planb demo regions] {msg}", flush=True)


def run(command: list[str], member: Member | None = None, log: Path | None = None) -> None:
    env = {**os.environ, **(member.env() if member else {})}
    done = subprocess.run(command, env=env, cwd=paths.REPO, capture_output=True, text=True, check=False)
    if log:
        log.write_text(done.stdout + done.stderr)
    if done.returncode != 0:
        raise SystemExit(
            f"{' '.join(command[:3])} ... failed ({member.name if member else 'here'}):\n"
            f"{(done.stdout + done.stderr)[-3000:]}"
        )


def converge(member: Member) -> float:
    start = time.monotonic()
    log = member.state / "site.log"
    run([str(paths.REPO / ".venv/bin/ansible-playbook"), "site.yml", "-e", json.dumps(DWS_ONLY)], member, log)
    return time.monotonic() - start


def kubeconfig(member: Member) -> Path:
    """The region's cluster kubeconfig site.yml wrote (local mode: planb_state_dir/gke/<cluster>.kubeconfig)."""
    return member.state / "gke" / "tpu-cluster.kubeconfig"


def copies(kube: Kube) -> list[dict]:
    return [w for w in kube.items(WORKLOADS) if w["metadata"]["name"].startswith(f"rayjob-{JOB}-")]


def one_run(number: int, manager: Member, workers: list[Member], grant_delay: float, rng: random.Random) -> bool:
    """Two regions stocked out, one granting after `grant_delay`; the regions' order and the granting one shuffled."""
    order = workers[:]
    rng.shuffle(order)
    granting = rng.choice(order)
    say(
        f"run {number}: regions in order {', '.join(m.name for m in order)}; only {granting.name} grants, "
        f"after {grant_delay:.0f} s"
    )
    switches = {m.name: ["--delay", str(grant_delay if m is granting else STOCKED_OUT)] for m in order}
    return race(manager, order, switches, granting, grant_delay)


def failure_paths(manager: Member, workers: list[Member], grant_delay: float) -> int:
    """Issue 38's failure paths that need no more than Kueue and these switches; how many passed (of two)."""
    first, second, third = workers
    say("failure path: every region stocked out - the job waits, and planb status says so for each region")
    stocked_out = race(manager, workers, {m.name: ["--delay", str(STOCKED_OUT)] for m in workers}, None, grant_delay)
    say(
        f"failure path: {first.name}'s request fails (GKE: QueuingInfeasibleNoCapacity), {second.name} stocked out, "
        f"{third.name} grants after {grant_delay:.0f} s - the job runs in {third.name} (unlike kueue#8143)"
    )
    switches = {
        first.name: ["--fail"],
        second.name: ["--delay", str(STOCKED_OUT)],
        third.name: ["--delay", str(grant_delay)],
    }
    failed = race(manager, workers, switches, third, grant_delay)
    return int(stocked_out) + int(failed)


def race(
    manager: Member, workers: list[Member], switches: dict[str, list[str]], granting: Member | None, grant_delay: float
) -> bool:
    """Set each region's DWS switches, install the job on the manager, and check where it runs (`granting`; None:
    nowhere, and planb status says each region waits); then uninstall it and check that nothing of it is left."""
    for member in workers:
        run(
            [
                sys.executable,
                "-m",
                "planb.cli",
                "capacity",
                "set",
                "--pool",
                "dws-pool",
                "--clear",
                *switches[member.name],
            ],
            member,
        )
    boss = Kube(manager.kubeconfig)
    kubes = {m.name: Kube(kubeconfig(m)) for m in workers}
    helm = [str(paths.tool("helm")), "--kubeconfig", str(manager.kubeconfig)]
    submitted = time.monotonic()
    run([*helm, "install", JOB, str(CHART)])
    last_word: dict[str, str] = {}
    winner, running_after, won_at, told = "", None, None, False
    deadline = submitted + (grant_delay + 60 if granting else grant_delay + 5)
    while time.monotonic() < deadline and running_after is None:
        for name, kube in kubes.items():
            for copy in copies(kube):
                for check in copy.get("status", {}).get("admissionChecks", []):
                    last_word[name] = check.get("message", "")
        for workload in copies(boss):
            winner = workload.get("status", {}).get("clusterName", "") or winner
        if winner and won_at is None:
            won_at = time.monotonic()
        if not told and (winner or time.monotonic() > submitted + grant_delay / 2):
            say(f"  while they race, planb status on the manager says: {region_line(manager)}")
            told = True
        job = boss.get(RAYJOB) or {}
        if job.get("status", {}).get("jobDeploymentStatus") == "Running":
            running_after = time.monotonic() - submitted
        time.sleep(0.2)
    gone_after = None
    if won_at is not None:
        while time.monotonic() < won_at + 30:
            left = [n for n, k in kubes.items() if n != winner and (copies(k) or _requests(k))]
            if not left:
                gone_after = time.monotonic() - won_at
                break
            time.sleep(0.2)
    for member in workers:
        if member.name != winner:
            say(f"  {member.name} {'lost' if winner else 'waits'}: {last_word.get(member.name) or 'no copy seen'}")
    status_line = region_line(manager)
    say(f"  planb status on the manager: {status_line}")
    if granting is None:
        ok = not winner and status_line.startswith("waits in every region: ")
        ok = ok and all(f"{m.name} waiting" in status_line for m in workers)
        waited = time.monotonic() - submitted
        say(f"  -> ran nowhere, waits in every region for {waited:.0f} s: {'PASS' if ok else 'FAIL'}")
    else:
        ok = winner == granting.name and running_after is not None and gone_after is not None
        # The REGION line names the winner and every region that lost.
        ok = ok and status_line.startswith(f"runs in {granting.name} ") and all(m.name in status_line for m in workers)
        ran = "not running" if running_after is None else f"running {running_after:.1f} s after submission"
        gone = "NOT within 30 s" if gone_after is None else f"after {gone_after:.1f} s"
        say(
            f"  -> ran in {winner or 'no region'}; {ran} (grant delay {grant_delay:.0f} s); losing copies and "
            f"requests gone {gone}: {'PASS' if ok else 'FAIL'}"
        )
    run([*helm, "uninstall", JOB, "--wait"])
    _wait_clean(boss, kubes)
    return ok


def region_line(manager: Member) -> str:
    """`planb status`'s REGION line for the job, as a developer on the manager sees it."""
    done = subprocess.run(
        [sys.executable, "-m", "planb.cli", "status"],
        env={**os.environ, "KUBECONFIG": str(manager.kubeconfig)},
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith(f"REGION default/{JOB}:")]
    return lines[0].split(": ", 1)[1] if lines else f"(no REGION line; planb status said: {done.stdout[-300:]!r})"


def _requests(kube: Kube) -> list[dict]:
    try:
        return [r for r in kube.items(REQUESTS) if f"-{JOB}-" in r["metadata"]["name"]]
    except KubeError:
        return []


def _wait_clean(boss: Kube, kubes: dict[str, Kube]) -> None:
    """Deleted on the manager, the job leaves no Workload, RayJob or ProvisioningRequest in any region."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if not copies(boss) and not any(copies(k) or _requests(k) or k.get(RAYJOB) for k in kubes.values()):
            return
        time.sleep(0.2)
    raise SystemExit(f"{JOB} left Workloads, RayJobs or ProvisioningRequests behind 60 s after its uninstall")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=int(os.environ.get("PLANB_DEMO_REGIONS_RUNS", "1")))
    parser.add_argument("--grant-delay", type=float, default=8.0, help="seconds the granting region's DWS takes")
    parser.add_argument("--seed", type=int, default=None, help="the shuffle's seed (default: a new one each time)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    regions.down()
    manager, *workers = regions.up(len(regions.REGIONS))
    say("converging the three regions side by side (site.yml, DWS alone) ...")
    with ThreadPoolExecutor(len(workers)) as pool:
        for member, seconds in zip(workers, pool.map(converge, workers), strict=True):
            say(f"  {member.name} converged in {seconds:.1f} s")
    variables = {
        "planb_manager_kubeconfig": str(manager.kubeconfig),
        "planb_regions": [{"name": m.name, "kubeconfig": str(kubeconfig(m))} for m in workers],
    }
    say("connecting the manager's Kueue to the regions (playbooks/regions.yml) ...")
    run([str(paths.REPO / ".venv/bin/ansible-playbook"), "playbooks/regions.yml", "-e", json.dumps(variables)])
    passed = sum(one_run(n, manager, workers, args.grant_delay, rng) for n in range(1, args.runs + 1))
    paths_passed = failure_paths(manager, workers, args.grant_delay)
    say(
        f"{passed} of {args.runs} run(s) landed in the granting region in time; {paths_passed} of 2 failure paths "
        f"passed. The stacks stay up: planb local down --regions stops them."
    )
    return 0 if passed == args.runs and paths_passed == 2 else 1


if __name__ == "__main__":
    sys.exit(main())
