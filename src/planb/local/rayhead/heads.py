"""Head tracking for the Ray head stand-in: which RayCluster heads run, their job tables and tokens.

A head's job table (planb.local.rayhead.jobs) exists while its head pod runs; when the pod goes (suspend, eviction,
the job's end) its running jobs die with it, as on a Ray head without GCS fault tolerance. A worker pod of the
head's cluster (its controller the RayCluster, by uid) that ran and is gone fails the head's running jobs
(``RayHeads.check_workers``). A RayCluster
with ``authOptions`` mode token has its token in KubeRay's Secret; the REST API (planb.local.rayhead.server) checks
it. Submitting a job to a head (from the REST API or a submitter pod, planb.local.rayhead.submitter) records it in
the head's table and, for payloads set to run (``planb local rayhead set --run``), launches the entrypoint as a host
process with the ConfigMap volumes and environment of the RayJob's own head template
(spec.rayClusterSpec.headGroupSpec.template; never the RayCluster's, which KubeRay adopts by name and never reverts
edits to, nor the head pod's own spec, `chain.head_template`), when
planb.local.rayhead.launch accepts it; a refused one ends FAILED with the refusal as its message.

Only the chain KubeRay itself made (RayJob → its RayCluster → that cluster's head pod) is acted for:
planb.local.rayhead.chain checks each link and says why the stand-in acts for nothing else (planb's policy).
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from planb import paths
from planb.errors import PlanbError
from planb.kube import Kube, Obj
from planb.local.informer import Informer
from planb.local.rayhead import settings as settings_mod
from planb.local.rayhead.api_names import api_name, refusal
from planb.local.rayhead.chain import ChainRefusedError, Maker, cluster_name, head_refusal, head_template, maker_of
from planb.local.rayhead.jobs import JobTable, RayJobRecord
from planb.local.rayhead.launch import Launch, LaunchRefusedError, empty_dirs, launch_for, write_config_map
from planb.local.rayhead.pods import controller_of, matches, running
from planb.local.rayhead.reads import ObjectReads


class MissingTokenError(PlanbError):
    """A RayCluster with token auth whose token Secret is missing or empty."""


def runtime_env_of(rayjob: Obj) -> dict[str, Any]:
    """A RayJob's spec.runtimeEnvYAML as a mapping ({} without one): the only runtime env its jobs get."""
    found = yaml.safe_load((rayjob.get("spec") or {}).get("runtimeEnvYAML") or "") or {}
    return dict(found) if isinstance(found, dict) else {}


def log(msg: str) -> None:
    print(f"[rayhead] {msg}", flush=True)


