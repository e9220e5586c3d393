"""`PLANB_DEMO_SCENARIO=concurrent make demo`, steps 3-4: start now on Spot, move up later, keep the work.

hack/demo.sh has brought the stack up and converged the four-rung ladder (reservation, on-demand, DWS, Spot)
with `planb_ladder_mode=concurrent`. This script tells the story on the real Kueue and exits 0 only if every
step landed as expected:

1. the reservation, on-demand and DWS have no quota, so job-c starts on Spot within seconds; the payload is
   the real train.py, run on this machine's CPU by the Ray head stand-in, checkpointing every
   ``--checkpoint-every`` steps;
2. once the job has checkpointed on Spot, DWS has room again: Kueue migrates the job to dws (its request is
   provisioned 2 s later), and train.py resumes from the newest checkpoint;
3. the reservation frees (its quota comes back): Kueue migrates the job to the reservation, train.py resumes
   again, and the job succeeds there.

Each resumed run's own line ("resumed from checkpoint step S; N step(s) lost") is printed as it appears; the
script fails if a resume lost more than the step in flight (train.py saves when SIGTERM tells it to stop), or if
`planb status` shows no goodput for the job.
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from planb import paths
from planb.kube import Kube
from planb.local.capacity import settings as capacity_settings
from planb.local.rayhead import settings as rayhead_settings
from planb.status.report import collect

JOB = "job-c"
CHART = paths.REPO / "charts" / "planb"


class DemoError(Exception):
    """A step of the story did not land as expected."""


def helm(kubeconfig: Path, *args: str) -> str:
    done = subprocess.run(
        [str(paths.tool("helm")), f"--kubeconfig={kubeconfig}", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    if done.returncode != 0:
        raise DemoError(f"helm {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def ladder(kubeconfig: Path) -> list[dict[str, object]]:
    values = json.loads(helm(kubeconfig, "get", "values", "planb-queues", "-o", "json") or "{}")
    return list(((values or {}).get("queues") or {}).get("ladder") or [])


def set_ladder(kubeconfig: Path, rungs: list[dict[str, object]]) -> None:
    helm(kubeconfig, "upgrade", "planb-queues", str(CHART), "--reuse-values", "--set-json",
         f"queues.ladder={json.dumps(rungs)}")  # fmt: skip


def without_quota(rungs: list[dict[str, object]], plans: set[str]) -> list[dict[str, object]]:
    out = copy.deepcopy(rungs)
    for rung in out:
        if rung.get("name") in plans:
            quota = rung.setdefault("quota", {})
            assert isinstance(quota, dict)
            quota["accelerator"] = 0
    return out


def running_on(kube: Kube) -> str:
    jobs = collect(kube, "default", JOB)
    found = jobs[0].concurrent if jobs else None
    return found.running_on if found is not None else "-"


def wait(what: str, predicate: Callable[[], bool], timeout: float) -> float:
    start = time.monotonic()
    print(f"[planb demo] waiting for {what} (up to {timeout:.0f} s) ...", flush=True)
    while time.monotonic() - start < timeout:
        if predicate():
            took = time.monotonic() - start
            print(f"[planb demo]   {what}: after {took:.1f} s", flush=True)
            return took
        time.sleep(0.5)
    raise DemoError(f"{what} did not happen within {timeout:.0f} s (see planb status)")


class Logs:
    """The resume lines of the job's runs, printed once each as the stand-in writes them."""

    def __init__(self, since: float) -> None:
        self.since = since
        self.seen: set[str] = set()

    def resumed(self) -> list[str]:
        lines = []
        for log in sorted(rayhead_settings.logs_dir().glob(f"default_{JOB}_*.log"), key=lambda p: p.stat().st_mtime):
            if log.stat().st_mtime < self.since:
                continue
            for line in log.read_text(errors="replace").splitlines():
                # A resumed run repeats the job's earlier resumes first ("earlier: ..."); each is counted once.
                if line.startswith("resumed from checkpoint step"):
                    lines.append(line.strip())
                    if line not in self.seen:
                        self.seen.add(line)
                        print(f"[planb demo]   train.py: {line.strip()}", flush=True)
        return lines


