"""What the simulator's reconcilers share, handed to each explicitly: the cluster's API, the log, the state
directory, the ProvisioningRequest, pod and node watches and the loop's next wake-up.

planb.local.capacity.simulator makes one `Context` and passes it to every reconciler it holds (nodes, Spot,
queued provisioning, best-effort atomic, the autoscaler). A reconciler keeps its own state; what it shares
with the others goes through here or through a small method of the reconciler that owns it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from planb.kube import Kube, Obj
from planb.local.capacity import dws
from planb.local.informer import Informer


class Context:
    """The API, the log and the timer every reconciler of one simulator uses."""

    def __init__(self, kube: Kube, log: Callable[[str], None], state_dir: Path | None) -> None:
        self.kube = kube
        self.log = log
        self.state_dir = state_dir
        #: The ProvisioningRequest watch while `run` runs (None: a pass lists them itself).
        self.informer: Informer | None = None
        #: The pod watch while `run` runs (None: a pass lists the pods itself).
        self.pod_informer: Informer | None = None
        #: The node watch while `run` runs (None: a pass lists the simulator's nodes itself).
        self.node_informer: Informer | None = None
        #: Set when the simulator wrote a node (made, removed, noticed): the next pass lists the nodes, so it never
        #: reads a cache that has not yet seen its own write.
        self.nodes_written = False
        #: The earliest timer (wall clock) a pass found: a delay, booking window or run duration ending.
        self.next_deadline = float("inf")

    def deadline(self, when: float) -> None:
        """Wake the loop at `when` (wall clock) at the latest."""
        self.next_deadline = min(self.next_deadline, when)

    def requests(self) -> list[Obj] | None:
        """Every ProvisioningRequest: the watch's cache under `run` once it has listed, else one list; None before
        the watch's first list (an empty cache then does not mean every request is gone). As `pods`: once it has
        listed, while the watch is failing its cache may still hold a request deleted since (its nodes would be kept,
        or made, for a job that is gone) or miss one made since, so a pass lists them itself until the watch is back
        (the watch's error clears when a watch request ends well, within `informer.WATCH_SECONDS`)."""
        informer = self.informer
        if informer is not None:
            if not informer.synced.is_set():
                return None
            if not informer.error:
                return informer.snapshot()
        return self.kube.items(f"{dws.PR_PATH}/provisioningrequests")

    def pods(self) -> list[Obj]:
        """Every pod, to read only: the watch's cache under `run` once it has listed, else one list. A pass read the
        pods by a list of every pod in the cluster up to three times (what runs, what a best-effort request's pods
        took, what is pending): on the e2e stack 4.5 lists a second of some 25 KB a pod, the largest share of the API
        server's reads; the watch brings each change once. While the watch is failing its cache may miss a pod bound
        since (a busy node would look idle to scale-down), so a pass lists them itself until the watch is back. The
        dicts are the cache's own: callers only read them."""
        informer = self.pod_informer
        if informer is not None and informer.synced.is_set() and not informer.error:
            return informer.snapshot()
        return self.kube.items("/api/v1/pods")

    def set_pr_conditions(
        self, pr: Obj, updates: list[tuple[str, str, str, str]], details: dict[str, str] | None = None
    ) -> Obj:
        """Set conditions (type, status, reason, message) and provisioningClassDetails of a request; returns the
        request as written."""
        patch = dws.status_patch(pr, updates, details)
        if patch is None:
            return pr
        meta = pr["metadata"]
        written = self.kube.merge_patch(
            f"{dws.PR_PATH}/namespaces/{meta['namespace']}/provisioningrequests/{meta['name']}/status",
            {"status": patch},
        )
        if self.informer is not None and written:
            self.informer.put(written)  # the next pass must not act on the version before this write
        return written or pr
