"""One job's race across local regions (docs/regions.md, "What runs today"): each region's DWS switches, where the job
runs, what the losers said, the nominations and ProvisioningRequests seen, and that nothing of it is left after its
uninstall. The regions and advice demos (hack/demo_regions.py, hack/demo_advice.py) and the e2e regions topology
(tests/support/e2e/regions_topology.py) run it. With advice-ordered dispatch (`planb regions keep --dispatch`, started
by `keep`) the manager's GKE emulator is the keeper's Compute Engine endpoint; the job's shape is a TPU one, which
Google gives no advice for and the keeper asks none (`ask_tpu_advice` shows the emulator's answer, `advice_asked` that
the keeper sent nothing), so its ledger orders the regions.

One site.yml run on inventories/regions converges every region, each with a ladder of DWS alone (docs/regions.md,
option C: a dispatched copy is admitted only once its ProvisioningRequest is provisioned), and then the manager.
A stocked-out region is a DWS request delay longer than any run (the capacity simulator's model of a queued request
waiting for resources, planb.local.capacity.dws); a failing one is `planb local capacity set --fail`
(QueuingInfeasibleNoCapacity).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planb import paths
from planb.catalog import profiles
from planb.kube import Kube, KubeError
from planb.local import loopback
from planb.local.regions import Member, RegionsError
from planb.local.statefile import open_private, write_atomic
from planb.regions.dispatcher.google_advice import capacity_request, http_post
from planb.regions.dispatcher.ledger import Key
from planb.regions.dispatcher.nomination import advice_zones

JOB = "job-1"
CHART = paths.REPO / "charts" / "planb"
#: The manager and the regions, each with its ladder: DWS alone, the capacity-backed rung a dispatched copy may take
#: (docs/regions.md, option C).
INVENTORY = paths.REPO / "inventories" / "regions"
#: A DWS request in a stocked-out region waits for resources for longer than any run.
STOCKED_OUT = 100000.0
#: The switches of a region that never grants, and of one whose request fails.
NEVER = ("--delay", str(STOCKED_OUT))
FAILS = ("--fail",)
WORKLOADS = "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads"
REQUESTS = "/apis/autoscaling.x-k8s.io/v1/namespaces/default/provisioningrequests"
RAYJOB = f"/apis/ray.io/v1/namespaces/default/rayjobs/{JOB}"
#: The losing regions' copies and requests go within this many seconds of the win (docs/regions.md's target), and
#: nothing of the job is left anywhere this long after its uninstall.
GONE_WITHIN = 30.0
CLEAN_WITHIN = 60.0
#: The inventory's profile (every region's ladder: DWS alone) and the job's shape as the keeper's ledger keys it.
PROFILE = profiles.get("tpu-v6e-4x4")
SHAPE = f"{PROFILE.machine_type}:{PROFILE.hosts_per_slice}"
#: What the keeper's advice requests name locally (`planb regions keep --project`): the emulator answers any project.
PROJECT = "planb-local"


def _run(command: list[str], env: Mapping[str, str] | None = None, log: Path | None = None) -> str:
    done = subprocess.run(
        command, env={**os.environ, **(env or {})}, cwd=paths.REPO, capture_output=True, text=True, check=False
    )
    if log:
        write_atomic(log, done.stdout + done.stderr)  # 0600: a playbook's output is this user's alone
    if done.returncode != 0:
        raise RegionsError(
            f"{' '.join(command[:3])} ... failed (exit {done.returncode}):\n{(done.stdout + done.stderr)[-3000:]}"
        )
    return done.stdout


def _playbook() -> str:
    return str(Path(sys.executable).parent / "ansible-playbook")


def worker_kubeconfig(member: Member) -> Path:
    """The region's cluster kubeconfig site.yml wrote (local mode: planb_state_dir/gke/<cluster>.kubeconfig)."""
    return member.state / "gke" / "tpu-cluster.kubeconfig"


