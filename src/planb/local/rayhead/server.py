"""The Ray head stand-in's HTTP layer: the Ray job API KubeRay talks to, and the process that serves it.

On GKE, KubeRay reaches each RayCluster's dashboard at ``<head service>.<namespace>.svc.<domain>:8265``
and the submitter pod (K8sJobMode) runs ``ray job submit --no-wait`` then ``ray job logs --follow``
against it (KubeRay's ``BuildJobSubmitCommand``, ray-operator/controllers/ray/common/job.go). On the
local stack KWOK pods execute nothing and no cluster DNS exists, so this process stands in for both:

* KubeRay runs with ``HTTP_PROXY`` pointing here (its dashboard client uses Go's default transport,
  which honours the variable; the API server on 127.0.0.1 is never proxied). A request for a head
  service's address is answered from that head's job table: the REST API documented at
  https://docs.ray.io/en/latest/cluster/running-applications/job-submission/rest.html, with Ray's
  token check (``x-ray-authorization: Bearer <token>``) when the RayCluster has ``authOptions``. A job set
  to run on this machine is taken from the job API only for a token-auth cluster and with the entrypoint
  of the RayJob that owns the cluster (planb's policy, `Handler.run_refusal`).
* A head's table exists while its head pod runs (planb.local.rayhead.heads: head tracking, tokens, submitting).
* A preempted Spot node's worker pods are terminated as GKE's kubelet does it: the chart's preStop hook's notice
  file, then SIGTERM to the payload's Ray Train workers (planb.local.rayhead.shutdown).
* A running submitter pod (container ``ray-job-submitter``) does what its command does
  (planb.local.rayhead.submitter: submit, follow, write the pod's terminated status).
* While local failover is on, a ready RayCluster's state is copied into its RayJob at once, as KubeRay does once
  it reads a head's dashboard (planb.local.rayhead.ray_ready: the short local waitForPodsReady timeouts).

What a job's payload does is planb.local.rayhead.settings: simulated by default, or the entrypoint itself
as a host process (`planb local rayhead set --run`).
"""

from __future__ import annotations

import hmac
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from planb.kube import Kube, KubeError, Obj
from planb.local.rayhead import ray_ready
from planb.local.rayhead.address import PORT
from planb.local.rayhead.chain import ChainRefusedError, Maker
from planb.local.rayhead.guard import require_local_apiserver
from planb.local.rayhead.heads import MissingTokenError, RayHeads, log, runtime_env_of
from planb.local.rayhead.jobs import TERMINAL, JobTable
from planb.local.rayhead.shutdown import NodeShutdown
from planb.local.rayhead.submitter import Submitters
from planb.local.rayhead.testpods import HelmTestPods

#: The longest request body the stand-in reads (planb's policy; Ray documents no limit for its job API).
MAX_BODY_BYTES = 1 << 20
#: Reported as the head's Ray version (what the chart's image runs).
RAY_VERSION = "2.53.0"


