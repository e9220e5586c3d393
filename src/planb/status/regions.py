"""`planb status` on a MultiKueue manager: which region runs a job, how each region's copy stands, why the others lost.

A Workload Kueue's MultiKueue dispatches carries ``status.nominatedClusterNames`` while its copies race and
``status.clusterName`` once one copy is admitted (Kueue v0.19.2, apis/kueue/v1beta2/workload_types.go; the race:
docs/regions.md). Each region is a MultiKueueCluster whose Secret holds the kubeconfig the manager's Kueue uses;
planb reads each region's copy of the Workload with it (same namespace and name): its admission checks say how its
ladder stands (for a DWS rung, GKE's "Waiting for resources ..." until the request is provisioned).

Once one region is admitted, Kueue deletes the other copies in the same reconcile
(pkg/controller/admissionchecks/multikueue/workload.go, reconcileGroup); what they last said is gone with them, so
the losing regions are named with the only reason the race has: they had not granted when the winner did.
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field

from planb.kube import Obj
from planb.printable import printable
from planb.regions.keeper import leftovers, quarantine
from planb.regions.keeper.unreached import FIX, token_times
from planb.status import calendar
from planb.status.gather import DispatchReads, RegionRead, RegionToken

#: The resources a rung's flavor is chosen for (a job's workers); the head's cpu and memory sit on the CPU flavor.
ACCELERATORS = ("google.com/tpu", "nvidia.com/gpu")


@dataclass
class RegionCopy:
    """One region's copy of the Workload, as that region's API server reports it."""

    region: str
    #: "admitted", "waiting", "no copy", "unreadable: <why>", "lost" or "quarantined: <what it waits for>".
    state: str
    #: Its admission checks, "name=State: message", one per check.
    checks: list[str] = field(default_factory=list)
    #: The rung (Kueue flavor) of the region's ladder its quota is reserved on, "" before that.
    rung: str = ""


@dataclass
class Dispatch:
    """Where MultiKueue sent one job."""

    #: The region that won (its copy admitted first), "" while they race.
    winner: str
    regions: list[RegionCopy] = field(default_factory=list)
    #: While it waits: what calendar mode offers the job (a TPU job waiting past the keeper's bound), one line each,
    #: from the keeper's ConfigMap (planb.status.calendar); [] otherwise.
    calendar: list[str] = field(default_factory=list)

    def line(self) -> str:
        """One line: the winner and why the others lost, or how each region stands."""
        if self.winner:
            others = [r.region for r in self.regions if r.region != self.winner and r.state == "lost"]
            lost = f"; {', '.join(others)} lost: not granted before {self.winner} was" if others else ""
            rung = next((f" on rung {r.rung}" for r in self.regions if r.region == self.winner and r.rung), "")
            away = "".join(f"; {r.region} {r.state}" for r in self.regions if r.state.startswith("quarantined"))
            return _one_line(f"runs in {self.winner}{rung} (admitted there first){lost}{away}")
        return _one_line(
            "waits in every region: "
            + "; ".join(f"{r.region} {r.state}" + (f" ({r.checks[0]})" if r.checks else "") for r in self.regions)
        )


#: planb status warns of a region token that lapses within this many seconds, or within TOKEN_WARN_FRACTION of its
#: lifetime (``exp`` - ``iat``) when that is less. planb's policy: 24 h, because it leaves the operator a working day
#: to run the regions playbook before Kueue and the regions keeper lose the region (with the multikueue role's
#: defaults, 7-day tokens that any run renews once fewer than 4 days are left, a token reaches its last day only
#: when nobody ran the playbook for 6 days); a quarter of a shorter lifetime, so that a short-lived token (the role
#: takes 600 s) is not warned of for its whole life.
TOKEN_WARN_S = 24 * 3600.0
TOKEN_WARN_FRACTION = 0.25


@dataclass(frozen=True)
class TokenWarning:
    """A region whose MultiKueue token, in its kubeconfig Secret on the manager, lapses soon or has lapsed."""

    region: str
    #: The Secret that holds it: ``kueue-system/<name>``.
    secret: str
    #: Its ``exp`` (seconds since the epoch), and the seconds left at the look (negative: lapsed).
    expires: float
    left_s: float

    def line(self) -> str:
        when = dt.datetime.fromtimestamp(max(self.expires, 0.0), dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        if self.left_s <= 0:
            lapse = f"expired at {when}: Kueue and the regions keeper cannot reach {self.region}"
        else:
            lapse = f"expires at {when}, in {_span(self.left_s)}: then Kueue and the regions keeper lose {self.region}"
        return _one_line(f"region {self.region}: the MultiKueue token in Secret {self.secret} {lapse}. Fix: {FIX}")


def _span(seconds: float) -> str:
    minutes = int(seconds // 60)
    return f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{max(minutes, 1)} min"


def token_warnings(tokens: list[RegionToken], now: float | None = None) -> list[TokenWarning]:
    """The regions whose token lapses within TOKEN_WARN_S (or TOKEN_WARN_FRACTION of its lifetime), of the tokens
    planb.status.gather read from each MultiKueueCluster's kubeconfig Secret on the manager (decoded unverified, as
    the keeper reads them: enough to warn). A region whose token it could not read is not warned of."""
    now = time.time() if now is None else now
    found = []
    for token in tokens:
        issued, expires = token_times(token.token)
        if expires is None:
            continue
        lifetime = expires - issued if issued is not None and issued < expires else None
        threshold = TOKEN_WARN_S if lifetime is None else min(TOKEN_WARN_S, TOKEN_WARN_FRACTION * lifetime)
        if expires - now < threshold:
            found.append(TokenWarning(_one_line(token.region), token.secret, expires, expires - now))
    return found


def dispatch(workload: Obj, reads: DispatchReads) -> Dispatch:
    """The job's dispatch: the winner, and each region's copy as planb.status.gather read it (the winner's only,
    once won); a region whose copy was not read is quarantined, or lost to the winner."""
    winner = str((workload.get("status") or {}).get("clusterName") or "")
    out = Dispatch(winner)
    copies = {read.region: _copy(read) for read in reads.copies}
    away = quarantined(reads.keeper, reads.quarantined)
    for region in reads.regions:
        if region in copies:
            out.regions.append(copies[region])
        elif region in away:
            out.regions.append(RegionCopy(_one_line(region), f"quarantined: {_one_line(away[region])}"))
        else:
            out.regions.append(RegionCopy(_one_line(region), "lost"))
    if not winner:
        out.calendar = [_one_line(line) for line in calendar.for_workload(reads.calendar, workload)]
    return out


def quarantined(state: Obj, names: list[str] | None = None) -> dict[str, str]:
    """The regions the keeper took out of the MultiKueueConfig (``names``, else as its ConfigMap ``state`` lists
    them), each with what it waits for to come back (planb.regions.keeper.leftovers.waiting_of: the keeper writes it
    in its ConfigMap, ``kueue-system/<config>-keeper``, as it changes)."""
    waiting = leftovers.waiting_of(state)
    return {
        r: waiting.get(r, "out of the MultiKueueConfig until nothing stale is left there")
        for r in (quarantine.quarantined(state) if names is None else names)
    }


def _copy(read: RegionRead) -> RegionCopy:
    if read.copy is not None and not read.error:
        try:
            return _read(read.region, read.copy)
        # planb's policy: any error reading a region's copy shows it unreadable, because one must never stop the others
        except Exception as exc:
            return RegionCopy(
                _one_line(read.region), f"unreadable: planb cannot read its objects ({type(exc).__name__})"
            )
    if read.error:
        return RegionCopy(_one_line(read.region), _one_line(f"unreadable: {read.error}"))
    return RegionCopy(_one_line(read.region), "no copy")


def _read(region: str, copy: Obj) -> RegionCopy:
    """The region's copy as planb reads it (a copy of another shape raises: _copy takes the region as unreadable)."""
    conditions = {c.get("type"): c.get("status") for c in (copy.get("status") or {}).get("conditions") or []}
    checks = [
        _one_line(f"{c.get('name')}={c.get('state')}: {c.get('message', '')}".rstrip(": "))
        for c in (copy.get("status") or {}).get("admissionChecks") or []
    ]
    # The flavors of its admission for the accelerators (Kueue v0.19.2, apis/kueue/v1beta2/workload_types.go:
    # Admission.PodSetAssignments, a flavor per resource; the head's CPU flavor is not a rung): planb's ladder names
    # each rung's flavor after the plan.
    assignments = (((copy.get("status") or {}).get("admission") or {}).get("podSetAssignments")) or []
    flavors = [(str(r), str(f)) for a in assignments for r, f in (a.get("flavors") or {}).items()]
    rung = _one_line(", ".join(dict.fromkeys(f for r, f in flavors if r in ACCELERATORS)))
    state = "admitted" if conditions.get("Admitted") == "True" else "waiting"
    return RegionCopy(_one_line(region), state, checks, rung)


def _one_line(text: str) -> str:
    """Region-derived text (a check's message, a rung, why it is unreadable) escaped on one line, newline included:
    a region's text cannot add a line to `planb status`."""
    return printable(text, one_line=True)
