"""`PLANB_DEMO_SCENARIO=advice make demo`: advice-ordered dispatch of a TPU job across three regions, with what Google
answers for TPUs: no advice, so planb's ledger orders the regions.

1. `planb local up --regions 3`: the MultiKueue manager and three regions (us-east5, europe-west4, asia-northeast1),
   each a local stack of its own (planb.local.regions);
2. `ansible-playbook site.yml -i inventories/regions -e planb_multikueue_dispatcher=planb.dev/advice-ordered`: the
   regions' clusters with a DWS-only ladder for tpu-v6e-4x4, then the manager, whose Kueue dispatches by planb's name
   (Kueue's External dispatcher: it nominates nothing itself; docs/regions.md, "Advice-ordered dispatch in a
   cluster");
3. `planb regions keep --dispatch --advice-url <the manager's GKE emulator> --project planb-local` beside the manager;
4. Google's answer for a TPU shape: the demo asks the manager's GKE emulator's advice.capacity about the job's shape
   itself. Google's page says "When you send a request to the advice.capacity API, you can't view the availability
   of TPUs" (https://cloud.google.com/compute/docs/instances/view-vm-availability, "Limitations"); the emulator
   answers no recommendation, and the keeper asks nothing for a TPU shape
   (planb.regions.dispatcher.google_advice.no_tpu_advice). The regions have no reservation rung, so the keeper's
   ledger alone orders them;
5. the regions' DWS switches, for both jobs: europe-west4 grants after ``--grant-delay`` seconds, us-east5 only after
   ``--late-delay`` (a grant AllAtOnce would still pay for with a ProvisioningRequest there), asia-northeast1
   never;
6. job-1 with the ledger empty: every region scores alike (the ledger's neutral prior), and one region alone is not
   even odds of a grant within its bound, so the keeper offers the first two of the MultiKueueConfig, us-east5 and
   europe-west4; europe-west4 grants first and the ledger records it, us-east5's request is withdrawn;
7. job-1 again (uninstalled, then installed: the chart's one job name), the ledger knowing europe-west4's grant.

The demo passes if the advice.capacity answer held no recommendation, the first job ran in europe-west4, the keeper
nominated europe-west4 alone for the second, which runs there with exactly one ProvisioningRequest in all the regions
together, `planb status --capacity` on the manager shows every pair ordered by planb's ledger with no advice asked
and europe-west4 offered first, and the emulator served no advice.capacity request but the demo's own. The stacks it
started are stopped at the end (`planb local down --regions`), passed or not.
"""

from __future__ import annotations

import argparse
import json
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
    advice_asked,
    ask_tpu_advice,
    capacity_status,
    converge,
    keep,
    race,
    uninstall,
)
from planb.regions.dispatcher.nomination import DISPATCHER

#: The regions' parts: the region that grants soon, the one that would grant late, the third that never grants.
SOON, LATE, NEVER_GRANTS = "europe-west4", "us-east5", "asia-northeast1"
#: What `planb status --capacity` says of a pair the keeper asked no advice for
#: (planb.regions.dispatcher.offer_order).
NOT_ASKED = "no advice by design (not asked), ledger alone"


def say(msg: str) -> None:
    print(f"[planb demo advice] {msg}", flush=True)