def converge(
    workers: Iterable[Member], manager_state: Path | None = None, log: Path | None = None, extra: Iterable[str] = ()
) -> float:
    """site.yml on inventories/regions, limited to the manager and `workers`: every region's cluster, ladder (DWS
    alone) and Kueue, side by side, then the manager's cluster, Kueue and MultiKueue; seconds it took. The manager is
    the stack of <state>/regions/manager, or the caller's own (the e2e stack: `manager_state` names its state root,
    and its ports are this process's PLANB_PORT_OFFSET); `extra`: more arguments, such as
    `-e planb_multikueue_dispatcher=planb.dev/advice-ordered`."""
    start = time.monotonic()
    limit = ",".join(["manager", *(m.name for m in workers)])
    env: dict[str, str] = {}
    if manager_state:
        env = {"PLANB_MANAGER_STATE_DIR": str(manager_state), "PLANB_MANAGER_PORT_OFFSET": str(loopback.offset())}
    _run([_playbook(), "site.yml", "-i", str(INVENTORY), "--limit", limit, *extra], env, log)
    return time.monotonic() - start


def set_dws(member: Member, switches: Iterable[str]) -> None:
    """The region's DWS pool switches, from clear (`planb local capacity set --pool dws-pool --clear ...`)."""
    cli = [sys.executable, "-m", "planb.cli", "local", "capacity", "set", "--pool", "dws-pool", "--clear", *switches]
    _run(cli, member.env())


def ask_tpu_advice(emulator: str, region: str) -> tuple[int, dict[str, Any]]:
    """Compute Engine's advice.capacity at `emulator`, asked about the job's TPU shape in `region` as planb's keeper
    would ask about a GPU one (planb.regions.dispatcher.google_advice.capacity_request, DWS's FLEX_START): the
    answer's status and body. Google's page says "When you send a request to the advice.capacity API, you can't view the
    availability of TPUs" (https://cloud.google.com/compute/docs/instances/view-vm-availability, "Limitations"); the
    emulator answers no recommendation (planb.local.gke_emulator.advice), and the keeper sends no such request."""
    key = Key(region, "dws", SHAPE)
    path = f"/compute/v1/projects/{PROJECT}/regions/{region}/advice/capacity"
    return http_post(emulator)(
        path, capacity_request(key, advice_zones(key), PROFILE.machine_type, PROFILE.hosts_per_slice)
    )


def advice_asked(emulator: str) -> list[str]:
    """The advice.capacity requests the GKE emulator at `emulator` has served, oldest first (its request log,
    ``GET /planb/v1/requests``): what shows that the keeper asked nothing for a TPU shape."""
    with urllib.request.urlopen(emulator.rstrip("/") + "/planb/v1/requests", timeout=10) as answer:
        served = json.load(answer)["requests"]
    return [str(r["path"]) for r in served if str(r.get("path", "")).endswith("/advice/capacity")]


def keep(manager_kubeconfig: Path, log: Path, *args: str) -> subprocess.Popen[bytes]:
    """`planb regions keep` against the manager, as an operator runs it beside it, with `args` (`--dispatch`, ...);
    its output appended to `log`. The caller stops it (terminate, wait)."""
    command = [sys.executable, "-m", "planb.cli", "regions", "keep", "--kubeconfig", str(manager_kubeconfig), *args]
    with open_private(log, "ab") as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=paths.REPO)