class Handler(BaseHTTPRequestHandler):
    """Ray's job REST API for the head a request's (proxied) address names."""

    server: RayHeadServer
    protocol_version = "HTTP/1.1"
    #: TCP_NODELAY: headers and body go out as two writes, which Nagle's algorithm would hold on KubeRay's kept-alive
    #: connections until its delayed ACK (planb.local.gke_emulator.server measured some 40 ms a request).
    disable_nagle_algorithm = True

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
        announced = (self.headers.get("Content-Length") or "0").strip()
        if not announced.isdigit() or int(announced) > MAX_BODY_BYTES:
            # Refused before a byte of the body is read, so the connection cannot carry another request.
            self.close_connection = True
            self.reply(
                413 if announced.isdigit() else 400,
                f"planb's policy: the Ray head stand-in reads bodies of at most {MAX_BODY_BYTES} bytes, not "
                f"Content-Length {announced!r}, because it would otherwise read whatever a client announces; a job "
                "submission is a few KiB",
            )
            return
        length = int(announced)
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
            try:
                head = heads.head_pod(parts[1], parts[0])
            except ChainRefusedError as exc:
                self.reply(403, str(exc))
                return
            if head is None:
                self.reply(502, f"no running Ray head behind service {parts[1]}/{parts[0]}")
                return
            cluster = heads.cluster_name(head)
            try:
                token = heads.auth_token(parts[1], cluster)
            except MissingTokenError as exc:
                self.reply(503, f"Service Unavailable: {exc}")
                return
            if token is not None and not bearer_matches(self.headers.get("x-ray-authorization", ""), token):
                self.reply(401, "Unauthorized: a valid x-ray-authorization token is required")
                return
            self.jobs_api(method, url.path, raw, head, cluster, token is not None)
        except KubeError as exc:
            self.reply(503, f"the stand-in could not read the cluster: {exc}")

    def jobs_api(self, method: str, path: str, raw: bytes, head: Obj, cluster: str, token_auth: bool) -> None:
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
            self.submit_job(raw, head, cluster, token_auth, table)
        else:
            self.job_action(method, path, rest, table)

    def submit_job(self, raw: bytes, head: Obj, cluster: str, token_auth: bool, table: JobTable) -> None:
        """POST /api/jobs: a job submitted to the head, unless its id is used, its cluster's maker is refused or a
        run payload's request is not the RayJob's own."""
        heads = self.server.heads
        body = json.loads(raw or b"{}")
        submission_id = str(body.get("submission_id") or f"raysubmit_{int(time.time() * 1000)}")
        if table.get(submission_id) is not None:
            # Ray's job agent refuses a used submission_id (dashboard/modules/job/job_manager.py submit_job,
            # a ValueError, 400 from the agent); the head's JobAgentSubmissionClient turns the agent's
            # non-200 into a RuntimeError, which job_head.py submit_job answers 500 with the traceback as
            # text. KubeRay v1.6.2 takes a 500 whose body holds "Please use a different submission_id" as
            # "already submitted" (ray-operator/controllers/ray/utils/dashboardclient/dashboard_httpclient.go,
            # SubmitJobReq).
            self.reply(
                500,
                "RuntimeError: Request failed with status code 400: ValueError: Job with submission_id "
                f"{submission_id} already exists. Please use a different submission_id.",
            )
            return
        namespace = head["metadata"]["namespace"]
        maker = heads.maker(namespace, cluster)
        claimed = maker.claim_refusal(namespace, cluster)
        if claimed:
            self.reply(403, claimed)
            return
        # The RayJob that made the cluster, or the cluster's own name for a RayCluster no RayJob made.
        rayjob = maker.name or cluster
        entrypoint = str(body.get("entrypoint") or "")
        # The job's runtime env is the RayJob's own: KubeRay sends its runtimeEnvYAML as the body's runtime_env
        # (v1.6.2 dashboard_httpclient.go L359-L380 ConvertRayJobToReq, POSTed at L226-L237), so a body that
        # carries another is not KubeRay's. A RayCluster no RayJob made gets none.
        runtime_env = runtime_env_of(maker.rayjob) if maker.rayjob is not None else {}
        if heads.payload_for(namespace, rayjob).mode == "run":
            refusal = self.run_refusal(namespace, cluster, maker, entrypoint, token_auth)
            sent_env = body.get("runtime_env") or {}
            sent = (sent_env.get("env_vars") or {}) if isinstance(sent_env, dict) else None
            if not refusal and sent != (runtime_env.get("env_vars") or {}):
                refusal = (
                    f"planb's policy: the request's runtime_env.env_vars are not RayJob {namespace}/{rayjob}'s "
                    "spec.runtimeEnvYAML env_vars; a job takes its environment only from its RayJob, because a "
                    "run payload executes as a process on this machine with your rights"
                )
            if refusal:
                self.reply(400, refusal)
                return
        job, _ = heads.submit(head, rayjob, submission_id, entrypoint, runtime_env)
        self.reply(200, {"job_id": job.submission_id, "submission_id": job.submission_id})

    def job_action(self, method: str, path: str, rest: str, table: JobTable) -> None:
        """/api/jobs/<id>[/logs|/stop]: one job's info, logs, stop and delete."""
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

    def run_refusal(self, namespace: str, cluster: str, maker: Maker, entrypoint: str, token_auth: bool) -> str:
        """Why a submission of a `run` payload is not taken over the job API ('' when it is): it runs on
        this machine, so only a token-checked request carrying the RayJob's own entrypoint starts it."""
        why = "because a run payload executes as a process on this machine with your rights"
        if not token_auth:
            return (
                f"planb's policy: RayCluster {namespace}/{cluster} has no token auth (authOptions.mode: token; the "
                f"chart's job.rayAuth), so no job is run on this machine for it, {why} and any local process "
                "could submit one"
            )
        if maker.rayjob is None:
            return f"planb's policy: no RayJob made RayCluster {namespace}/{cluster} ({maker.why}), {why}"
        expected = str((maker.rayjob.get("spec") or {}).get("entrypoint") or "")
        if entrypoint != expected:
            return (
                f"planb's policy: the entrypoint {entrypoint!r} is not RayJob {namespace}/{maker.name}'s "
                f"spec.entrypoint ({expected!r}); only the RayJob's own runs, {why}"
            )
        return ""