def verdict(answer: tuple[int, dict[str, object]], first: Race, second: Race, capacity: str, asked: int) -> list[str]:
    """What went wrong, one line each; none when the jobs went as advice-ordered dispatch should send a TPU job."""
    wrong = []
    status, body = answer
    if status != 200 or body.get("recommendations"):
        wrong.append(f"advice.capacity for {SHAPE} answered {status} {json.dumps(body)[:200]}, not 200 and nothing")
    if first.winner != SOON or first.running_after is None:
        wrong.append(f"the first job ran in {first.winner or 'no region'}, not in {SOON}: the ledger learnt no grant")
    if second.nominations != [[SOON]]:
        wrong.append(f"the keeper nominated {second.nominations or 'nothing'} for the second job, not {SOON} alone")
    if second.winner != SOON or second.running_after is None:
        state = "not running" if second.running_after is None else "running"
        wrong.append(f"the second job is {state}, admitted in {second.winner or 'no region'}, not running in {SOON}")
    if second.requests_made != 1:
        wrong.append(f"{second.requests_made} ProvisioningRequests were made for the second job, not 1: {second.asked}")
    pair = next(
        (line.strip() for line in capacity.splitlines() if line.strip().startswith(f"{SOON}/dws/{SHAPE}: ")), ""
    )
    if not pair.startswith(f"{SOON}/dws/{SHAPE}: {NOT_ASKED}") or not pair.endswith("offered first"):
        wrong.append(f"planb status --capacity does not show {SOON} ordered by the ledger, unasked, offered first")
    if asked:
        wrong.append(f"the keeper asked advice.capacity {asked} time(s) about a TPU shape")
    return wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grant-delay", type=float, default=8.0, help=f"seconds {SOON}'s DWS takes")
    parser.add_argument("--late-delay", type=float, default=40.0, help=f"seconds {LATE}'s DWS takes")
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
        answer = ask_tpu_advice(emulator, SOON)
        say(
            f"advice.capacity for {SHAPE} in {SOON} (FLEX_START), asked by the demo: "
            f"{answer[0]} {json.dumps(answer[1])}"
            ' (Google: "you can\'t view the availability of TPUs"; the keeper does not ask)'
        )
        before = len(advice_asked(emulator))
        keeper_log = manager.state / "keeper.log"
        say(f"planb regions keep --dispatch --advice-url {emulator} --project {PROJECT} ({keeper_log})")
        keeper = keep(manager.kubeconfig, keeper_log, "--dispatch", "--advice-url", emulator, "--project", PROJECT)
        switches = _switches(workers, args.grant_delay, args.late_delay)
        say(
            f"DWS: {SOON} grants after {args.grant_delay:.0f} s, {LATE} only after {args.late_delay:.0f} s (in a race "
            f"it too would get a ProvisioningRequest and a late grant), {NEVER_GRANTS} never"
        )
        say("helm install job-1, the ledger empty")
        first = race(manager.kubeconfig, workers, switches, args.grant_delay + 60, lambda msg: say(f"  {msg}"))
        _said(first)
        uninstall(manager.kubeconfig, workers)
        say("helm install job-1 again, the ledger holding the first job's asks")
        second = race(manager.kubeconfig, workers, switches, args.grant_delay + 60, lambda msg: say(f"  {msg}"))
        _said(second)
        capacity = capacity_status(manager.kubeconfig)
        say("planb status --capacity on the manager:")
        print(capacity, flush=True)
        asked = len(advice_asked(emulator)) - before
        say(f"advice.capacity requests the emulator served while the keeper ran: {asked}")
        keeper.terminate()
        keeper.wait(10)
        said = keeper_log.read_text(errors="replace").strip().splitlines()
        say("the keeper said:\n" + "\n".join(f"  {line}" for line in said))
        uninstall(manager.kubeconfig, workers)
        wrong = verdict(answer, first, second, capacity, asked)
        for line in wrong:
            say(f"FAIL: {line}")
        passed = not wrong
        say(
            f"{'PASS' if passed else 'FAIL'}: the second job {'went' if passed else 'did not go'} to {SOON} (the "
            f"region the ledger scores best) with one ProvisioningRequest and no advice asked; "
            f"{time.monotonic() - begun:.0f} s in all"
        )
        return 0 if passed else 1
    finally:
        if keeper is not None and keeper.poll() is None:
            keeper.terminate()
            keeper.wait(10)
        regions.down()


def _said(out: Race) -> None:
    ran = "not running" if out.running_after is None else f"running {out.running_after:.1f} s after submission"
    say(f"  nominations seen, in turn: {out.nominations}")
    say(f"  ran in {out.winner or 'no region'}, {ran}")
    say(f"  ProvisioningRequests: {', '.join(f'{r} {len(n)}' for r, n in sorted(out.asked.items()))}")
    say(f"  planb status on the manager: {out.status_line}")


def _switches(workers: list[Member], grant_delay: float, late_delay: float) -> dict[str, tuple[str, ...]]:
    delays = {SOON: ("--delay", str(grant_delay)), LATE: ("--delay", str(late_delay))}
    return {m.name: delays.get(m.name, NEVER) for m in workers}


if __name__ == "__main__":
    sys.exit(main())
