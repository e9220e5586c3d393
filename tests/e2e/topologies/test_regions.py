"""Issue 38's failure paths on one multi-region topology (tests/support/regions_topology.py): the e2e stack as the
MultiKueue manager, us-east5 and europe-west4 as regions, each on the real Kueue v0.19.2 with a DWS-only ladder.

Each test sets the regions' DWS switches, installs job-1 on the manager with the unchanged chart
(planb.local.regions_race.race), checks where it runs and what `planb status` on the manager says, then uninstalls
it there, which must leave no Workload, RayJob or ProvisioningRequest of it in any region (the "deleted on the
manager" path; docs/regions.md, section 4). Not here yet: a worker that becomes unreachable (the quarantine it needs
is not built; docs/regions.md, "What runs today").
"""

from __future__ import annotations

import pytest

from planb import paths
from planb.local.regions import Member
from planb.local.regions_race import FAILS, GONE_WITHIN, NEVER, Race, race, uninstall

pytestmark = [pytest.mark.slow]

#: The granting region's DWS delay: long enough that a failing region's request has failed before it grants.
GRANT_AFTER = 6.0


def race_to(granting: Member, other: Member, other_switches: tuple[str, ...], regions: list[Member]) -> Race:
    """One race in which `granting` grants after GRANT_AFTER and `other` has `other_switches`; the job must run in
    `granting` (the manager's Workload names it and the manager's RayJob reports Running)."""
    switches = {other.name: other_switches, granting.name: ("--delay", str(GRANT_AFTER))}
    out = race(paths.local_kubeconfig(), regions, switches, 90)
    assert out.winner == granting.name, f"the manager's Workload names {out.winner or 'no region'}: {out}"
    assert out.running_after is not None, f"the RayJob on the manager never reported Running: {out}"
    return out


def test_the_job_runs_in_the_region_that_grants_and_the_other_regions_copy_goes(regions: list[Member]) -> None:
    stocked_out, granting = regions
    out = race_to(granting, stocked_out, NEVER, regions)
    assert out.gone_after is not None, f"{stocked_out.name}'s copy or request was still there {GONE_WITHIN} s on"
    assert "waiting for resources" in out.last_word.get(stocked_out.name, "").lower(), out.last_word
    assert out.status_line.startswith(f"runs in {granting.name} "), out.status_line
    assert f"{stocked_out.name} lost" in out.status_line, out.status_line
    uninstall(paths.local_kubeconfig(), regions)


def test_every_region_stocked_out_the_job_waits_and_status_says_so_per_region(regions: list[Member]) -> None:
    out = race(paths.local_kubeconfig(), regions, {m.name: NEVER for m in regions}, GRANT_AFTER + 4)
    assert (out.winner, out.running_after) == ("", None), f"the job ran although no region granted: {out}"
    assert out.status_line.startswith("waits in every region: "), out.status_line
    for region in regions:
        assert f"{region.name} waiting" in out.status_line, out.status_line
    uninstall(paths.local_kubeconfig(), regions)


def test_a_request_failing_after_dispatch_leaves_the_job_to_the_region_that_grants(regions: list[Member]) -> None:
    failing, granting = regions
    out = race_to(granting, failing, FAILS, regions)
    # Kueue's provisioning check retries the failed request (its copy keeps racing, it is not held there).
    assert out.last_word.get(failing.name, "").startswith("Retrying after failure: "), out.last_word
    uninstall(paths.local_kubeconfig(), regions)
