"""The local stack's Prometheus-format endpoints scraped as the dashboard's data source would scrape them: Kueue's
`/metrics` and the failover controller's; and which of the dashboard's queries find data in them.

Kueue v0.19.2 serves its metrics over HTTPS behind controller-runtime's authentication and authorization filter
(cmd/kueue/main.go: `SecureServing: true`, `FilterProvider: filters.WithAuthenticationAndAuthorization`): a
bearer token the API server authenticates (TokenReview), whose user may `get` the non-resource URL `/metrics`
(SubjectAccessReview), as the chart's `kueue-metrics-reader` ClusterRole grants. The scrape here does what a
scraper's ServiceAccount does: a ServiceAccount bound to such a ClusterRole, and a token of it (TokenRequest).
"""

from __future__ import annotations

import ssl
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

from planb.kube import Kube
from planb.local import failover_settings
from planb.local.stack.kueue_settings import NAMESPACE as KUEUE_NAMESPACE
from planb.local.stack.stack import LocalStack
from tests.support.shared.dashboard_queries import Query, Sample, dashboard_queries, parse_text

#: The scraper's ServiceAccount, ClusterRole and ClusterRoleBinding: made for one scrape, deleted after it.
SCRAPER = "planb-dashboard-scraper"
RBAC = "/apis/rbac.authorization.k8s.io/v1"


@contextmanager
def scraper_token(kube: Kube) -> Iterator[str]:
    """A bearer token of a ServiceAccount that may get `/metrics` and nothing else."""
    account = f"/api/v1/namespaces/{KUEUE_NAMESPACE}/serviceaccounts"
    kube.create(account, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": SCRAPER}})
    try:
        kube.create(
            f"{RBAC}/clusterroles",
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {"name": SCRAPER},
                "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
            },
        )
        kube.create(
            f"{RBAC}/clusterrolebindings",
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": SCRAPER},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": SCRAPER},
                "subjects": [{"kind": "ServiceAccount", "name": SCRAPER, "namespace": KUEUE_NAMESPACE}],
            },
        )
        answer = kube.create(
            f"{account}/{SCRAPER}/token",
            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 600}},
        )
        yield str(answer["status"]["token"])
    finally:
        kube.delete(f"{RBAC}/clusterrolebindings/{SCRAPER}")
        kube.delete(f"{RBAC}/clusterroles/{SCRAPER}")
        kube.delete(f"{account}/{SCRAPER}")


def kueue_metrics(token: str) -> str:
    """One scrape of the stack's Kueue with a `scraper_token`. Its certificate is the stack's own self-signed pair on
    loopback (planb.local.stack.kueue writes it), so it is not verified here, as a scraper set to
    `insecureSkipVerify` does not verify Kueue's self-signed one in a cluster."""
    port = LocalStack().kueue.settings.metrics_port
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    request = urllib.request.Request(f"https://127.0.0.1:{port}/metrics", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10, context=context) as resp:
        return str(resp.read().decode())


def failover_metrics() -> str:
    """One scrape of the stack's failover controller (plain HTTP on loopback)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{failover_settings.METRICS_PORT}/metrics", timeout=10) as resp:
        return str(resp.read().decode())


def scrape(token: str) -> list[Sample]:
    """One scrape of each endpoint the dashboard reads: Kueue's and the failover controller's."""
    return parse_text(kueue_metrics(token)) + parse_text(failover_metrics())


def missing(samples: list[Sample]) -> dict[str, list[tuple[Query, list[str]]]]:
    """By panel (or template variable), each query that finds no data, with the metric names it lacks."""
    out: dict[str, list[tuple[Query, list[str]]]] = {}
    for title, queries in dashboard_queries().items():
        for query in queries:
            names = [s.name for s in query.selectors if not s.has_data(samples)]
            if names:
                out.setdefault(title, []).append((query, names))
    return out


def lacking(samples: list[Sample], allowed: frozenset[str] = frozenset()) -> list[str]:
    """Each query that finds no data, said as `where: expr (no data: names)`, but those lacking only `allowed`
    metric names."""
    return [
        f"{query.where}: {query.expr} (no data: {', '.join(names)})"
        for found in missing(samples).values()
        for query, names in found
        if set(names) - allowed
    ]


def panels_without_data(samples: list[Sample]) -> list[str]:
    """The panels none of whose queries find data (a text panel has no query and needs none)."""
    lack = missing(samples)
    return [title for title, found in dashboard_queries().items() if found and len(lack.get(title, [])) == len(found)]
