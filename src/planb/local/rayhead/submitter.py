"""The submitter pods' work for the Ray head stand-in: what ``ray job submit`` and ``ray job logs`` would do.

A running submitter pod (container ``ray-job-submitter``) does what its command does: submit the RayJob's
entrypoint under the RayJob's submission id unless it exists, follow it until it ends, then exit 0
(``ray job logs --follow`` exits 0 whatever the job's status). The pod's status is written as the kubelet would;
KWOK's own pod-complete stage leaves these pods alone (planb.local.stack.control_plane). The pod's log is the
job's output, as `ray job logs --follow` prints it (planb.local.rayhead.podlogs); its end status,
planb.local.rayhead.podstatus.
"""

from __future__ import annotations

import threading
from pathlib import Path
from urllib.parse import urlsplit

from planb.kube import KubeError, Obj
from planb.local.rayhead.api_names import api_name
from planb.local.rayhead.chain import ChainRefusedError
from planb.local.rayhead.heads import RayHeads, log, runtime_env_of
from planb.local.rayhead.podlogs import PodLog
from planb.local.rayhead.pods import controller_of, running
from planb.local.rayhead.podstatus import finish_pod
from planb.local.rayhead.reads import RAY_GROUP_PATH
from planb.local.rayhead.settings import SAFE_NAME, logs_dir

SUBMITTER_CONTAINER = "ray-job-submitter"


class Submitters:
    """The submitter pods being followed, one thread each, on the heads they submit to."""

    def __init__(self, heads: RayHeads) -> None:
        self.heads = heads
        self.following: set[str] = set()  # uids of submitter pods handled
        self.lock = threading.Lock()
        heads.listeners.append(self.reconcile)

    def reconcile(self, pods: list[Obj]) -> None:
        """Start following every running submitter pod not followed yet."""
        for pod in pods:
            containers = (pod.get("spec") or {}).get("containers") or []
            if not running(pod) or not any(c.get("name") == SUBMITTER_CONTAINER for c in containers):
                continue
            uid = pod["metadata"]["uid"]
            with self.lock:
                if uid in self.following:
                    continue
                self.following.add(uid)
            threading.Thread(target=self.follow, args=(pod,), name=f"submitter {uid}", daemon=True).start()

    def follow(self, pod: Obj) -> None:
        """What the submitter pod's command does, ending in the exit code it would have."""
        meta = pod["metadata"]
        namespace, uid = meta["namespace"], meta["uid"]
        try:
            code, why = self._follow(pod)
        except KubeError as exc:
            code, why = 1, f"the API server answered {exc}"
        if not self.heads.pod_exists(uid):
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
        namespace, name = meta["namespace"], rayjob["metadata"]["name"]
        if len(parts) >= 3 and parts[2] == "svc" and parts[1] != namespace:
            # The head's namespace chooses the payload and the template run: only the RayJob's own is taken.
            return 1, (
                f"planb's policy: RayJob {namespace}/{name}'s status.dashboardURL {url} names a head in namespace "
                f"{parts[1]}, not {namespace}; nothing is run under another namespace's settings"
            )
        try:
            head = self.heads.head_pod(parts[1], parts[0]) if len(parts) >= 3 and parts[2] == "svc" else None
        except ChainRefusedError as exc:
            return 1, str(exc)
        if head is None:
            return 1, f"ray job submit: cannot reach the Ray dashboard at {url or '(no address)'}"
        maker = self.heads.maker(namespace, self.heads.cluster_name(head))
        uid, made_by = rayjob["metadata"].get("uid"), ((maker.rayjob or {}).get("metadata") or {}).get("uid")
        if maker.name != name or not uid or made_by != uid:
            why = maker.why or f"it belongs to RayJob {maker.name} uid {made_by or '-'}"
            return 1, f"planb's policy: the head at {url} is not RayJob {name}'s (uid {uid or '-'}): {why}"
        job, new = self.heads.submit(
            head, name, str(status.get("jobId") or ""), str(spec.get("entrypoint") or ""), runtime_env_of(rayjob)
        )
        table = self.heads.table_for(head)
        pod_log = PodLog(self.heads.kube, pod, SUBMITTER_CONTAINER, job.log_file, self.pod_log_file(pod))
        refused = pod_log.publish()
        if refused:
            log(f"submitter pod {meta['namespace']}/{meta['name']}: its log stays empty: {refused}")
        while not job.wait_terminal(1.0):
            pod_log.copy()
            if table.closed:
                return 1, "ray job logs: lost the Ray head while following the job"
            if not self.heads.pod_exists(meta["uid"]):
                return 0, "pod deleted"
        pod_log.copy()
        return 0, f"job {job.submission_id} ended {job.status}" + ("" if new else " (submitted earlier)")

    def pod_log_file(self, pod: Obj) -> Path:
        """Where the pod's log (the job's output in the CRI format) is written."""
        meta = pod["metadata"]
        name = SAFE_NAME.sub("_", f"{meta['namespace']}_{meta['name']}_{meta['uid']}")
        return logs_dir(self.heads.state_dir) / "pods" / f"{name}.log"

    def rayjob_of_submitter(self, pod: Obj) -> Obj | None:
        """The RayJob whose submitter Job made this pod: each link its controller ownerReference, by name and uid
        (the Job controller and KubeRay set both), so a pod that only names a Job is not followed."""
        namespace = pod["metadata"]["namespace"]
        owner = controller_of(pod)
        if owner.get("kind") != "Job":
            return None
        job_name = api_name(owner.get("name"))  # ownerReference names are not validated by the API server
        if job_name is None:
            return None
        job = self.heads.kube.get(f"/apis/batch/v1/namespaces/{namespace}/jobs/{job_name}") or {}
        if not owner.get("uid") or (job.get("metadata") or {}).get("uid") != owner.get("uid"):
            return None
        job_owner = controller_of(job)
        if job_owner.get("kind") != "RayJob":
            return None
        rayjob_name = api_name(job_owner.get("name"))
        if rayjob_name is None:
            return None
        rayjob = self.heads.kube.get(f"{RAY_GROUP_PATH}/namespaces/{namespace}/rayjobs/{rayjob_name}")
        if (
            rayjob is None
            or not job_owner.get("uid")
            or (rayjob.get("metadata") or {}).get("uid") != job_owner.get("uid")
        ):
            return None
        return rayjob

    def finish_pod(self, pod: Obj, code: int) -> None:
        """Write the terminated status the kubelet would, from the pod's containers."""
        finish_pod(self.heads.kube, pod, code)
