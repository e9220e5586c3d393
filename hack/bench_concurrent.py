"""The ladder's two modes on one scripted capacity trace, with and without save on notice: time to first step,
share on the preferred rung, steps lost, goodput.

    .venv/bin/python hack/bench_concurrent.py --reservation-frees 240 --dws-delivers 90

Needs the local stack up (`planb local up`) with a Kueue that has the ConcurrentAdmission gate on for
the concurrent runs (`planb_ladder_mode=concurrent`). Three columns (--modes): `sequential` and
`concurrent`, each with train.py's save on notice off (PLANB_SAVE_ON_NOTICE=0: SIGTERM ends it at once, as
before train.py saved on notice), and `concurrent+save`, the concurrent ladder with save on notice on (train.py's
default).
For each ladder mode it converges site.yml once with the four-rung ladder (reservation, on-demand, DWS,
Spot; one slice each, as tests/e2e/conftest.py FOUR) and `-e planb_ladder_mode=<mode>` (the two concurrent
columns share it), waits until no Spot or DWS node of an earlier run is left, then plays the same trace:

* the reservation is busy until T1 (--reservation-frees): a blocker job that may use no other rung
  holds it, and is uninstalled T1 seconds after the measured job is submitted;
* on-demand is full for the whole run: its accelerator quota is set to 0;
* DWS delivers T2 (--dws-delivers) seconds after it accepts a request (the capacity simulator's
  delay for dws-pool);
* Spot has capacity from the start.

The measured job runs the real training/train.py on this machine's CPU (the Ray head stand-in's run
mode, plain runner), checkpointing every --checkpoint-every steps into a fresh directory. Every
--poll seconds the script records the flavor the job's Workload is admitted on and whether the
stand-in's log of the job shows its first step ("Epoch 0:"), until the RayJob completes. It then reads
train.py's "resumed from checkpoint step S; N step(s) lost" lines and its last "training time up to step
R: K s kept" line (planb.status.trainlog, as `planb status` reads it) and prints, per column: the time
from submission to the first training step, the share of the run (first step to completion) spent
on the preferred rung, each migration, the steps lost per migration, and goodput as docs/goodput.md
defines it, training kept / wall time, twice: since submission, and since the first admission (the
first sample on a flavor) to completion. Choose --steps so that the run outlasts T1 (the script says
when it did not). The figures are wall clock, to --poll's resolution.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

# The figures live beside this script (hack/ is no package); run as a script, its directory is on sys.path already.
_HERE = os.path.dirname(os.path.realpath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
from bench_concurrent_figures import (  # noqa: E402
    PREFERRED,
    Figures,
    Sample,
    Timeline,
    figures,
    parse_kept,
    parse_resumed,
    table,
)

#: Column -> (the ladder mode converged, train.py's save on notice).
MODES = {
    "sequential": ("sequential", False),
    "concurrent": ("concurrent", False),
    "concurrent+save": ("concurrent", True),
}
JOB, BLOCKER = "bench-job", "bench-blocker"
PROFILE = "tpu-v6e-4x4"
RESERVATION = "planb-e2e-reservation"
#: The four rungs, in ladder order (tests/e2e/conftest.py FOUR).
PLANS = [
    {"name": "reserved", "kind": "reservation", "slices": 1, "nodepool": "reserved-pool", "reservation": RESERVATION},
    {"name": "on-demand", "kind": "on-demand", "slices": 1, "nodepool": "on-demand-pool"},
    {"name": "dws", "kind": "dws", "slices": 1, "nodepool": "dws-pool"},
    {"name": "spot", "kind": "spot", "slices": 1, "nodepool": "spot-pool"},
]
FIRST_STEP = "Epoch 0:"
RAYJOBS = "/apis/ray.io/v1/namespaces/default/rayjobs"
#: The pools a run leaves nodes in that the next run's trace must not find (the capacity simulator removes idle ones).
TRANSIENT_POOLS = ("dws-pool", "spot-pool")
POOL_LABEL = "cloud.google.com/gke-nodepool"


# --------------------------------------------------------------------------------------------------
# Driving the local stack
# --------------------------------------------------------------------------------------------------


def sh(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    from planb import paths

    proc = subprocess.run(list(argv), capture_output=True, text=True, cwd=paths.REPO, check=False)
    if check and proc.returncode != 0:
        sys.exit(f"{' '.join(argv[:4])} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return proc


def converge(mode: str) -> None:
    """The reservation in the emulator, then site.yml with the four rungs in `mode`, confirming a scale-down the
    play asks for (the pools of another topology)."""
    from planb import paths

    bindir = Path(sys.executable).parent
    made = sh(str(bindir / "planb"), "local", "gke-emulator", "reservation", "create", RESERVATION,
              "--for-profile", PROFILE, "--slices", "1", "--zone", "us-east5-b", check=False)  # fmt: skip
    if made.returncode != 0 and "already exists" not in made.stdout + made.stderr:
        sys.exit(f"the reservation could not be made: {made.stdout}{made.stderr}")
    # Kueue keeps a ClusterQueue's concurrentAdmissionPolicy immutable and the kueue_queues role refuses a mode
    # change: the queue goes first (no job is left on it between the modes), the converge makes it anew.
    sh("kubectl", f"--kubeconfig={paths.local_kubeconfig()}", "delete", "clusterqueue", "cluster-queue",
       "--ignore-not-found", "--wait=true")  # fmt: skip
    play = [str(bindir / "ansible-playbook"), str(paths.REPO / "site.yml"), "-e", json.dumps({"planb_plans": PLANS}),
            "-e", f"planb_ladder_mode={mode}"]  # fmt: skip
    done = sh(*play, check=False)
    named = re.search(r"-e (planb_scale_down_confirm=\S+)", done.stdout)
    if done.returncode != 0 and named:
        done = sh(*play, "-e", named.group(1), check=False)
    if done.returncode != 0:
        sys.exit(f"site.yml ({mode}) failed:\n{done.stdout[-3000:]}")


def helm(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    from planb import paths
    from planb.local.stack.stack import LocalStack

    return sh(str(paths.tool("helm")), "--kubeconfig", str(LocalStack().kubeconfig), *args, check=check)


def no_on_demand_quota() -> None:
    """On-demand is full: the queues release's ladder sent back with on-demand's accelerator quota at 0."""
    from planb import paths

    values = json.loads(helm("get", "values", "planb-queues", "-o", "json").stdout or "{}")
    ladder = ((values or {}).get("queues") or {}).get("ladder") or []
    for rung in ladder:
        if rung.get("name") == "on-demand":
            rung.setdefault("quota", {})["accelerator"] = 0
    helm("upgrade", "planb-queues", str(paths.REPO / "charts" / "planb"), "--reuse-values",
         "--set-json", f"queues.ladder={json.dumps(ladder)}")  # fmt: skip


def install(name: str, *extra: str) -> None:
    from planb import paths

    chart = paths.REPO / "charts" / "planb"
    helm("install", name, str(chart), "-f", str(chart / "values" / f"{PROFILE}.yaml"), *extra)


def admitted_flavor(kube: Any, job: str) -> str:
    from planb.status.report import collect

    for status in collect(kube, "default"):
        if status.name != job:
            continue
        if status.concurrent is not None:  # the variant Kueue admitted (planb.status.variants)
            return "" if status.concurrent.running_on == "-" else status.concurrent.running_on
        return status.accelerator_flavor if status.state in ("Admitted", "Finished") else ""
    return ""


def job_logs(job: str, since: float) -> list[Path]:
    from planb.local.rayhead import settings as rayhead_settings

    found = [p for p in rayhead_settings.logs_dir().glob(f"default_{job}_*.log") if p.stat().st_mtime >= since]
    return sorted(found, key=lambda p: p.stat().st_mtime)


def read_all(paths: Iterable[Path]) -> str:
    return "\n".join(p.read_text(errors="replace") for p in paths)


def settle(kube: Any, timeout: float = 180.0) -> None:
    """Wait until no node of TRANSIENT_POOLS is left from an earlier run, so that each column starts alike."""
    deadline = time.monotonic() + timeout
    while True:
        nodes = (kube.get("/api/v1/nodes") or {}).get("items") or []
        pools = {n["metadata"]["name"]: (n["metadata"].get("labels") or {}).get(POOL_LABEL) for n in nodes}
        left = sorted(name for name, pool in pools.items() if pool in TRANSIENT_POOLS)
        if not left:
            return
        if time.monotonic() > deadline:
            print(f"nodes of an earlier run still there after {timeout:.0f} s: {', '.join(left)}", file=sys.stderr)
            return
        time.sleep(2)


def run_mode(mode: str, args: argparse.Namespace, workdir: Path) -> Timeline:
    """One column on the ladder mode converged last (main converges it)."""
    from planb.kube import Kube
    from planb.local.capacity import settings as capacity_settings
    from planb.local.rayhead import settings as rayhead_settings
    from planb.local.stack.stack import LocalStack

    ladder, save = MODES[mode]
    kube = Kube(LocalStack().kubeconfig)
    no_on_demand_quota()
    settle(kube)
    capacity_settings.update(pools={"dws-pool": capacity_settings.Lifecycle(delay_seconds=args.dws_delivers)})
    rayhead_settings.set_payload(BLOCKER, rayhead_settings.Payload(seconds=24 * 3600))
    log_every = str(max(1, args.steps // 20))  # a few lines per run; step 0 is always printed
    env = {**rayhead_settings.DEFAULT_RUN_ENV, "PLANB_RUNNER": "plain", "PLANB_LOG_EVERY": log_every,
           "PLANB_SAVE_ON_NOTICE": "1" if save else "0"}  # fmt: skip
    rayhead_settings.set_payload(f"default/{JOB}", rayhead_settings.Payload(mode="run", env=env))
    mode_args = ("--set", f"job.ladderMode={ladder}")
    install(BLOCKER, "--set", "job.avoidPlans={on-demand,dws,spot}", *mode_args)
    deadline = time.monotonic() + 180
    while admitted_flavor(kube, BLOCKER) != PREFERRED:
        if time.monotonic() > deadline:
            sys.exit(f"{BLOCKER} was not admitted on {PREFERRED} in 180 s")
        time.sleep(args.poll)
    ckpt = workdir / mode.replace("+", "-")
    since = time.time()
    install(JOB, *mode_args, "--set", f"job.training.checkpointDir={ckpt}",
            "--set", f"job.training.epochs={args.steps}",
            "--set", f"job.training.checkpointEvery={args.checkpoint_every}")  # fmt: skip
    t0 = time.monotonic()
    timeline = Timeline()
    freed = False
    while True:
        t = time.monotonic() - t0
        if not freed and t >= args.reservation_frees:
            helm("uninstall", BLOCKER, "--wait")
            freed = True
        timeline.samples.append(Sample(t, admitted_flavor(kube, JOB)))
        if timeline.first_step is None and FIRST_STEP in read_all(job_logs(JOB, since)):
            timeline.first_step = t
        status = ((kube.get(f"{RAYJOBS}/{JOB}") or {}).get("status")) or {}
        if status.get("jobDeploymentStatus") in ("Complete", "Failed"):
            timeline.finished = t
            if status.get("jobDeploymentStatus") == "Failed":
                print(f"{mode}: the job failed: {status.get('message')}", file=sys.stderr)
            break
        if t > args.timeout:
            print(f"{mode}: the job did not finish in {args.timeout:.0f} s", file=sys.stderr)
            break
        time.sleep(args.poll)
    logs = read_all(job_logs(JOB, since))
    timeline.resumed, timeline.kept = parse_resumed(logs), parse_kept(logs)
    if timeline.finished is not None and timeline.finished < args.reservation_frees:
        print(f"{mode}: the job finished before the reservation freed; raise --steps", file=sys.stderr)
    for release in (JOB, BLOCKER):
        helm("uninstall", release, "--wait", check=False)
    capacity_settings.update(pools={})
    return timeline


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="Needs `planb local up`.")
    parser.add_argument(
        "--reservation-frees",
        type=float,
        default=240.0,
        metavar="T1",
        help="seconds after submission at which the reservation frees (default 240)",
    )
    parser.add_argument(
        "--dws-delivers",
        type=float,
        default=90.0,
        metavar="T2",
        help="seconds DWS takes from accepting a request to delivering it (default 90)",
    )
    parser.add_argument("--steps", type=int, default=3_000_000, help="training steps of the job (default 3000000)")
    parser.add_argument("--checkpoint-every", type=int, default=20_000, help="checkpoint interval (default 20000)")
    parser.add_argument(
        "--modes",
        default=",".join(MODES),
        help="comma-separated columns, from: " + ", ".join(MODES) + " (default: all three)",
    )
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait for each run (default 1800)")
    parser.add_argument("--poll", type=float, default=0.5, help="seconds between samples (default 0.5)")
    args = parser.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    if not modes or any(m not in MODES for m in modes):
        parser.error(f"--modes: choose from {', '.join(MODES)}, got {args.modes!r}")
    args.modes = modes
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    results: dict[str, Figures] = {}
    converged = ""
    with tempfile.TemporaryDirectory(prefix="planb-bench-concurrent-") as tmp:
        for mode in args.modes:
            if MODES[mode][0] != converged:  # once per ladder mode: the two concurrent columns share it
                converged = MODES[mode][0]
                converge(converged)
            got = results[mode] = figures(run_mode(mode, args, Path(tmp)))
            print(
                f"RESULT {mode}: {got}; goodput {got.goodput}, after the first admission {got.goodput_after_admission}"
            )
    print(f"trace: reservation frees at {args.reservation_frees:.0f} s, DWS delivers after "
          f"{args.dws_delivers:.0f} s, Spot from the start, on-demand full")  # fmt: skip
    print(table(results, args.checkpoint_every))
    return 0


if __name__ == "__main__":
    sys.exit(main())
