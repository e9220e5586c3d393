"""What `kubectl logs` shows for a submitter pod on the local stack: the Ray job's output, as on GKE.

On GKE the submitter pod runs ``ray job logs --follow`` after its submit (KubeRay's BuildJobSubmitCommand,
ray-operator/controllers/ray/common/job.go), so the pod's log is the job's own output; `planb status` reads
train.py's "resumed from checkpoint step S; N step(s) lost" lines from it. KWOK pods run nothing, but
kwok-controller serves a pod's log from a file named by a ``Logs`` object (kwok.x-k8s.io/v1alpha1, the
pod's name and namespace: kwok pkg/kwok/server/debugging_logs.go), read in the CRI log format
(``<RFC 3339 time> stdout F <line>``, parsed by k8s.io/cri-client/pkg/logs). The stack starts kwok-controller
with ``--enable-crds=Logs``, and every address its nodes carry is on loopback
(planb.local.stack.control_plane).

A `PodLog` copies the job's log file, complete lines only, into that format as the job runs; the Logs
object is owned by the pod, so the garbage collector removes it with the pod.
"""

from __future__ import annotations

import time
from pathlib import Path

from planb.kube import Kube, KubeError, Obj
from planb.local.statefile import open_private

LOGS_PATH = "/apis/kwok.x-k8s.io/v1alpha1/namespaces/{namespace}/logs"


def cri_line(line: str, now: float | None = None) -> str:
    """One line of output in the CRI log format kwok parses (a full line: tag F)."""
    t = time.time() if now is None else now
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int((t % 1) * 1e9):09d}Z"
    return f"{stamp} stdout F {line}\n"


class PodLog:
    """The submitter pod's log: the job's log file copied line by line into ``target`` in the CRI format."""

    def __init__(self, kube: Kube, pod: Obj, container: str, source: Path, target: Path) -> None:
        self.kube, self.pod, self.container = kube, pod, container
        self.source, self.target = source, target
        self.offset = 0

    def publish(self) -> str:
        """Create the file and the pod's Logs object (kept if one exists); the API server's refusal, or ''.

        Without the object the pod's log stays empty, as it was before the stack served logs; the job runs
        the same."""
        open_private(self.target, "a").close()  # 0600 in 0700 folders down from the state, whatever the umask
        meta = self.pod["metadata"]
        body = {
            "apiVersion": "kwok.x-k8s.io/v1alpha1",
            "kind": "Logs",
            "metadata": {
                "name": meta["name"],
                "namespace": meta["namespace"],
                "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"]}],
            },
            # `follow` is kwok's field for `kubectl logs -f`; kwok v0.8.0 takes that from the request itself.
            "spec": {"logs": [{"containers": [self.container], "logsFile": str(self.target), "follow": True}]},
        }
        try:
            self.kube.create(LOGS_PATH.format(namespace=meta["namespace"]), body)
        except KubeError as exc:
            if exc.status != 409:
                return str(exc)
        return ""

    def copy(self) -> None:
        """Append the source's complete lines written since the last copy."""
        try:
            with self.source.open("rb") as src:
                src.seek(self.offset)
                chunk = src.read()
        except FileNotFoundError:
            return
        end = chunk.rfind(b"\n")
        if end < 0:
            return
        self.offset += end + 1
        lines = chunk[:end].decode(errors="replace").split("\n")
        now = time.time()
        with open_private(self.target, "a") as out:
            out.write("".join(cri_line(line, now) for line in lines))


__all__ = ["LOGS_PATH", "PodLog", "cri_line"]