def checkpoints(directory: Path) -> list[int]:
    return sorted(int(p.name) for p in directory.glob("*") if p.is_dir() and p.name.isdigit())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubeconfig", type=Path, default=paths.local_kubeconfig())
    parser.add_argument("--profile", default="tpu-v6e-4x4")
    parser.add_argument("--checkpoint-every", type=int, default=200)
    args = parser.parse_args(argv)
    kube = Kube(args.kubeconfig)
    root = Path(tempfile.mkdtemp(prefix="planb-demo-checkpoints-"))
    ckpt = root / "default" / JOB  # the chart scopes checkpoints per release
    since = time.time()
    logs = Logs(since)
    full = ladder(args.kubeconfig)
    env = {**rayhead_settings.DEFAULT_RUN_ENV, "PLANB_RUNNER": "plain", "PLANB_LOG_EVERY": "1000"}
    try:
        rayhead_settings.set_payload(f"default/{JOB}", rayhead_settings.Payload(mode="run", env=env))
        # Only Spot has quota at first: Kueue v0.19.2 evicts the running variant as soon as a more preferred one
        # fits its quota, before that one's admission check (scheduler.go issueMigration), so DWS gets its quota
        # once the job has trained on Spot, and delivers 2 s after the request.
        capacity_settings.update(provisioning_delay_seconds=2.0)
        print("[planb demo] the reservation, on-demand and DWS are full (no quota); Spot has room", flush=True)
        set_ladder(args.kubeconfig, without_quota(full, {"reserved", "on-demand", "dws"}))
        helm(args.kubeconfig, "install", JOB, str(CHART), "-f", str(CHART / "values" / f"{args.profile}.yaml"),
             "--set", "job.ladderMode=concurrent", "--set", f"job.training.checkpointDir={root}",
             "--set", f"job.training.checkpointEvery={args.checkpoint_every}",
             "--set", "job.training.epochs=100000000")  # fmt: skip
        first = wait(f"{JOB} to start on spot", lambda: running_on(kube) == "spot", 60)
        wait("a checkpoint on spot", lambda: bool(checkpoints(ckpt)), 180)
        print("[planb demo] DWS has room again", flush=True)
        set_ladder(args.kubeconfig, without_quota(full, {"reserved", "on-demand"}))
        wait("migration 1: Kueue moves the job to dws", lambda: running_on(kube) == "dws", 180)
        wait("train.py to resume on dws", lambda: len(logs.resumed()) >= 1, 120)
        before = checkpoints(ckpt)[-1]
        wait("a checkpoint on dws", lambda: checkpoints(ckpt)[-1] > before, 180)
        latest = checkpoints(ckpt)[-1]
        # The run on the reservation ends 400 steps past the newest checkpoint.
        rayhead_settings.set_payload(
            f"default/{JOB}", rayhead_settings.Payload(mode="run", env={**env, "PLANB_EPOCHS": str(latest + 400)})
        )
        print("[planb demo] the reservation frees: its quota is back (on-demand stays full)", flush=True)
        set_ladder(args.kubeconfig, without_quota(full, {"on-demand"}))
        wait("migration 2: Kueue moves the job to the reservation", lambda: running_on(kube) == "reserved", 180)
        wait("train.py to resume on the reservation", lambda: len(logs.resumed()) >= 2, 120)
        rayjob = f"/apis/ray.io/v1/namespaces/default/rayjobs/{JOB}"
        wait(f"{JOB} to succeed on the reservation",
             lambda: ((kube.get(rayjob) or {}).get("status") or {}).get("jobStatus") == "SUCCEEDED", 300)  # fmt: skip
        # The job's timeline (planb status JOB --timeline) from the same look: written to .state/, both moves on it.
        picture = paths.REPO / ".state" / f"demo-concurrent-{JOB}.svg"
        picture.parent.mkdir(parents=True, exist_ok=True)
        picture.unlink(missing_ok=True)
        looked = subprocess.run([str(Path(sys.executable).parent / "planb"), "status", JOB, "--timeline", str(picture)],
                                check=False, capture_output=True, text=True)  # fmt: skip
        shown = looked.stdout
        print(shown, flush=True)
        drawn = picture.read_text().replace("&gt;", ">") if picture.is_file() else ""
        if not all(f"move {i}: {m}" in drawn for i, m in enumerate(("spot -> dws", "dws -> reserved"), 1)):
            raise DemoError(f"the timeline {picture} does not show both migrations {looked.stderr.strip()}")
        moves = [line.split(": ", 1)[1] for line in shown.splitlines() if line.strip().startswith("migrated at ")]
        if [m.split(" (")[0] for m in moves] != ["spot -> dws", "dws -> reserved"]:
            raise DemoError(f"planb status shows the migrations {moves}, not spot -> dws -> reserved")
        # No step lost: Kueue's eviction reaches train.py as SIGTERM (KubeRay deletes the variant's pods),
        # and train.py saves at the next step boundary; only the step in flight when the signal came may be lost.
        resumed = logs.resumed()
        lost = [int(line.split("; ")[1].split()[0]) for line in resumed]
        if len(lost) < 2 or max(lost) > 1:
            raise DemoError(f"train.py's resumes lost more than the step in flight: {resumed}")
        if "goodput" not in shown:
            raise DemoError("planb status shows no goodput for the job")
        print(f"[planb demo] started on spot after {first:.1f} s; 2 migrations (spot -> dws -> reserved); "
              f"{len(resumed)} resumes from checkpoint, {sum(lost)} step(s) lost", flush=True)  # fmt: skip
        print(f"[planb demo] timeline of {JOB}: {picture}", flush=True)
    except DemoError as exc:
        print(f"demo FAILED: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
