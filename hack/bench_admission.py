"""Admission latency per flavor for N RayJobs submitted at once, from the Workloads' own timestamps.

    .venv/bin/python hack/bench_admission.py --jobs 200 --on-demand-slices 100 --dws-slices 100

Needs the local stack up (`planb local up`). It sizes the pools and the on-demand quota with
site.yml so that half the jobs fit plan A and half fall over to plan B (a multi-host slice is one
node pool, so 100 slices per plan are 100 pools per plan: sizing takes minutes), stops the KubeRay operator
(admission does not need pods, and 200 Ray clusters of fake pods would only load the two cores),
renders one job with Helm, applies N renamed copies in one `kubectl apply`, waits until every
Workload is admitted, and reports p50/p95 of (Admitted.lastTransitionTime - creationTimestamp) per
flavor. Kubernetes timestamps have one-second resolution. Afterwards it deletes the jobs, restores
the inventory's sizes (confirming the deletion of the extra pools, planb_scale_down_confirm) and
restarts the operator.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from planb import paths
from planb.catalog import nodepool
from planb.kube import Kube
from planb.local.capacity import settings as capacity_settings
from planb.local.stack.stack import LocalStack
from planb.status.report import KUEUE

REPO = paths.REPO
PROFILE = "tpu-v6e-4x4"
#: The release name the job is rendered with, replaced by each copy's name.
PLACEHOLDER = "zzbenchzz"
#: The local inventory's cluster and pools (inventories/local; the seed's names).
TARGET = "planb-local/us-east5-b/tpu-cluster"
POOLS = ("on-demand-pool", "dws-pool")


def sh(*argv: str, stdin: str | None = None) -> str:
    proc = subprocess.run(list(argv), input=stdin, capture_output=True, text=True, cwd=REPO, check=False)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv[:4])} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return proc.stdout


def ts(value: str) -> float:
    return datetime.datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.UTC).timestamp()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, math.ceil(q / 100 * len(ordered)) - 1))  # nearest rank
    return ordered[index]


def render_jobs(kubeconfig: Path, count: int) -> str:
    chart = REPO / "charts" / "planb"
    rendered = sh(
        str(paths.tool("helm")),
        "template",
        PLACEHOLDER,
        str(chart),
        "-f",
        str(chart / "values" / f"{PROFILE}.yaml"),
    )
    docs = [d for d in yaml.safe_load_all(rendered) if d and d["kind"] in ("ConfigMap", "RayJob")]
    out: list[dict[str, Any]] = []
    for i in range(count):
        name = f"bench-{i:03d}"
        out.extend(json.loads(json.dumps(docs).replace(PLACEHOLDER, name)))
    return yaml.safe_dump_all(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--on-demand-slices", type=int, default=100)
    parser.add_argument("--dws-slices", type=int, default=100)
    parser.add_argument("--provisioning-delay", type=float, default=0.0)
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()

    stack = LocalStack()
    if not stack.is_up():
        sys.exit("the local stack is not up: run 'planb local up' first")
    kubeconfig = stack.kubeconfig
    kube = Kube(kubeconfig)
    playbook = str(Path(sys.executable).parent / "ansible-playbook")
    # Every job's head and submitter take the default-cpu flavor (2.5 cpu, 4.2Gi): give it room
    # for all jobs, so the accelerator flavors are what is measured.
    cpu_room = {"queues": {"quotas": {"defaultCpu": {"cpu": 3 * args.jobs, "memory": f"{5 * args.jobs}Gi"}}}}
    sizes = [
        "-e",
        f"planb_ondemand_slices={args.on_demand_slices}",
        "-e",
        f"planb_dws_slices={args.dws_slices}",
        "-e",
        json.dumps({"kueue_queues_values": cpu_room}),
    ]
    print(f"sizing plan A to {args.on_demand_slices} slices and plan B to {args.dws_slices} ...", flush=True)
    sh(playbook, "site.yml", *sizes)
    capacity_settings.update(provisioning_delay_seconds=args.provisioning_delay)
    stack.kuberay.stop()
    try:
        manifest = render_jobs(kubeconfig, args.jobs)
        print(f"submitting {args.jobs} RayJobs in one apply ...", flush=True)
        start = time.monotonic()
        sh("kubectl", f"--kubeconfig={kubeconfig}", "apply", "-f", "-", stdin=manifest)
        latencies: dict[str, list[float]] = {}
        while time.monotonic() - start < args.timeout:
            workloads = [
                w
                for w in kube.items(f"{KUEUE}/namespaces/default/workloads")
                if w["metadata"]["name"].startswith("rayjob-bench-")
            ]
            admitted = []
            for wl in workloads:
                cond = next(
                    (c for c in (wl.get("status") or {}).get("conditions", []) if c["type"] == "Admitted"), None
                )
                if cond and cond["status"] == "True":
                    admitted.append((wl, cond))
            print(f"  {time.monotonic() - start:6.1f} s: {len(admitted)}/{args.jobs} admitted", flush=True)
            if len(admitted) >= args.jobs:
                for wl, cond in admitted:
                    flavors = {
                        f
                        for psa in wl["status"]["admission"]["podSetAssignments"]
                        for r, f in psa.get("flavors", {}).items()
                        if r == "google.com/tpu"
                    }
                    flavor = next(iter(flavors), "none")
                    latency = ts(cond["lastTransitionTime"]) - ts(wl["metadata"]["creationTimestamp"])
                    latencies.setdefault(flavor, []).append(latency)
                break
            time.sleep(3)
        else:
            print("timed out before every job was admitted", file=sys.stderr)
            return 1
        wall = time.monotonic() - start
        print(f"\nall {args.jobs} admitted in {wall:.1f} s wall; latency from the Workloads' timestamps:")
        print(f"{'flavor':<10} {'jobs':>5} {'p50 s':>7} {'p95 s':>7} {'max s':>7} {'mean s':>7}")
        for flavor, values in sorted(latencies.items()):
            print(
                f"{flavor:<10} {len(values):>5} {percentile(values, 50):>7.0f} {percentile(values, 95):>7.0f} "
                f"{max(values):>7.0f} {statistics.mean(values):>7.1f}"
            )
        return 0
    finally:
        print("cleaning up ...", flush=True)
        subprocess.run(
            ["kubectl", f"--kubeconfig={kubeconfig}", "delete", "-f", "-", "--wait=false"],
            input=render_jobs(kubeconfig, args.jobs),
            capture_output=True,
            text=True,
            check=False,
        )
        capacity_settings.save(capacity_settings.Settings())
        # Back to one slice per plan: the pools of slices 2..K go, confirmed by name as the play asks.
        extra = [
            name
            for base, slices in zip(POOLS, (args.on_demand_slices, args.dws_slices), strict=True)
            for name in nodepool.pool_names(base, slices)[1:]
        ]
        confirm = ["-e", f"planb_scale_down_confirm={TARGET}/{','.join(extra)}"] if extra else []
        sh(playbook, "site.yml", *confirm)
        stack.up()


if __name__ == "__main__":
    sys.exit(main())
