"""A local GKE API: the container/v1 subset planb's modules use, served on a loopback address.

The parts: ``gke_emulator.store`` (state on disk), ``gke_emulator.engine`` (clusters, node pools and the rest of the
API's behaviour), ``gke_emulator.operations`` (long-running operations), ``gke_emulator.routes`` (which REST path does
what, and the emulator-only endpoints), ``gke_emulator.server`` (HTTP). ``RunningEmulator`` puts them together in
a background thread, for tests and in-process use; ``planb local gke-emulator serve`` (``gke_emulator.cli``) serves the
same engine in the foreground.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from planb.local.gke_emulator.engine import Engine
from planb.local.gke_emulator.operations import DEFAULT_OP_SECONDS
from planb.local.gke_emulator.server import EmulatorHTTPServer
from planb.local.gke_emulator.store import Store
from planb.local.tls import ServingCert

Body = dict[str, Any]

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: POST methods that change nothing: Cloud Resource Manager's projects.testIamPermissions and projects.getIamPolicy,
#: which its discovery document (cloudresourcemanager.v3.json) allows under the cloud-platform.read-only scope.
READ_ONLY_POSTS = (":testIamPermissions", ":getIamPolicy")


def is_write(entry: Body) -> bool:
    """Whether a request of the emulator's log (``Store.request_log``, ``read_request_log``) was a write: a POST,
    PUT, PATCH or DELETE, but not a POST that changes nothing (``READ_ONLY_POSTS``)."""
    return entry["method"] in WRITE_METHODS and not str(entry["path"]).endswith(READ_ONLY_POSTS)


class RunningEmulator:
    """An emulator served from a background thread (tests, in-process use); HTTPS when given a serving pair."""

    def __init__(
        self,
        state_dir: Path,
        port: int = 0,
        op_seconds: float = DEFAULT_OP_SECONDS,
        kubeconfig: Path | None = None,
        tls: ServingCert | None = None,
    ) -> None:
        self.store = Store(state_dir)
        self.engine = Engine(self.store, op_seconds=op_seconds, kubeconfig=kubeconfig)
        self.server = EmulatorHTTPServer(self.engine, port=port, tls=tls)
        # serve_forever checks for shutdown() every poll_interval (0.5 s by default): stop() returns within 0.05 s.
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, name="gke-emulator", daemon=True
        )
        self.thread.start()

    @property
    def url(self) -> str:
        return self.server.url

    def writes(self) -> list[Body]:
        """Write requests (POST/PUT/PATCH/DELETE) the GKE API received so far; a POST that changes nothing
        (``READ_ONLY_POSTS``: a rights check) is not one."""
        return [r for r in self.store.request_log() if is_write(r)]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
