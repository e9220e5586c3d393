"""A preempted Spot node's Ray worker pods, terminated as GKE's kubelet does, for the payloads this machine runs.

GKE. When Compute Engine reclaims a Spot VM, GKE gets a preemption notice and the VM shuts down 30 seconds later;
the kubelet's graceful node shutdown gives the node's pods "the first 15 seconds" of it and critical system pods the
last 15 (https://cloud.google.com/kubernetes-engine/docs/concepts/spot-vms, "Termination and graceful shutdown of
Spot VMs"; "Specifying a value greater than 15 seconds in terminationGracePeriodSeconds has no effect",
https://cloud.google.com/kubernetes-engine/docs/how-to/preemptible-vms, the same section). The kubelet terminates a
pod as it always does, within that grace period: each container's preStop hook runs first, then the container gets
SIGTERM, then SIGKILL when the grace period is over
(https://kubernetes.io/docs/concepts/containers/container-lifecycle-hooks/,
https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination; graceful node shutdown:
https://kubernetes.io/docs/concepts/cluster-administration/node-shutdown/). Only the pods of the reclaimed VMs are
told: a RayJob's head and its submitter run on the CPU pool (charts/planb/templates/rayjob.yaml) and get nothing.
The chart's worker hook creates ``$PLANB_NOTICE_FILE`` in the pod's own emptyDir and waits, a second at a time,
for ``<file>.saved`` (at most the grace period less 5 s), so that SIGTERM comes after the workers' save
(training/planb_train/loop.py, ``StopNotice``).

Here. The capacity simulator gives the notice (planb.local.capacity.spot: the node cordoned and stamped with
``NOTICE_ANNOTATION`` and its time) and ends the VM after the pool's notice period (its pods Failed, then deleted,
which fails the head's running jobs: ``RayHeads.check_workers``). KWOK's pods run nothing, so the stand-in does the
kubelet's part in between, once per worker pod of a RayCluster whose head runs a ``run`` payload on this machine,
counted from the notice's time:

1. the chart's preStop hook: the notice file is created where the pod's ``PLANB_NOTICE_FILE`` lies on this host,
   then the stand-in looks for ``<file>.saved`` once a second, until it appears or the grace period is over;
2. SIGTERM to the worker's processes: the payload's Ray Train workers. Each Ray actor runs in a process of its own
   (https://docs.ray.io/en/latest/ray-core/actors.html), which Ray titles ``ray::<its class>``
   (ray-project/ray python/ray/_raylet.pyx, execute_task: ``next_title = f"ray::{class_name}"``), and Ray Train
   v2's worker actor is ``RayTrainWorker`` (python/ray/train/v2/_internal/execution/worker_group/worker.py); Ray
   starts them in the driver's session, which is the payload's own (planb.local.rayhead.jobs). A Ray worker ends on
   SIGTERM (python/ray/_private/worker.py, ``Worker.main_loop``'s handler);
3. SIGKILL to those still running when the grace period is over.

The payload's own process (the Ray driver, on the head), Ray's processes of the head (its GCS, raylet and the Train
controller) and the submitter are never signalled.

Where this differs from GKE, and why:

* The hook's command is not run: no shell from the cluster runs on this machine (planb's policy for ``run``
  payloads, planb.local.rayhead.launch). The stand-in does what the chart's hook does, for a preStop hook that
  names ``$PLANB_NOTICE_FILE`` and a container whose ``env`` gives it under an emptyDir; any other hook does nothing.
* One notice directory for every pod: the head's driver and its Ray workers are processes of this one machine, and
  the workers read the path the driver gives them (train.py hands its whole config, PLANB_NOTICE_FILE included, to
  every worker), which is the launch's own emptyDir directory (planb.local.rayhead.launch), not one per pod. So a
  notice to some worker pods reaches every worker, and the first ``<file>.saved`` ends every pod's wait. With
  several independent replicas (Ray workers on CPU, one JAX process each) only worker 0 saves and the others
  acknowledge at once, which would end the waits before worker 0's save is committed: a local run gives the slice
  one Ray worker (tests/e2e/topologies/test_ladder.py sets PLANB_NUM_WORKERS=1).
* Which worker process is which pod's is not known (Ray places them all on this host, not one per pod): SIGTERM
  goes to every Ray Train worker of the payload once a noticed pod's hook has ended.
* The plain runner (PLANB_RUNNER=plain) trains in the driver's own process: there is no worker process to signal.
  That process reads the notice file, as the Ray workers do, and stops on it.
* The grace period is the pod's ``terminationGracePeriodSeconds`` cut to GKE's default 15 s for non-system pods; a
  pool that extends the shutdown to 120 s gives them 105 s on GKE (planb.catalog.versions.spot_shutdown_seconds),
  which the stand-in does not read. The VM may also end sooner: the simulator's ``spot_notice_seconds`` shortens it
  so that tests need not wait, and what is left then goes with the pods (``RayHeads.check_workers``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from planb.kube import Obj
from planb.local.capacity.spot import noticed_at
from planb.local.informer import Informer
from planb.local.process import is_alive, start_time
from planb.local.rayhead.heads import RayHeads, log
from planb.local.rayhead.jobs import RUNNING, RayJobRecord
from planb.local.rayhead.launch import Launch, LaunchRefusedError, inside
from planb.local.rayhead.pods import controller_of, running

#: GKE's share of a Spot VM's 30 s shutdown for non-system pods (the module's doc).
NON_SYSTEM_POD_SECONDS = 15.0
#: A pod's terminationGracePeriodSeconds when its spec gives none (the API server's default).
DEFAULT_GRACE_SECONDS = 30.0
#: The chart's hook looks for ``<file>.saved`` this often (``sleep 1``).
HOOK_POLL_SECONDS = 1.0
#: The kubelet's one-off extension for a preStop hook still running when the grace period ends (pod-lifecycle page).
HOOK_EXTENSION_SECONDS = 2.0
#: The variable the chart's worker hook and train.py share: the stop-notice file.
NOTICE_ENV = "PLANB_NOTICE_FILE"
#: The process title Ray gives a Ray Train v2 worker actor.
RAY_TRAIN_WORKER = "ray::RayTrainWorker"


def hook_notice_file(pod: Obj, launch: Launch) -> tuple[Path | None, str]:
    """Where the chart's preStop hook of `pod` would create its notice file, on this host: (the path, '') or (None,
    why the stand-in does nothing for the pod's hook). The path is the pod's ``PLANB_NOTICE_FILE`` under one of its
    emptyDir mounts, mapped onto the launch's directory for the same mountPath; a path that leaves it is refused."""
    spec = pod.get("spec") or {}
    volumes = {v.get("name"): v for v in spec.get("volumes") or []}
    for container in spec.get("containers") or []:
        hook = ((container.get("lifecycle") or {}).get("preStop") or {}).get("exec") or {}
        command = " ".join(str(part) for part in hook.get("command") or [])
        if not command:
            continue
        if f"${NOTICE_ENV}" not in command and f"${{{NOTICE_ENV}}}" not in command:
            return None, f"its preStop hook names no ${NOTICE_ENV}; KWOK runs no hook and the stand-in runs none"
        value = next((str(e.get("value") or "") for e in container.get("env") or [] if e.get("name") == NOTICE_ENV), "")
        if not value.startswith("/"):
            return None, f"its container sets no absolute {NOTICE_ENV}"
        mounts = [
            str(m["mountPath"]).rstrip("/")
            for m in container.get("volumeMounts") or []
            if m.get("mountPath") and "emptyDir" in (volumes.get(m.get("name")) or {})
        ]
        under = [m for m in mounts if value.startswith(m + "/")]
        if not under:
            return None, f"its {NOTICE_ENV} {value!r} is under none of its emptyDir volumes"
        mount = max(under, key=len)
        local = next((d for path, d in launch.empty_dirs.items() if path.rstrip("/") == mount), None)
        if local is None:
            return None, f"the head's launch has no emptyDir at {mount}, where its {NOTICE_ENV} lies"
        try:
            return inside(local, str(PurePosixPath(value).relative_to(mount)), f"the notice file {NOTICE_ENV}"), ""
        except LaunchRefusedError as exc:
            return None, str(exc)
    return None, "no container of it has a preStop hook"


