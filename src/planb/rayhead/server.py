"""The Ray head stand-in: the Ray job API KubeRay talks to, and what the RayJob's submitter pod does.

On GKE, KubeRay reaches each RayCluster's dashboard at ``<head service>.<namespace>.svc.<domain>:8265``
and the submitter pod (K8sJobMode) runs ``ray job submit --no-wait`` then ``ray job logs --follow``
against it (KubeRay's ``BuildJobSubmitCommand``, ray-operator/controllers/ray/common/job.go). On the
local stack KWOK pods execute nothing and no cluster DNS exists, so this process stands in for both:

* KubeRay runs with ``HTTP_PROXY`` pointing here (its dashboard client uses Go's default transport,
  which honours the variable; the API server on 127.0.0.1 is never proxied). A request for a head
  service's address is answered from that head's job table: the REST API documented at
  https://docs.ray.io/en/latest/cluster/running-applications/job-submission/rest.html, with Ray's
  token check (``x-ray-authorization: Bearer <token>``) when the RayCluster has ``authOptions``.
* A head's table exists while its head pod runs; when the pod goes (suspend, eviction, the job's
  end) its running jobs die with it, as on a Ray head without GCS fault tolerance.
* A running submitter pod (container ``ray-job-submitter``) does what its command does: submit the
  RayJob's entrypoint under the RayJob's submission id unless it exists, follow it until it ends,
  then exit 0 (``ray job logs --follow`` exits 0 whatever the job's status). The pod's status is
  written as the kubelet would; KWOK's own pod-complete stage leaves these pods alone
  (planb.localstack.control_plane).

What a job's payload does is planb.rayhead.settings: simulated by default, or the entrypoint itself
as a host process (`planb rayhead set --run`).
"""

from __future__ import annotations

import base64
import json
import re
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from planb import paths
from planb.informer import Informer
from planb.kube import Kube, KubeError, Obj
from planb.rayhead import settings as settings_mod
from planb.rayhead.jobs import TERMINAL, JobTable, Launch, RayJobRecord, launch_for

PORT = 19085
SUBMITTER_CONTAINER = "ray-job-submitter"
RAY_GROUP_PATH = "/apis/ray.io/v1"
#: Reported as the head's Ray version (what the chart's image runs).
RAY_VERSION = "2.53.0"
SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]")


def log(msg: str) -> None:
    print(f"[rayhead] {msg}", flush=True)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _running(pod: Obj) -> bool:
    meta, status = pod.get("metadata") or {}, pod.get("status") or {}
    return not meta.get("deletionTimestamp") and status.get("phase") == "Running"


def _matches(pod: Obj, namespace: str, selector: dict[str, str]) -> bool:
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    return meta.get("namespace") == namespace and all(labels.get(k) == v for k, v in selector.items())