def capacity_status(manager_kubeconfig: Path) -> str:
    """`planb status --capacity` on the manager: the keeper's ledger and the last advice it used."""
    done = subprocess.run(
        [sys.executable, "-m", "planb.cli", "status", "--capacity"],
        env={**os.environ, "KUBECONFIG": str(manager_kubeconfig)},
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout + done.stderr


def copies(kube: Kube) -> list[dict[str, Any]]:
    return [w for w in kube.items(WORKLOADS) if w["metadata"]["name"].startswith(f"rayjob-{JOB}-")]


def requests(kube: Kube) -> list[dict[str, Any]]:
    try:
        return [r for r in kube.items(REQUESTS) if f"-{JOB}-" in r["metadata"]["name"]]
    except KubeError:
        return []


def region_line(manager_kubeconfig: Path) -> str:
    """`planb status`'s REGION line for the job, as a developer on the manager sees it."""
    done = subprocess.run(
        [sys.executable, "-m", "planb.cli", "status"],
        env={**os.environ, "KUBECONFIG": str(manager_kubeconfig)},
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith(f"REGION default/{JOB}:")]
    return lines[0].split(": ", 1)[1] if lines else f"(no REGION line; planb status said: {done.stdout[-300:]!r})"


@dataclass
class Race:
    """What one race showed: the region the manager's Workload names, when the RayJob ran, when the losers' copies
    and requests were gone, each region's last DWS check message, `planb status`'s REGION line (while racing and at
    the end), each nomination the manager's Workload held in turn, and the ProvisioningRequests seen per region."""

    winner: str = ""
    running_after: float | None = None
    gone_after: float | None = None
    last_word: dict[str, str] = field(default_factory=dict)
    racing_line: str = ""
    status_line: str = ""
    nominations: list[list[str]] = field(default_factory=list)
    asked: dict[str, set[str]] = field(default_factory=dict)

    @property
    def requests_made(self) -> int:
        """ProvisioningRequests made in every region together (a retry's is another)."""
        return sum(len(names) for names in self.asked.values())


def race(
    manager_kubeconfig: Path,
    workers: list[Member],
    switches: Mapping[str, Iterable[str]],
    watch_for: float,
    progress: Callable[[str], None] = lambda _msg: None,
    values: Sequence[str] = (),
) -> Race:
    """Set each region's DWS switches, `helm install` the job on the manager with the unchanged chart (and `values`,
    each a `--set` of it), and watch for up to `watch_for` seconds where it runs; then wait up to GONE_WITHIN for the
    losers' copies and requests to go. The job stays installed: `uninstall` is the caller's next step."""
    for member in workers:
        set_dws(member, switches[member.name])
    boss = Kube(manager_kubeconfig)
    kubes = {m.name: Kube(worker_kubeconfig(m)) for m in workers}
    submitted = time.monotonic()
    sets = [arg for value in values for arg in ("--set", value)]
    _run([str(paths.tool("helm")), "--kubeconfig", str(manager_kubeconfig), "install", JOB, str(CHART), *sets])
    out = Race()
    won_at = None
    while time.monotonic() < submitted + watch_for and out.running_after is None:
        for name, kube in kubes.items():
            for copy in copies(kube):
                for check in copy.get("status", {}).get("admissionChecks", []):
                    out.last_word[name] = check.get("message", "")
            out.asked.setdefault(name, set()).update(r["metadata"]["name"] for r in requests(kube))
        for workload in copies(boss):
            out.winner = workload.get("status", {}).get("clusterName", "") or out.winner
            nominated = workload.get("status", {}).get("nominatedClusterNames") or []
            if nominated and out.nominations[-1:] != [nominated]:
                out.nominations.append(nominated)
        if out.winner and won_at is None:
            won_at = time.monotonic()
        if not out.racing_line and (out.winner or time.monotonic() > submitted + watch_for / 2):
            out.racing_line = region_line(manager_kubeconfig)
            progress(f"while they race, planb status on the manager says: {out.racing_line}")
        job = boss.get(RAYJOB) or {}
        if job.get("status", {}).get("jobDeploymentStatus") == "Running":
            out.running_after = time.monotonic() - submitted
        time.sleep(0.2)
    if won_at is not None:
        while time.monotonic() < won_at + GONE_WITHIN:
            if not [n for n, k in kubes.items() if n != out.winner and (copies(k) or requests(k))]:
                out.gone_after = time.monotonic() - won_at
                break
            time.sleep(0.2)
    out.status_line = region_line(manager_kubeconfig)
    return out


def uninstall(manager_kubeconfig: Path, workers: list[Member]) -> float:
    """`helm uninstall` the job on the manager; seconds until no Workload, RayJob or ProvisioningRequest of it is
    left on the manager or in any region (Kueue's MultiKueue deletes the copies: docs/regions.md, section 4)."""
    _run([str(paths.tool("helm")), "--kubeconfig", str(manager_kubeconfig), "uninstall", JOB, "--wait"])
    boss = Kube(manager_kubeconfig)
    kubes = [Kube(worker_kubeconfig(m)) for m in workers]
    start = time.monotonic()
    while time.monotonic() < start + CLEAN_WITHIN:
        if not copies(boss) and not any(copies(k) or requests(k) or k.get(RAYJOB) for k in kubes):
            return time.monotonic() - start
        time.sleep(0.2)
    raise RegionsError(
        f"{JOB} left Workloads, RayJobs or ProvisioningRequests behind {CLEAN_WITHIN:.0f} s after its uninstall"
    )
