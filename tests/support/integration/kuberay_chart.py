"""What the chart's KubeRay tests share (tests/integration/chart/test_kuberay_layout.py, test_kuberay_forgeries.py):
a queues release's values in a namespace of the test's own, helm run against the folder's API server, and the peers
a job's NetworkPolicy admits to the Ray dashboard."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from planb.kube import Kube
from tests.support.shared.chart.helm import Helm


def queues_values(ns: str) -> tuple[str, ...]:
    """A queues release whose cluster-scoped objects are named after its namespace, its LocalQueue there."""
    return (
        "--set", "mode=queues",
        "--set", f"queues.clusterQueue=cq-{ns}",
        "--set", f"queues.flavors.cpu=cpu-{ns}",
        "--set", f"queues.flavors.onDemand=on-demand-{ns}",
        "--set", "dws.enabled=false",
        "--set", "queues.jobServiceAccount=",
        "--set", f"queues.localQueue.namespace={ns}",
    )  # fmt: skip


def run(helm: Helm, api_server: Path, *args: str) -> tuple[int, str]:
    """helm ARGS against the API server: its exit status and stderr."""
    done = helm(*args, kubeconfig=str(api_server))
    return done.returncode, done.stderr


def operator_peers(kube: Kube, ns: str, release: str) -> list[dict[str, Any]]:
    """The peers the release's NetworkPolicy admits to TCP 8265, as the API server stored them."""
    policy = kube.get(f"/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies/{release}-ray")
    assert policy is not None
    rules = [r for r in policy["spec"]["ingress"] if r.get("ports") == [{"protocol": "TCP", "port": 8265}]]
    return [peer for rule in rules for peer in rule["from"]]