class RayHeads:
    """Every head pod's job table, the submitter pods being followed, and the Kubernetes reads behind them."""

    def __init__(self, kube: Kube, state_dir: Path | None = None) -> None:
        self.kube = kube
        self.state_dir = state_dir or paths.state_dir()
        self.tables: dict[str, JobTable] = {}  # head pod uid -> its jobs
        self.following: set[str] = set()  # uids of submitter pods handled
        self.lock = threading.Lock()
        self.pods = Informer(kube, "/api/v1/pods", on_change=self.reconcile, log=log)

    def start(self) -> None:
        self.pods.start()

    # ------------------------------------------------------------------ heads
    def head_pod(self, namespace: str, service: str) -> Obj | None:
        """The running head pod behind a head service (None when the service or its pod is missing)."""
        svc = self.kube.get(f"/api/v1/namespaces/{namespace}/services/{service}")
        selector = ((svc or {}).get("spec") or {}).get("selector") or {}
        if not selector:
            return None
        for pod in self.pods.snapshot():
            if _matches(pod, namespace, selector) and _running(pod):
                return pod
        return None

    def table_for(self, head: Obj) -> JobTable:
        meta = head["metadata"]
        with self.lock:
            table = self.tables.get(meta["uid"])
            if table is None:
                table = JobTable(f"{meta['namespace']}/{meta['name']}", log)
                table.cluster = (str(meta["namespace"]), self.cluster_name(head))
                self.tables[meta["uid"]] = table
            return table

    def cluster_name(self, head: Obj) -> str:
        return str(((head.get("metadata") or {}).get("labels") or {}).get("ray.io/cluster", ""))

    def auth_token(self, namespace: str, cluster: str) -> str | None:
        """The RayCluster's token when its authOptions mode is token (KubeRay's Secret, key auth_token)."""
        rc = self.kube.get(f"{RAY_GROUP_PATH}/namespaces/{namespace}/rayclusters/{cluster}") or {}
        auth = (rc.get("spec") or {}).get("authOptions") or {}
        if auth.get("mode") != "token":
            return None
        secret = self.kube.get(f"/api/v1/namespaces/{namespace}/secrets/{auth.get('secretName') or cluster}") or {}
        raw = (secret.get("data") or {}).get("auth_token", "")
        return base64.b64decode(raw).decode() if raw else ""

    def rayjob_of_cluster(self, namespace: str, cluster: str) -> str:
        rc = self.kube.get(f"{RAY_GROUP_PATH}/namespaces/{namespace}/rayclusters/{cluster}") or {}
        for owner in (rc.get("metadata") or {}).get("ownerReferences") or []:
            if owner.get("kind") == "RayJob":
                return str(owner.get("name"))
        return cluster

    # ------------------------------------------------------------------ submitting
    def submit(
        self, head: Obj, rayjob: str, submission_id: str, entrypoint: str, runtime_env: dict[str, Any]
    ) -> tuple[RayJobRecord, bool]:
        namespace = head["metadata"]["namespace"]
        settings = settings_mod.load(self.state_dir)
        payload = settings.payload_for(namespace, rayjob)
        name = SAFE_NAME.sub("_", f"{namespace}_{rayjob}_{submission_id}")
        log_file = settings_mod.logs_dir(self.state_dir) / f"{name}.log"
        record = RayJobRecord(
            submission_id=submission_id, entrypoint=entrypoint, log_file=log_file, runtime_env=runtime_env
        )
        launch = self.launch(head, entrypoint, runtime_env, payload, name) if payload.mode == "run" else None
        table = self.table_for(head)
        job, new = table.submit(record, payload, launch)
        if new:
            log(f"{table.head}: job {submission_id} of RayJob {namespace}/{rayjob} submitted ({payload.mode})")
        return job, new

    def launch(
        self, head: Obj, entrypoint: str, runtime_env: dict[str, Any], payload: settings_mod.Payload, name: str
    ) -> Launch:
        """The entrypoint as a host process: the head container's ConfigMap volumes written to a work
        directory, its literal environment, the runtime env's env_vars and the payload's overrides."""
        namespace = head["metadata"]["namespace"]
        spec = head.get("spec") or {}
        container = (spec.get("containers") or [{}])[0]
        workdir = self.state_dir / "rayhead" / "work" / name
        workdir.mkdir(parents=True, exist_ok=True)
        volumes = {v.get("name"): v for v in spec.get("volumes") or []}
        mounts: dict[str, Path] = {}
        for mount in container.get("volumeMounts") or []:
            source = (volumes.get(mount.get("name")) or {}).get("configMap")
            if not source:
                continue
            cm = self.kube.get(f"/api/v1/namespaces/{namespace}/configmaps/{source.get('name')}") or {}
            data = cm.get("data") or {}
            local = workdir / str(mount["mountPath"]).strip("/")
            local.mkdir(parents=True, exist_ok=True)
            items = source.get("items") or [{"key": k, "path": k} for k in data]
            for item in items:
                if item.get("key") in data:
                    target = local / str(item.get("path") or item["key"])
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_text(str(data[item["key"]]))
            mounts[str(mount["mountPath"])] = local
        container_env = {
            str(e["name"]): str(e["value"]) for e in container.get("env") or [] if "name" in e and "value" in e
        }
        env_vars = {str(k): str(v) for k, v in (runtime_env.get("env_vars") or {}).items()}
        return launch_for(entrypoint, mounts, container_env, env_vars, payload.env, workdir)

    # ------------------------------------------------------------------ reconcile (pod events)
    def reconcile(self) -> None:
        pods = self.pods.snapshot()
        running_heads = {
            p["metadata"]["uid"]
            for p in pods
            if _running(p) and ((p["metadata"].get("labels") or {}).get("ray.io/node-type") == "head")
        }
        with self.lock:
            gone = [uid for uid in self.tables if uid not in running_heads]
            closing = [self.tables.pop(uid) for uid in gone]
        for table in closing:
            table.close("its head pod stopped running")
        with self.lock:
            live = list(self.tables.values())
        for table in live:
            self.check_workers(table, pods)
        for pod in pods:
            containers = (pod.get("spec") or {}).get("containers") or []
            if not _running(pod) or not any(c.get("name") == SUBMITTER_CONTAINER for c in containers):
                continue
            uid = pod["metadata"]["uid"]
            with self.lock:
                if uid in self.following:
                    continue
                self.following.add(uid)
            threading.Thread(target=self.follow, args=(pod,), name=f"submitter {uid}", daemon=True).start()

    def check_workers(self, table: JobTable, pods: list[Obj]) -> None:
        """A worker pod of the head's cluster that ran and is gone (deleted, failed: a preempted Spot VM, a
        revoked node) fails the head's running jobs: Ray Train does not retry a lost worker unless
        FailureConfig.max_failures says so (default 0, https://docs.ray.io/en/latest/train/user-guides/fault-tolerance.html),
        so the training run and with it the Ray job fail. KubeRay then retries the RayJob with a new
        cluster while `spec.backoffLimit` allows, else marks it Failed."""
        namespace, cluster = table.cluster
        workers = {
            p["metadata"]["uid"]: p
            for p in pods
            if (p.get("metadata") or {}).get("namespace") == namespace
            and ((p["metadata"].get("labels") or {}).get("ray.io/cluster") == cluster)
            and ((p["metadata"].get("labels") or {}).get("ray.io/node-type") == "worker")
        }
        lost: list[str] = []
        for uid, pod in workers.items():
            if _running(pod) and uid not in table.workers:
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

    def pod_exists(self, uid: str) -> bool:
        return any(p["metadata"].get("uid") == uid and _running(p) for p in self.pods.snapshot())

    def follow(self, pod: Obj) -> None:
        """What the submitter pod's command does, ending in the exit code it would have."""
        meta = pod["metadata"]
        namespace, uid = meta["namespace"], meta["uid"]
        try:
            code, why = self._follow(pod)
        except KubeError as exc:
            code, why = 1, f"the API server answered {exc}"
        if not self.pod_exists(uid):
            return  # deleted meanwhile: there is nothing to write
        try:
            self.finish_pod(pod, code)
            log(f"submitter pod {namespace}/{meta['name']} exited {code}: {why}")
        except KubeError as exc:
            log(f"submitter pod {namespace}/{meta['name']}: could not write its status: {exc}")

    def _follow(self, pod: Obj) -> tuple[int, str]:
        meta = pod["metadata"]
        rayjob = self.rayjob_of_submitter(pod)
        if rayjob is None:
            return 1, "no RayJob owns this pod's Job"
        status, spec = rayjob.get("status") or {}, rayjob.get("spec") or {}
        url = str(status.get("dashboardURL") or "")
        host = urlsplit(url if "://" in url else f"http://{url}").hostname or ""
        parts = host.split(".")
        head = self.head_pod(parts[1], parts[0]) if len(parts) >= 3 and parts[2] == "svc" else None
        if head is None:
            return 1, f"ray job submit: cannot reach the Ray dashboard at {url or '(no address)'}"
        runtime_env = yaml.safe_load(spec.get("runtimeEnvYAML") or "") or {}
        job, new = self.submit(
            head,
            rayjob["metadata"]["name"],
            str(status.get("jobId") or ""),
            str(spec.get("entrypoint") or ""),
            runtime_env if isinstance(runtime_env, dict) else {},
        )
        table = self.table_for(head)
        while not job.wait_terminal(1.0):
            if table.closed:
                return 1, "ray job logs: lost the Ray head while following the job"
            if not self.pod_exists(meta["uid"]):
                return 0, "pod deleted"
        return 0, f"job {job.submission_id} ended {job.status}" + ("" if new else " (submitted earlier)")

    def rayjob_of_submitter(self, pod: Obj) -> Obj | None:
        namespace = pod["metadata"]["namespace"]
        for owner in pod["metadata"].get("ownerReferences") or []:
            if owner.get("kind") != "Job":
                continue
            job = self.kube.get(f"/apis/batch/v1/namespaces/{namespace}/jobs/{owner['name']}") or {}
            for job_owner in (job.get("metadata") or {}).get("ownerReferences") or []:
                if job_owner.get("kind") == "RayJob":
                    return self.kube.get(f"{RAY_GROUP_PATH}/namespaces/{namespace}/rayjobs/{job_owner['name']}")
        return None

    def finish_pod(self, pod: Obj, code: int) -> None:
        """Write the terminated status the kubelet would, from the pod's containers."""
        now = _now()
        started = ((pod.get("status") or {}).get("startTime")) or now
        statuses = [
            {
                "name": c["name"],
                "image": c.get("image", ""),
                "imageID": "",
                "ready": False,
                "started": False,
                "restartCount": 0,
                "state": {
                    "terminated": {
                        "exitCode": code,
                        "reason": "Completed" if code == 0 else "Error",
                        "startedAt": started,
                        "finishedAt": now,
                    }
                },
            }
            for c in (pod.get("spec") or {}).get("containers") or []
        ]
        conditions = [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": started},
            {"type": "Initialized", "status": "True", "lastTransitionTime": started},
            {"type": "Ready", "status": "False", "reason": "PodCompleted", "lastTransitionTime": now},
            {"type": "ContainersReady", "status": "False", "reason": "PodCompleted", "lastTransitionTime": now},
        ]
        meta = pod["metadata"]
        self.kube.merge_patch(
            f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/status",
            {
                "status": {
                    "phase": "Succeeded" if code == 0 else "Failed",
                    "conditions": conditions,
                    "containerStatuses": statuses,
                }
            },
        )