def bearer_matches(header: str, token: str) -> bool:
    """An ``x-ray-authorization: Bearer <token>`` header holding `token`, compared in constant time; an empty
    token or bearer never matches."""
    scheme, _, given = header.partition(" ")
    if scheme != "Bearer" or not given or not token:
        return False
    return hmac.compare_digest(given.encode(), token.encode())


class RayHeadServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, heads: RayHeads, port: int = PORT) -> None:
        self.heads = heads
        super().__init__(("127.0.0.1", port), Handler)


def run(
    kubeconfig: Path,
    apiserver_port: int,
    port: int = PORT,
    stopping: Callable[[], bool] = lambda: False,
    failover_settings: Path | None = None,
) -> int:
    """Serve until `stopping`; refused before any request unless `kubeconfig` is the local stack's
    (its API server on 127.0.0.1:`apiserver_port`, planb.local.rayhead.guard). With `failover_settings` (local
    mode's failover.json), ready RayClusters are copied into their RayJobs while it switches failover on."""
    api_server = require_local_apiserver(kubeconfig, apiserver_port)
    stopped = threading.Event()
    # The watches (pods, nodes, Services, RayClusters) on a client of their own: each holds a pooled connection.
    heads = RayHeads(Kube(kubeconfig), watch_kube=Kube(kubeconfig))
    if failover_settings is not None:
        ray_ready.start(kubeconfig, heads.reads.clusters, failover_settings, stopped, log)
    Submitters(heads)
    HelmTestPods(
        heads, api_server
    )  # the chart's `helm test` pods, which KWOK cannot run (planb.local.rayhead.testpods)
    # A preempted Spot node's worker pods: their preStop hook's notice file, then SIGTERM to the payload's Ray Train
    # workers (planb.local.rayhead.shutdown), as GKE's kubelet terminates them.
    shutdown = NodeShutdown(heads)
    server = RayHeadServer(heads, port)
    heads.start()
    shutdown.start()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
    thread.start()
    log(f"serving the Ray job API for the local stack's heads on 127.0.0.1:{port} (KubeRay's HTTP_PROXY)")
    try:
        while not stopping():
            time.sleep(0.2)
    finally:
        stopped.set()
        server.shutdown()
        with heads.lock:
            tables = list(heads.tables.values())
        for table in tables:
            table.close("the local stack stopped")
    return 0
