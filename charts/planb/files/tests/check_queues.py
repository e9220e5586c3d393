"""`helm test` of a queues release: each ClusterQueue is Active and each LocalQueue points at its own.

Run in the test pod as ``python check_queues.py --serviceaccount DIR --cluster-queue NAME --local-queue NS/NAME``,
with ``--cluster-queue`` once per ClusterQueue and ``--local-queue NS/NAME=CLUSTERQUEUE`` once per LocalQueue where
the release renders several (queues.teams: a ClusterQueue per team, a LocalQueue in each of its namespaces); without
``=CLUSTERQUEUE`` a LocalQueue must point at the one ClusterQueue given. It reads the objects through the in-cluster
API, as any pod does: the API server at ``KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT``, the pod's
ServiceAccount token and CA from DIR (the kubelet mounts them at /var/run/secrets/kubernetes.io/serviceaccount). The
chart's test hooks give that account `get` on these objects only. Kueue sets a ClusterQueue's Active condition
False (with its reason: a missing flavor or admission check, a stop policy) while it admits nothing, and a
LocalQueue's spec.clusterQueue is the queue its Workloads go to. It prints one line per check and exits 1 with
``planb helm test: FAIL: ...`` naming what is wrong. The standard library only: the test image (failover.image, a
stock Python) needs nothing installed.
"""

from __future__ import annotations

import argparse
import json
import os
import ssl
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import quote

KUEUE = "/apis/kueue.x-k8s.io/v1beta2"


class Api:
    """GET against the in-cluster API server as the pod's ServiceAccount."""

    def __init__(self, account: Path) -> None:
        host, port = os.environ.get("KUBERNETES_SERVICE_HOST", ""), os.environ.get("KUBERNETES_SERVICE_PORT", "")
        if not host or not port:
            raise SystemExit("planb helm test: FAIL: KUBERNETES_SERVICE_HOST/PORT are not set (not in a pod?)")
        self.base = f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}"
        self.token = (account / "token").read_text().strip()
        self.tls = ssl.create_default_context(cafile=str(account / "ca.crt"))

    def get(self, path: str) -> dict[str, Any] | None:
        """The object at `path`; None when it does not exist (404)."""
        request = urllib.request.Request(
            self.base + path, headers={"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, context=self.tls, timeout=30) as response:
                found: dict[str, Any] = json.load(response)
                return found
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return None
            raise SystemExit(
                f"planb helm test: FAIL: GET {path}: the API server answered {exc.code} {exc.reason}"
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            raise SystemExit(
                f"planb helm test: FAIL: GET {path}: cannot reach the API server at {self.base}: {exc}"
            ) from None


def cluster_queue_problem(api: Api, name: str) -> str:
    """Why the ClusterQueue is not Active ('' when it is)."""
    queue = api.get(f"{KUEUE}/clusterqueues/{quote(name, safe='')}")
    if queue is None:
        return f"ClusterQueue {name} does not exist"
    for cond in (queue.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Active":
            if cond.get("status") == "True":
                return ""
            return f"ClusterQueue {name} is not Active: {cond.get('reason', '')}: {cond.get('message', '')}"
    return f"ClusterQueue {name} has no Active condition yet (is Kueue's controller running?)"


def local_queue_problem(api: Api, namespace: str, name: str, cluster_queue: str) -> str:
    """Why the LocalQueue does not send its Workloads to `cluster_queue` ('' when it does)."""
    queue = api.get(f"{KUEUE}/namespaces/{quote(namespace, safe='')}/localqueues/{quote(name, safe='')}")
    if queue is None:
        return f"LocalQueue {namespace}/{name} does not exist"
    target = (queue.get("spec") or {}).get("clusterQueue")
    if target != cluster_queue:
        return f"LocalQueue {namespace}/{name} points at ClusterQueue {target!r}, not {cluster_queue!r}"
    return ""


def local_queues(
    parser: argparse.ArgumentParser, given: list[str], cluster_queues: list[str]
) -> list[tuple[str, str, str]]:
    """Each ``--local-queue NS/NAME[=CLUSTERQUEUE]`` as (namespace, name, the ClusterQueue it must point at)."""
    found = []
    for arg in given:
        queue, _, target = arg.partition("=")
        namespace, _, name = queue.partition("/")
        if not namespace or not name:
            parser.error(f"--local-queue {arg}: expected NAMESPACE/NAME[=CLUSTERQUEUE]")
        if not target:
            if len(cluster_queues) != 1:
                parser.error(f"--local-queue {arg}: name its ClusterQueue (=CLUSTERQUEUE) when several are checked")
            target = cluster_queues[0]
        found.append((namespace, name, target))
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serviceaccount", type=Path, required=True, help="the token and ca.crt's directory")
    parser.add_argument("--cluster-queue", action="append", required=True, help="repeatable")
    parser.add_argument(
        "--local-queue", action="append", required=True, metavar="NAMESPACE/NAME[=CLUSTERQUEUE]", help="repeatable"
    )
    args = parser.parse_args(argv)
    queues = local_queues(parser, args.local_queue, args.cluster_queue)
    api = Api(args.serviceaccount)
    checks = [
        *(
            (f"ClusterQueue {name} is Active", lambda name=name: cluster_queue_problem(api, name))
            for name in args.cluster_queue
        ),
        *(
            (
                f"LocalQueue {ns}/{name} points at ClusterQueue {target}",
                lambda ns=ns, name=name, target=target: local_queue_problem(api, ns, name, target),
            )
            for ns, name, target in queues
        ),
    ]
    problems = []
    for what, check in checks:
        problem = check()
        if problem:
            problems.append(problem)
            print(f"planb helm test: FAIL: {problem}", flush=True)
        else:
            print(f"OK: {what}", flush=True)
    if not problems:
        print("planb helm test: PASS")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