class RayHeads:
    """Every head pod's job table, and the Kubernetes reads behind them."""

    def __init__(self, kube: Kube, state_dir: Path | None = None, watch_kube: Kube | None = None) -> None:
        self.kube = kube
        self.state_dir = state_dir or paths.state_dir()
        self.tables: dict[str, JobTable] = {}  # head pod uid -> its jobs
        self.lock = threading.Lock()
        #: Called after each reconcile with the same pod snapshot (the submitter pods' scan, rayhead.submitter).
        self.listeners: list[Callable[[list[Obj]], None]] = []
        self.watch_kube = watch_kube or kube  # the client the watches hold their connections on
        self.pods = Informer(self.watch_kube, "/api/v1/pods", on_change=self.reconcile, log=log)
        self.reads = ObjectReads(kube, self.watch_kube, log)

    def start(self) -> None:
        self.reads.start()
        self.pods.start()

    # ------------------------------------------------------------------ heads
    def head_pod(self, namespace: str, service: str) -> Obj | None:
        """The running head pod behind a head service (None when the service, its RayCluster's head or that pod is
        missing or not running yet): the pod its RayCluster's ``status.head.podName`` names, the RayCluster being
        the one the service selects (``ray.io/cluster``). A `ChainRefusedError` naming each mismatch when that pod
        is not the RayCluster's head (its labels, its controller), or when pods match the service's selector but
        the RayCluster's status names none of them. Service and RayCluster come from the watches (rayhead.reads);
        when they give no head, both are read again from the API server."""
        try:
            head = self._head_pod(namespace, service, cached=True)
        except ChainRefusedError:
            head = None
        return head if head is not None else self._head_pod(namespace, service, cached=False)

    def _head_pod(self, namespace: str, service: str, cached: bool) -> Obj | None:
        svc = self.reads.service(namespace, service, cached)
        selector = ((svc or {}).get("spec") or {}).get("selector") or {}
        if not selector:
            return None
        cluster = str(selector.get("ray.io/cluster") or "")
        rc = (self.reads.cluster(namespace, cluster, cached) if cluster else None) or {}
        named = str(((rc.get("status") or {}).get("head") or {}).get("podName") or "")
        candidates = [p for p in self.pods.snapshot() if matches(p, namespace, selector) and running(p)]
        head = next((p for p in candidates if (p.get("metadata") or {}).get("name") == named), None) if named else None
        if head is not None:
            why = head_refusal(head, rc)
            if not why:
                return head
            refusals = [why]
        else:
            whose = f"RayCluster {cluster or '(none)'}'s status.head.podName names ({named or 'none yet'})"
            names = [str((p.get("metadata") or {}).get("name")) for p in candidates]
            refusals = [f"pod {namespace}/{name} is not the head {whose}" for name in names]
        if refusals:
            raise ChainRefusedError(
                f"planb's policy: no pod behind service {namespace}/{service} is a Ray head KubeRay made, because a "
                f"run payload executes on this machine: {'; '.join(refusals)}"
            )
        return None

    def table_for(self, head: Obj) -> JobTable:
        meta = head["metadata"]
        with self.lock:
            table = self.tables.get(meta["uid"])
            if table is None:
                table = JobTable(f"{meta['namespace']}/{meta['name']}", log, settings_mod.payloads_dir(self.state_dir))
                table.cluster = (str(meta["namespace"]), self.cluster_name(head))
                self.tables[meta["uid"]] = table
            return table

    def cluster_name(self, head: Obj) -> str:
        return cluster_name(head)

    def auth_token(self, namespace: str, cluster: str) -> str | None:
        """The RayCluster's token when its authOptions mode is token (KubeRay's Secret, key auth_token);
        None when the cluster has no token auth. A MissingTokenError when the mode is token but the Secret or its
        key is missing or empty: no request can then be checked, so none is answered. The RayCluster comes from its
        watch (planb.local.rayhead.reads), the Secret by GET: the stand-in keeps no copy of any Secret."""
        rc = self.reads.cluster(namespace, cluster) or {}
        auth = (rc.get("spec") or {}).get("authOptions") or {}
        if auth.get("mode") != "token":
            return None
        name = auth.get("secretName") or cluster
        quoted = api_name(name)
        if quoted is None:
            why = refusal(f"RayCluster {namespace}/{cluster}'s authOptions token Secret", name)
            log(why)
            raise MissingTokenError(f"{why}; no request to its head is answered")
        secret = self.kube.get(f"/api/v1/namespaces/{namespace}/secrets/{quoted}") or {}
        raw = (secret.get("data") or {}).get("auth_token", "")
        token = base64.b64decode(raw).decode() if raw else ""
        if not token:
            raise MissingTokenError(
                f"the RayCluster {namespace}/{cluster} has token auth but its Secret {name} holds no "
                "auth_token (yet): KubeRay creates it with the cluster"
            )
        return token

    def maker(self, namespace: str, cluster: str) -> Maker:
        """The RayJob that made the RayCluster, read now (planb.local.rayhead.chain)."""
        return maker_of(self.kube, namespace, cluster)

    # ------------------------------------------------------------------ submitting
    def payload_for(self, namespace: str, rayjob: str) -> settings_mod.Payload:
        return settings_mod.load(self.state_dir).payload_for(namespace, rayjob)

    def submit(
        self, head: Obj, rayjob: str, submission_id: str, entrypoint: str, runtime_env: dict[str, Any]
    ) -> tuple[RayJobRecord, bool]:
        namespace = head["metadata"]["namespace"]
        payload = self.payload_for(namespace, rayjob)
        name = settings_mod.SAFE_NAME.sub("_", f"{namespace}_{rayjob}_{submission_id}")
        log_file = settings_mod.logs_dir(self.state_dir) / f"{name}.log"
        record = RayJobRecord(
            submission_id=submission_id, entrypoint=entrypoint, log_file=log_file, runtime_env=runtime_env
        )
        launch, refused = None, ""
        if payload.mode == "run":
            try:
                launch = self.launch(head, rayjob, entrypoint, runtime_env, payload)
            except LaunchRefusedError as exc:
                refused = str(exc)
                log(f"job {submission_id} of RayJob {namespace}/{rayjob} runs nothing: {refused}")
        table = self.table_for(head)
        job, new = table.submit(record, payload, launch, refused)
        if new:
            log(f"{table.head}: job {submission_id} of RayJob {namespace}/{rayjob} submitted ({payload.mode})")
        return job, new

    def launch(
        self, head: Obj, rayjob: str, entrypoint: str, runtime_env: dict[str, Any], payload: settings_mod.Payload
    ) -> Launch:
        """The entrypoint as a host process (planb.local.rayhead.launch says what is accepted): the ConfigMap volumes
        of the head's template (`head_template`) and the payload's image folders written to the RayJob's work directory,
        each emptyDir a new private directory there, its container's literal environment, the runtime env's env_vars
        and the payload's overrides."""
        namespace = head["metadata"]["namespace"]
        spec = head_template(self.kube, head, rayjob).get("spec") or {}
        container = (spec.get("containers") or [{}])[0]
        workdir = settings_mod.work_dir(namespace, rayjob, self.state_dir)
        workdir.mkdir(mode=0o700, parents=True, exist_ok=True)
        volumes = {v.get("name"): v for v in spec.get("volumes") or []}
        emptied = empty_dirs(workdir, container, volumes)
        mounts = dict(emptied)
        files: set[Path] = set()
        sources = [
            (m, (volumes.get(m.get("name")) or {}).get("configMap")) for m in container.get("volumeMounts") or []
        ]
        for source in [s for _, s in sources if s and api_name(s.get("name")) is None]:
            raise LaunchRefusedError(
                refusal(f"RayJob {namespace}/{rayjob}'s head template's ConfigMap volume", source.get("name"))
            )
        for mount, source in sources:
            if not source:
                continue
            cm = self.kube.get(f"/api/v1/namespaces/{namespace}/configmaps/{api_name(source.get('name'))}") or {}
            local, written = write_config_map(
                workdir, str(mount.get("mountPath") or ""), cm.get("data") or {}, source.get("items")
            )
            mounts[str(mount.get("mountPath") or "")] = local
            files |= written
        container_env = {
            str(e["name"]): str(e["value"]) for e in container.get("env") or [] if "name" in e and "value" in e
        }
        env_vars = {str(k): str(v) for k, v in (runtime_env.get("env_vars") or {}).items()}
        launch = launch_for(entrypoint, mounts, container_env, env_vars, payload.env, workdir, files, payload.image)
        launch.empty_dirs = dict(emptied)
        return launch

    # ------------------------------------------------------------------ reconcile (pod events)
    def reconcile(self) -> None:
        pods = self.pods.snapshot()
        running_heads = {
            p["metadata"]["uid"]
            for p in pods
            if running(p) and ((p["metadata"].get("labels") or {}).get("ray.io/node-type") == "head")
        }
        with self.lock:
            gone = [uid for uid in self.tables if uid not in running_heads]
            closing = [self.tables.pop(uid) for uid in gone]
        for table in closing:
            table.close("its head pod stopped running")
        with self.lock:
            live = list(self.tables.items())
        by_uid = {p["metadata"]["uid"]: p for p in pods}
        for uid, table in live:
            self.check_workers(table, pods, str(controller_of(by_uid.get(uid) or {}).get("uid") or ""))
        for listener in self.listeners:
            listener(pods)

    def check_workers(self, table: JobTable, pods: list[Obj], cluster_uid: str) -> None:
        """A worker pod of the head's cluster that ran and is gone (deleted, failed: a preempted Spot VM, a
        revoked node) fails the head's running jobs: Ray Train does not retry a lost worker unless
        FailureConfig.max_failures says so (default 0, https://docs.ray.io/en/latest/train/user-guides/fault-tolerance.html),
        so the training run and with it the Ray job fail. KubeRay then retries the RayJob with a new
        cluster while `spec.backoffLimit` allows, else marks it Failed. A worker is a pod with the cluster's worker
        labels whose controller is the RayCluster `cluster_uid` (the head's controller, checked against the
        RayCluster in `head_pod`), as KubeRay's own are: labels alone are whatever a pod's creator wrote."""
        workers = self.workers_of(table, pods, cluster_uid)
        lost: list[str] = []
        for uid, pod in workers.items():
            if running(pod) and uid not in table.workers:
                table.workers[uid] = str(pod["metadata"]["name"])
            elif (pod.get("status") or {}).get("phase") == "Failed" and uid in table.workers:
                reason = (pod.get("status") or {}).get("reason") or "Failed"
                lost.append(f"{table.workers.pop(uid)} ({reason})")
        for uid in [u for u in table.workers if u not in workers]:
            lost.append(f"{table.workers.pop(uid)} (deleted)")
        if lost:
            table.fail_running(
                "ray.train.WorkerGroupError: Training failed due to worker errors: the Ray worker(s) on pod(s) "
                + ", ".join(lost)
                + " died (planb local: a lost worker pod fails the job as Ray Train does without max_failures)"
            )

    @staticmethod
    def workers_of(table: JobTable, pods: list[Obj], cluster_uid: str) -> dict[str, Obj]:
        """The worker pods (uid -> pod) of the head's cluster: the cluster's worker labels and, as KubeRay's own
        workers have, the RayCluster `cluster_uid` (the head's controller) as their controller by name and uid."""
        namespace, cluster = table.cluster
        return {
            p["metadata"]["uid"]: p
            for p in pods
            if matches(p, namespace, {"ray.io/cluster": cluster, "ray.io/node-type": "worker"})
            and cluster_uid
            and controller_of(p).get("kind") == "RayCluster"
            and controller_of(p).get("name") == cluster
            and controller_of(p).get("uid") == cluster_uid
        }

    def pod_exists(self, uid: str) -> bool:
        return any(p["metadata"].get("uid") == uid and running(p) for p in self.pods.snapshot())