# ---------------------------------------------------------------------------------------- HTTP
class Handler(BaseHTTPRequestHandler):
    """Ray's job REST API for the head a request's (proxied) address names."""

    server: RayHeadServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def reply(self, code: int, body: Any) -> None:
        data = (json.dumps(body) if not isinstance(body, str) else body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json" if not isinstance(body, str) else "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self.route("GET")

    def do_POST(self) -> None:
        self.route("POST")

    def do_DELETE(self) -> None:
        self.route("DELETE")

    def route(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        url = urlsplit(self.path)
        if not url.scheme:
            if url.path == "/healthz":
                self.reply(200, "ok")
            else:
                self.reply(404, "planb's Ray head stand-in: send Ray job API requests through it as a proxy")
            return
        host = url.hostname or ""
        parts = host.split(".")
        if len(parts) < 3 or parts[2] != "svc":
            self.reply(502, f"planb's Ray head stand-in answers <service>.<namespace>.svc.<domain> only, not {host}")
            return
        heads = self.server.heads
        try:
            head = heads.head_pod(parts[1], parts[0])
            if head is None:
                self.reply(502, f"no running Ray head behind service {parts[1]}/{parts[0]}")
                return
            cluster = heads.cluster_name(head)
            token = heads.auth_token(parts[1], cluster)
            if token is not None and self.headers.get("x-ray-authorization", "") != f"Bearer {token}":
                self.reply(401, "Unauthorized: a valid x-ray-authorization token is required")
                return
            self.jobs_api(method, url.path, raw, head, cluster)
        except KubeError as exc:
            self.reply(503, f"the stand-in could not read the cluster: {exc}")

    def jobs_api(self, method: str, path: str, raw: bytes, head: Obj, cluster: str) -> None:
        heads = self.server.heads
        table = heads.table_for(head)
        rest = path.removeprefix("/api/jobs").strip("/")
        if path == "/api/version":
            self.reply(200, {"version": "4", "ray_version": RAY_VERSION, "ray_commit": "planb-local"})
        elif not path.startswith("/api/jobs"):
            self.reply(404, f"{path} is not part of the Ray job API this stand-in serves")
        elif not rest and method == "GET":
            self.reply(200, [job.info() for job in table.list()])
        elif not rest and method == "POST":
            body = json.loads(raw or b"{}")
            submission_id = str(body.get("submission_id") or f"raysubmit_{int(time.time() * 1000)}")
            if table.get(submission_id) is not None:
                self.reply(400, f"Job with submission_id {submission_id} already exists. Please use a different one.")
                return
            namespace = head["metadata"]["namespace"]
            job, _ = heads.submit(
                head,
                heads.rayjob_of_cluster(namespace, cluster),
                submission_id,
                str(body.get("entrypoint") or ""),
                body.get("runtime_env") or {},
            )
            self.reply(200, {"job_id": job.submission_id, "submission_id": job.submission_id})
        else:
            job_id, _, action = rest.partition("/")
            found = table.get(job_id)
            if method == "GET" and not action:
                if found is None:
                    self.reply(404, f"Job {job_id} does not exist")
                else:
                    self.reply(200, found.info())
            elif method == "GET" and action == "logs":
                self.reply(200 if found else 404, {"logs": found.logs()} if found else f"Job {job_id} does not exist")
            elif method == "POST" and action == "stop":
                if found is None:
                    self.reply(404, f"Job {job_id} does not exist")
                else:
                    self.reply(200, {"stopped": table.stop(job_id)})
            elif method == "DELETE" and not action:
                if found is None:
                    self.reply(404, f"Job {job_id} does not exist")
                elif found.status not in TERMINAL:
                    self.reply(400, f"Job {job_id} is not in a terminal state; stop it first")
                else:
                    self.reply(200, {"deleted": table.delete(job_id)})
            else:
                self.reply(404, f"{method} {path} is not part of the Ray job API this stand-in serves")


class RayHeadServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, heads: RayHeads, port: int = PORT) -> None:
        self.heads = heads
        super().__init__(("127.0.0.1", port), Handler)


def run(kubeconfig: Path, port: int = PORT, stopping: Callable[[], bool] = lambda: False) -> int:
    heads = RayHeads(Kube(kubeconfig))
    server = RayHeadServer(heads, port)
    heads.start()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
    thread.start()
    log(f"serving the Ray job API for the local stack's heads on 127.0.0.1:{port} (KubeRay's HTTP_PROXY)")
    try:
        while not stopping():
            time.sleep(0.2)
    finally:
        server.shutdown()
        with heads.lock:
            tables = list(heads.tables.values())
        for table in tables:
            table.close("the local stack stopped")
    return 0


if __name__ == "__main__":  # pragma: no cover - started by `planb rayhead run`
    sys.exit(run(Path(sys.argv[1])))
