"""A region's MultiKueue token renewed from inside the manager: the token asks its own region for its successor.

The planb.gke ``multikueue`` role keeps, in the manager's Secret ``kueue-system/<region>-multikueue``, a kubeconfig
whose token is a TokenRequest token of the region's ServiceAccount ``kueue-system/planb-multikueue``: it expires
(``multikueue_token_duration``, 7 days by default), so the regions play had to run before it did. Here a job on the
manager renews it without the operator's rights:

* the token itself asks its region for a new token of the same ServiceAccount (``POST
  /api/v1/namespaces/kueue-system/serviceaccounts/planb-multikueue/token``, the TokenRequest API,
  https://kubernetes.io/docs/reference/kubernetes-api/authentication-resources/token-request-v1/). The region grants
  that ServiceAccount ``create`` on ``serviceaccounts/token`` for its own name only (``resourceNames``), so the
  token can mint nothing but its own successor, with the rights it already has;
* the new token replaces the old one in the Secret, a JSON merge patch that carries the Secret's
  ``resourceVersion``: a Secret the regions play rewrote meanwhile is a conflict (409), never overwritten;
* the job's own ServiceAccount on the manager may get and patch those Secrets only, and get the regions'
  MultiKueueClusters (the role's ``resourceNames``), nothing else.

A token is renewed when less than ``renew_before`` seconds of it are left (the role's
``multikueue_token_renew_before``), so the job and the play agree on what is fresh. A token that has already expired
cannot ask for its successor: the regions play makes a new one, as at first. No token is ever in a message, a
return value's repr or a log line: each names the region and the Secret only.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import yaml

from planb.errors import PlanbError
from planb.kube import Kube, KubeError
from planb.kube_limits import Limits
from planb.regions.access.connection import KUEUE_NAMESPACE, RegionAccessError, region_secret
from planb.regions.access.kubeconfig import RegionKubeconfigError, load_region
from planb.regions.keeper.unreached import token_expiry

#: The multikueue role's ServiceAccount on every region (multikueue_service_account).
SERVICE_ACCOUNT = "planb-multikueue"
#: The role's defaults: a token lives 7 days and is renewed with less than 4 days left.
DURATION_S = 604800
RENEW_BEFORE_S = 345600


class TokenRenewalError(PlanbError):
    """A region's token could not be renewed; the message names the region, the Secret and the fix, never the token."""


@dataclass(frozen=True)
class Renewal:
    """What happened to one region's token: ``renewed`` or ``fresh`` (kept), and when the kept one expires."""

    region: str
    secret: str
    action: str
    expires: int  # seconds since the epoch


def renew(
    manager: Kube,
    region: str,
    now: float,
    limits: Limits,
    renew_before: int = RENEW_BEFORE_S,
    duration: int = DURATION_S,
    account: str = SERVICE_ACCOUNT,
) -> Renewal:
    """Renew `region`'s token when it has less than `renew_before` seconds left; raises TokenRenewalError."""
    try:
        name, raw = region_secret(manager, region)
        source = f"Secret {KUEUE_NAMESPACE}/{name}"
        conn = load_region(raw, source)  # planb's policy on a region's kubeconfig, as the keeper reads it
    except (RegionAccessError, RegionKubeconfigError) as exc:
        raise TokenRenewalError(f"{region}: {exc}") from exc
    # Decoded unverified, as the keeper reads it; a token with no exp (a legacy one) is renewed if its region takes it.
    expires = int(token_expiry(conn.token) or 0)
    if expires - now >= renew_before:
        return Renewal(region, source, "fresh", expires)
    fix = (
        f"Fix: run the regions play for {region} (site.yml -i inventories/gke-regions --limit manager,{region}), "
        "which makes a new token with the operator's rights"
    )
    path = f"/api/v1/namespaces/{KUEUE_NAMESPACE}/serviceaccounts/{quote(account, safe='')}/token"
    request: dict[str, Any] = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest"}
    request["spec"] = {"expirationSeconds": duration}
    try:
        answer = Kube(Path(source), conn, limits).create(path, request)
    except KubeError as exc:
        # The status only: an error body is the region's text, and may quote the request.
        said = {0: "no answer", 401: "401: expired or revoked", 403: "403: not allowed"}.get(exc.status)
        said = said or f"answered {exc.status}"
        raise TokenRenewalError(
            f"{region}: the token in {source} could not ask its region for a new one ({said}). {fix}"
        ) from None
    token = str((answer.get("status") or {}).get("token") or "")
    new_expiry = token_expiry(token)
    if new_expiry is None:
        raise TokenRenewalError(f"{region}: the region's TokenRequest answer holds no token with an expiry. {fix}")
    _store(manager, region, name, raw, conn.token, token)
    return Renewal(region, source, "renewed", int(new_expiry))


def _store(manager: Kube, region: str, name: str, raw: bytes, old: str, new: str) -> None:
    """The kubeconfig with `new` for `old`, written over the Secret read as `raw` unless it changed since."""
    config = yaml.safe_load(raw)
    for user in config.get("users") or []:
        if (user.get("user") or {}).get("token") == old:
            user["user"]["token"] = new
    path = f"/api/v1/namespaces/{KUEUE_NAMESPACE}/secrets/{quote(name, safe='')}"
    try:
        current = manager.get(path) or {}
        if base64.b64decode(str((current.get("data") or {}).get("kubeconfig") or "")) != raw:
            raise TokenRenewalError(f"{region}: Secret {KUEUE_NAMESPACE}/{name} changed while its token was renewed")
        patch = {
            "metadata": {"resourceVersion": (current.get("metadata") or {}).get("resourceVersion")},
            "data": {"kubeconfig": base64.b64encode(yaml.safe_dump(config).encode()).decode()},
        }
        manager.merge_patch(path, patch)
    except KubeError as exc:
        raise TokenRenewalError(
            f"{region}: the new token could not be written to Secret {KUEUE_NAMESPACE}/{name} (HTTP {exc.status}); "
            "the old one stays until it expires, and the next run tries again"
        ) from None
