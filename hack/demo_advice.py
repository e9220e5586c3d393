"""`PLANB_DEMO_SCENARIO=advice make demo`: advice-ordered dispatch across three regions.

1. `planb local up --regions 3`: the MultiKueue manager and three regions (us-east5, europe-west4, asia-northeast1),
   each a local stack of its own (planb.local.regions);
2. `ansible-playbook site.yml -i inventories/regions -e planb_multikueue_dispatcher=planb.dev/advice-ordered`: the
   regions' clusters with a DWS-only ladder, then the manager, whose Kueue dispatches by planb's name (Kueue's
   External dispatcher: it nominates nothing itself; docs/regions.md, "Advice-ordered dispatch in a cluster");
3. `planb regions keep --dispatch --advice-url <the manager's GKE emulator> --project planb-local` beside the manager;
4. the emulator's advice is told what each region granted before (planb's own model of grants and stockouts): the
   high-score region granted six times, the other two stocked out. The regions' DWS switches: the high-score region
   grants after ``--grant-delay`` seconds; the low-score one grants only late (``--late-delay``), a grant today's race
   would still pay for with a ProvisioningRequest there; the third never grants;
5. job-1 is installed on the manager with the unchanged chart. The demo passes if the keeper nominated the high-score
   region alone, the job runs there, exactly one ProvisioningRequest was made in all the regions together, and
   `planb status --capacity` on the manager shows the scores the keeper used (Google's advice per region, the
   high-score region offered first).

The stacks it started are stopped at the end (`planb local down --regions`), passed or not. Exits 0 only if all of
step 5 held.
"""

from __future__ import annotations

import argparse
import sys
import time

from planb.local import regions
from planb.local.gke_emulator.address import DEFAULT_PORT
from planb.local.regions import Member
from planb.local.regions_race import (
    NEVER,
    PROJECT,
    SHAPE,
    Race,
    advise,
    capacity_status,
    converge,
    keep,
    race,
    uninstall,
)
from planb.regions.dispatch import DISPATCHER

#: The regions' parts: the high-score region that grants, the low-score one that would grant late, the third that
#: never grants.
HIGH, LATE, NEVER_GRANTS = "europe-west4", "us-east5", "asia-northeast1"


def say(msg: str) -> None:
    print(f"[planb demo advice] {msg}", flush=True)


def verdict(out: Race, capacity: str) -> list[str]:
    """What went wrong, one line each; none when the job went as advice-ordered dispatch should send it."""
    wrong = []
    if out.nominations != [[HIGH]]:
        wrong.append(f"the keeper nominated {out.nominations or 'nothing'}, not {HIGH} alone")
    if out.winner != HIGH or out.running_after is None:
        state = "not running" if out.running_after is None else "running"
        wrong.append(f"the job is {state}, admitted in {out.winner or 'no region'}, not running in {HIGH}")
    if out.requests_made != 1:
        wrong.append(f"{out.requests_made} ProvisioningRequests were made, not 1: {out.asked}")
    pair = f"{HIGH}/dws/{SHAPE}: obtainability"
    if pair not in capacity or "offered first" not in capacity or "Google's advice" not in capacity:
        wrong.append(f"planb status --capacity does not show {HIGH}'s advice offered first")
    return wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grant-delay", type=float, default=8.0, help="seconds the high-score region's DWS takes")
    parser.add_argument("--late-delay", type=float, default=40.0, help="seconds the low-score region's DWS takes")
    args = parser.parse_args()
    begun = time.monotonic()
    regions.down()
    manager, *workers = regions.up(len(regions.REGIONS))
    keeper = None
    try:
        log = manager.state / "site.log"
        say(f"ansible-playbook site.yml -i inventories/regions -e planb_multikueue_dispatcher={DISPATCHER} ({log})")
        extra = ("-e", f"planb_multikueue_dispatcher={DISPATCHER}")
        say(f"  converged in {converge(workers, log=log, extra=extra):.1f} s")
        emulator = f"http://127.0.0.1:{DEFAULT_PORT + manager.offset}"
        keeper_log = manager.state / "keeper.log"
        say(f"planb regions keep --dispatch --advice-url {emulator} --project {PROJECT} ({keeper_log})")
        keeper = keep(manager.kubeconfig, keeper_log, "--dispatch", "--advice-url", emulator, "--project", PROJECT)
        for region, outcome, count in ((HIGH, "GRANT", 6), (LATE, "STOCKOUT", 3), (NEVER_GRANTS, "STOCKOUT", 1)):
            advise(emulator, region, outcome, count)
        say(f"the advice was told: {HIGH} granted 6 times, {LATE} stocked out 3 times, {NEVER_GRANTS} once")
        switches = _switches(workers, args.grant_delay, args.late_delay)
        say(
            f"DWS: {HIGH} grants after {args.grant_delay:.0f} s, {LATE} only after {args.late_delay:.0f} s (in a race "
            f"it too would get a ProvisioningRequest and a late grant), {NEVER_GRANTS} never; helm install job-1"
        )
        out = race(manager.kubeconfig, workers, switches, args.grant_delay + 60, lambda msg: say(f"  {msg}"))
        capacity = capacity_status(manager.kubeconfig)
        ran = "not running" if out.running_after is None else f"running {out.running_after:.1f} s after submission"
        say(f"  nominations seen, in turn: {out.nominations}")
        say(f"  ran in {out.winner or 'no region'}, {ran}")
        say(f"  ProvisioningRequests: {', '.join(f'{r} {len(n)}' for r, n in sorted(out.asked.items()))}")
        say(f"  planb status on the manager: {out.status_line}")
        say("planb status --capacity on the manager:")
        print(capacity, flush=True)
        keeper.terminate()
        keeper.wait(10)
        said = keeper_log.read_text(errors="replace").strip().splitlines()
        say("the keeper said:\n" + "\n".join(f"  {line}" for line in said))
        uninstall(manager.kubeconfig, workers)
        wrong = verdict(out, capacity)
        for line in wrong:
            say(f"FAIL: {line}")
        passed = not wrong
        say(
            f"{'PASS' if passed else 'FAIL'}: job-1 {'went' if passed else 'did not go'} to {HIGH} (the high-score "
            f"region) with one ProvisioningRequest; {time.monotonic() - begun:.0f} s in all"
        )
        return 0 if passed else 1
    finally:
        if keeper is not None and keeper.poll() is None:
            keeper.terminate()
            keeper.wait(10)
        regions.down()


def _switches(workers: list[Member], grant_delay: float, late_delay: float) -> dict[str, tuple[str, ...]]:
    delays = {HIGH: ("--delay", str(grant_delay)), LATE: ("--delay", str(late_delay))}
    return {m.name: delays.get(m.name, NEVER) for m in workers}


if __name__ == "__main__":
    sys.exit(main())