def ray_train_workers(session: int) -> list[int]:
    """The Ray Train worker processes of the session `session` leads (a payload's: it starts in a session of its own,
    and Ray starts its processes in the driver's)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            title = (proc / "cmdline").read_bytes().split(b"\0", 1)[0].decode(errors="replace")
            in_session = os.getsid(int(proc.name)) == session
        except OSError:
            continue
        if in_session and title.startswith(RAY_TRAIN_WORKER):
            found.append(int(proc.name))
    return sorted(found)


class NodeShutdown:
    """Watches the nodes; each Running worker pod on a noticed node is terminated once, in a thread of its own."""

    def __init__(self, heads: RayHeads, clock: Callable[[], float] = time.time) -> None:
        self.heads = heads
        self.clock = clock
        self.lock = threading.Lock()
        #: Worker pods (uid) whose termination began.
        self.begun: set[str] = set()
        #: Processes signalled, (pid, its start time) -> the deadline of its grace period.
        self.signalled: dict[tuple[int, str], float] = {}
        self.nodes = Informer(heads.watch_kube, "/api/v1/nodes", on_change=self.reconcile, log=log)
        heads.listeners.append(lambda _pods: self.reconcile())

    def start(self) -> NodeShutdown:
        self.nodes.start()
        return self

    def reconcile(self) -> None:
        for record, pod, at in self.due():
            name = f"shutdown {pod['metadata']['name']}"
            threading.Thread(target=self.terminate, args=(record, pod, at), name=name, daemon=True).start()

    def due(self) -> list[tuple[RayJobRecord, Obj, float]]:
        """The worker pods to terminate now, each with the running payload it stands beside and its node's notice
        time: Running worker pods, of a head whose job table runs a `run` payload, on a node with a preemption notice,
        not taken before (each is taken once)."""
        noticed = {
            str(node["metadata"]["name"]): at for node in self.nodes.snapshot() if (at := noticed_at(node)) is not None
        }
        pods = self.heads.pods.snapshot()
        by_uid = {p["metadata"]["uid"]: p for p in pods}
        with self.heads.lock:
            tables = list(self.heads.tables.items())
        due: list[tuple[RayJobRecord, Obj, float]] = []
        with self.lock:
            self.begun &= set(by_uid)
            if not noticed:
                return due
            for head_uid, table in tables:
                records = [r for r in table.list() if r.status == RUNNING and r.process and r.launch]
                if not records:
                    continue
                cluster_uid = str(controller_of(by_uid.get(head_uid) or {}).get("uid") or "")
                for uid, pod in self.heads.workers_of(table, pods, cluster_uid).items():
                    node = str((pod.get("spec") or {}).get("nodeName") or "")
                    if node in noticed and running(pod) and uid not in self.begun:
                        self.begun.add(uid)
                        due += [(record, pod, noticed[node]) for record in records]
        return due

    def terminate(self, record: RayJobRecord, pod: Obj, at: float) -> None:
        """The kubelet's termination of `pod` from the notice at `at`: the hook, SIGTERM, SIGKILL (the module's doc)."""
        assert record.process is not None and record.launch is not None
        meta = pod["metadata"]
        name, uid = f"pod {meta['namespace']}/{meta['name']}", str(meta["uid"])
        grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
        deadline = at + min(DEFAULT_GRACE_SECONDS if grace is None else float(grace), NON_SYSTEM_POD_SECONDS)
        notice, why = hook_notice_file(pod, record.launch)
        if notice is None:
            log(f"{name}: Spot preemption notice; nothing done for its preStop hook: {why}")
        else:
            with contextlib.suppress(FileExistsError):  # as `touch`: made if missing, never followed if a link
                os.close(os.open(notice, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
            log(f"{name}: Spot preemption notice; its preStop hook created {notice} and waits for {notice.name}.saved")
            saved = Path(f"{notice}.saved")
            while not saved.exists() and self.clock() < deadline and self.heads.pod_exists(uid):
                time.sleep(HOOK_POLL_SECONDS)
            if not self.heads.pod_exists(uid):
                log(f"{name}: gone before its preStop hook ended (the VM's end); nothing more is sent")
                return
            ended = "found" if saved.exists() else "not found by the end of the grace period"
            log(f"{name}: preStop hook ended, {saved.name} {ended}")
        if self.clock() >= deadline:
            deadline = self.clock() + HOOK_EXTENSION_SECONDS
        self.stop(name, record, deadline)

    def stop(self, name: str, record: RayJobRecord, deadline: float) -> None:
        """SIGTERM to the payload's Ray Train workers not yet signalled; SIGKILL at `deadline` to those still there."""
        assert record.process is not None
        if record.process.returncode is not None:  # reaped: its session's pid may be another's by now
            log(f"{name}: SIGTERM to no process: the payload has ended (exit {record.process.returncode})")
            return
        mine: list[tuple[int, str]] = []
        with self.lock:
            for pid in ray_train_workers(record.process.pid):
                key = (pid, start_time(pid))
                if key[1] and key not in self.signalled:
                    self.signalled[key] = deadline
                    mine.append(key)
        for pid, _ in mine:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGTERM)
        if mine:
            log(f"{name}: SIGTERM to the payload's Ray Train worker process(es) {', '.join(str(p) for p, _ in mine)}")
        else:
            log(f"{name}: SIGTERM to no process: no Ray Train worker of the payload runs (or each was signalled)")
        time.sleep(max(0.0, deadline - self.clock()))
        for pid, started in mine:
            if is_alive(pid) and start_time(pid) == started:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
                log(f"{name}: SIGKILL to Ray Train worker process {pid}, still running at the end of the grace period")
