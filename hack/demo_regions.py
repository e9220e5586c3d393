"""`PLANB_DEMO_SCENARIO=regions make demo`: a job goes to the region whose DWS request GKE grants.

1. `planb local up --regions 3`: the MultiKueue manager and three regions (us-east5, europe-west4, asia-northeast1),
   each a local stack of its own (planb.local.regions);
2. `ansible-playbook site.yml -i inventories/regions`: each region's cluster with a capacity-backed ladder, DWS alone
   (docs/regions.md, option C: a dispatched copy is admitted only once its ProvisioningRequest is provisioned), the
   three side by side,
3. then, in the same run, the manager's cluster and Kueue, connected to the three (playbooks/regions.yml);
4. each run: two regions stocked out (their DWS requests wait for resources), the third grants after
   ``--grant-delay`` seconds; the regions' order is shuffled every run, and so is which one grants. job-1 is
   installed on the manager with the unchanged chart. The run passes if the manager's Workload names the granting
   region, the job runs within ``--grant-delay`` + 60 s of its submission, and the losing regions hold no copy
   and no ProvisioningRequest of it within 30 s after the win, and `planb status` on the manager names the
   winner and the regions that lost;
5. two of the regions' failure paths (docs/regions.md, "Failure paths"): every region stocked out (the job runs
   nowhere, and `planb status` says each region waits), and one region's request failing after dispatch while
   another grants (the job runs there).
   After every run the job is uninstalled on the manager, and no Workload, RayJob or ProvisioningRequest of it
   may be left in any region.

Each losing region's last word (its copy's DWS check message) is printed: why it lost. The stacks are left up
(`planb local down --regions` stops them). Exits 0 only if every run and both failure paths passed.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Mapping

from planb.local import regions
from planb.local.regions import Member
from planb.local.regions_race import FAILS, NEVER, Race, converge, race, uninstall


def say(msg: str) -> None:
    print(f"[planb demo regions] {msg}", flush=True)


def one_run(number: int, manager: Member, workers: list[Member], grant_delay: float, rng: random.Random) -> bool:
    """Two regions stocked out, one granting after `grant_delay`; the regions' order and the granting one shuffled."""
    order = workers[:]
    rng.shuffle(order)
    granting = rng.choice(order)
    say(
        f"run {number}: regions in order {', '.join(m.name for m in order)}; only {granting.name} grants, "
        f"after {grant_delay:.0f} s"
    )
    switches = {m.name: ("--delay", str(grant_delay)) if m is granting else NEVER for m in order}
    return checked(manager, order, switches, granting, grant_delay)


def failure_paths(manager: Member, workers: list[Member], grant_delay: float) -> int:
    """The regions' failure paths that need no more than Kueue and these switches; how many passed (of two)."""
    first, second, third = workers
    say("failure path: every region stocked out - the job waits, and planb status says so for each region")
    stocked_out = checked(manager, workers, {m.name: NEVER for m in workers}, None, grant_delay)
    say(
        f"failure path: {first.name}'s request fails (GKE: QueuingInfeasibleNoCapacity), {second.name} stocked out, "
        f"{third.name} grants after {grant_delay:.0f} s - the job runs in {third.name} (unlike kueue#8143)"
    )
    switches = {first.name: FAILS, second.name: NEVER, third.name: ("--delay", str(grant_delay))}
    failed = checked(manager, workers, switches, third, grant_delay)
    return int(stocked_out) + int(failed)


def checked(
    manager: Member,
    workers: list[Member],
    switches: Mapping[str, tuple[str, ...]],
    granting: Member | None,
    grant_delay: float,
) -> bool:
    """One race (planb.local.regions_race) and its verdict: the job runs in `granting` (None: nowhere, and planb status
    says each region waits); then its uninstall, which must leave nothing of it anywhere."""
    out: Race = race(
        manager.kubeconfig,
        workers,
        switches,
        grant_delay + 60 if granting else grant_delay + 5,
        lambda msg: say(f"  {msg}"),
    )
    for member in workers:
        if member.name != out.winner:
            said = out.last_word.get(member.name) or "no copy seen"
            say(f"  {member.name} {'lost' if out.winner else 'waits'}: {said}")
    say(f"  planb status on the manager: {out.status_line}")
    if granting is None:
        ok = not out.winner and out.status_line.startswith("waits in every region: ")
        ok = ok and all(f"{m.name} waiting" in out.status_line for m in workers)
        say(f"  -> ran nowhere, waits in every region: {'PASS' if ok else 'FAIL'}")
    else:
        ok = out.winner == granting.name and out.running_after is not None and out.gone_after is not None
        # The REGION line names the winner and every region that lost.
        ok = ok and out.status_line.startswith(f"runs in {granting.name} on rung dws ")
        ok = ok and all(m.name in out.status_line for m in workers)
        ran = "not running" if out.running_after is None else f"running {out.running_after:.1f} s after submission"
        gone = "NOT within 30 s" if out.gone_after is None else f"after {out.gone_after:.1f} s"
        say(
            f"  -> ran in {out.winner or 'no region'}; {ran} (grant delay {grant_delay:.0f} s); losing copies and "
            f"requests gone {gone}: {'PASS' if ok else 'FAIL'}"
        )
    uninstall(manager.kubeconfig, workers)
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=int(os.environ.get("PLANB_DEMO_REGIONS_RUNS", "1")))
    parser.add_argument("--grant-delay", type=float, default=8.0, help="seconds the granting region's DWS takes")
    parser.add_argument("--seed", type=int, default=None, help="the shuffle's seed (default: a new one each time)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    regions.down()
    manager, *workers = regions.up(len(regions.REGIONS))
    log = manager.state / "site.log"
    say(f"ansible-playbook site.yml -i inventories/regions: the three regions side by side, then the manager ({log})")
    say(f"  converged in {converge(workers, log=log):.1f} s")
    passed = sum(one_run(n, manager, workers, args.grant_delay, rng) for n in range(1, args.runs + 1))
    paths_passed = failure_paths(manager, workers, args.grant_delay)
    say(
        f"{passed} of {args.runs} run(s) landed in the granting region in time; {paths_passed} of 2 failure paths "
        f"passed. The stacks stay up: planb local down --regions stops them."
    )
    return 0 if passed == args.runs and paths_passed == 2 else 1


if __name__ == "__main__":
    sys.exit(main())
