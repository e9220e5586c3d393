"""Why a region Kueue does not reach is not taken as lost: the cause is on the manager's side.

Kueue turns a MultiKueueCluster's ``Active`` False on any failed connection (kubernetes-sigs/kueue@v0.19.2
pkg/controller/admissionchecks/multikueue/multikueuecluster.go#L911-L918), its own token's expiry included. The
region's nodes then keep running its job. planb's policy: the keeper neither quarantines such a region nor lets the
release pass it while the token in the region's kubeconfig Secret has an ``exp`` in the past, or Kueue's message says
401/Unauthorized, because taking the region out then makes Kueue retry the job elsewhere at once (workload.go#L568)
while it still runs there, and nobody can delete it there until the token is renewed (the keeper reads the region
with the same token). The token is decoded unverified: enough to decide not to act, never to act.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
import math
import re
from collections.abc import Iterable

from planb.kube import Obj
from planb.kubeconfig import Connection
from planb.regions.keeper.reads import Seen

FIX = "run playbooks/regions.yml, which renews the region tokens"
_UNAUTHORIZED = re.compile(r"\b401\b|unauthori[sz]ed", re.IGNORECASE)


def token_times(token: str) -> tuple[float | None, float | None]:
    """The ``iat`` and ``exp`` (seconds since the epoch) of a JWT, decoded unverified; each None when it is not a
    JWT or has no such number. A TokenRequest token carries both, ``exp`` at ``iat`` plus its expirationSeconds
    (kubernetes/kubernetes@031075d149ca pkg/serviceaccount/claims.go#L61-L69)."""
    parts = token.split(".")
    if len(parts) != 3:
        return None, None
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError, RecursionError):
        return None, None
    if not isinstance(claims, dict):
        return None, None

    def number(key: str) -> float | None:
        value = claims.get(key)
        if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
            return None
        return float(value)

    return number("iat"), number("exp")


def token_expiry(token: str) -> float | None:
    """The ``exp`` (seconds since the epoch) of a JWT, decoded unverified; None when it is not a JWT or has none."""
    return token_times(token)[1]


def excused(seen: Seen, late: Iterable[str], wall_now: float) -> dict[str, str]:
    """Of the `late` regions (not Active for lost_after), those out of reach because of the manager's side, and why
    (`manager_side`)."""
    found = {}
    for region in late:
        if region in seen.clusters and (
            why := manager_side(region, seen.conditions[region], seen.tokens.get(region), wall_now)
        ):
            found[region] = why
    return found


def manager_side(region: str, active: Obj, token: tuple[Connection, str] | None, wall_now: float) -> str:
    """Why `region`, not Active, is out of reach because of the manager's side ('' when planb cannot tell): Kueue's
    `active` condition's message says 401/Unauthorized, or the token in its kubeconfig Secret (`token`: the
    connection and the Secret's name as read, None: none to read) expired (`wall_now`: time.time())."""
    message = str(active.get("message") or "")
    if _UNAUTHORIZED.search(message):
        return f"{region}: Kueue's connection to it is refused as unauthorized ({message[:200]}); {FIX}"
    if token is None:
        return ""  # no token to read: planb cannot tell, so the region counts as lost as before
    conn, source = token
    exp = token_expiry(conn.token)
    if exp is None or exp > wall_now:
        return ""
    when = dt.datetime.fromtimestamp(max(exp, 0.0), dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"{region}: its MultiKueue token ({source}) expired at {when}; {FIX}"
