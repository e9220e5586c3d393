"""The node pools the capacity simulator serves, read over the GKE API (container v1) as GKE's autoscaler reads them.

Each pass lists the project's clusters in every location, ``GET {endpoint}/v1/projects/{project}/locations/-/clusters``
(GKE's clusters.list takes location ``-`` for all zones and regions), then each cluster's pools,
``GET {endpoint}/v1/projects/{project}/locations/{location}/clusters/{cluster}/nodePools``. In local mode the
endpoint is the GKE emulator's (``planb local gke-emulator start`` / ``planb local up``); the simulator never reads the
emulator's files.

A request that gets no answer (the emulator is not running, a connection that breaks, a timeout), an error answer
or a body that is not a GKE list raises `GkeUnavailableError`: the simulator says so once and tries again on its next
pass, leaving every node as it is meanwhile (an empty answer would read as "every pool is gone"). A cluster deleted
between the two requests (404 on its pools) has no pools.
"""

from __future__ import annotations

import http.client
import json
import os
import ssl
from typing import Any
from urllib.parse import quote, urlsplit

from planb.errors import PlanbError
from planb.local.gke_emulator.background import default_port

Body = dict[str, Any]
#: GKE's location wildcard in clusters.list: every zone and region of the project.
ALL_LOCATIONS = "-"
#: Seconds one request may take.
TIMEOUT_S = 10.0


class GkeUnavailableError(PlanbError):
    """The GKE API did not give the simulator its node pools this time."""


def default_endpoint() -> str:
    """The GKE emulator's address on this machine (its port: PLANB_GKE_EMULATOR_PORT, as `start` binds it)."""
    return f"http://127.0.0.1:{default_port()}"


def default_project() -> str:
    """The project the local inventory uses: PROJECT_ID, else planb-local (inventories/local/group_vars/all.yml)."""
    return os.environ.get("PROJECT_ID") or "planb-local"


class NodePoolReader:
    """Every node pool of one project's clusters in `location` (default: all locations), from the GKE API."""

    def __init__(self, endpoint: str, project: str, location: str = ALL_LOCATIONS, timeout: float = TIMEOUT_S) -> None:
        self.endpoint = endpoint.rstrip("/")
        self.project = project
        self.location = location
        self.timeout = timeout
        #: The path the endpoint's own URL carries before ``/v1/`` ('' for the emulator's).
        self.base = urlsplit(self.endpoint).path
        self._connection: http.client.HTTPConnection | None = None

    def __repr__(self) -> str:
        return f"NodePoolReader({self.endpoint!r}, {self.project!r}, {self.location!r})"

    def _get(self, *segments: str, allow_404: bool = False) -> Body | None:
        path = "/".join(quote(segment, safe="") for segment in segments)
        try:
            status, text = self._request(f"/v1/{path}")
        except (OSError, http.client.HTTPException) as exc:
            raise GkeUnavailableError(
                f"no node pools: the GKE API at {self.endpoint} does not answer (GET v1/{path}: {exc}); "
                "`planb local up` starts the GKE emulator (or `planb local gke-emulator start`)"
            ) from exc
        if status == 404 and allow_404:
            return None
        if status >= 400:
            try:
                message = json.loads(text or b"{}").get("error", {}).get("message", "")
            except (ValueError, AttributeError):
                message = ""
            raise GkeUnavailableError(
                f"no node pools: the GKE API at {self.endpoint} answered GET v1/{path} with {status} {message}"
            )
        try:
            answer = json.loads(text or b"{}")
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise GkeUnavailableError(
                f"no node pools: the GKE API at {self.endpoint} answered GET v1/{path} with {text[:200]!r}"
            )
        return answer

    def _request(self, path: str) -> tuple[int, bytes]:
        """One GET on the reader's kept-alive connection (HTTP/1.1), its status and body. A kept connection the server
        closed meanwhile (a restarted emulator) is opened again once; a pass then costs two requests and no new
        connection, where a connection per request cost the simulator and the emulator most of their idle time."""
        for attempt in (1, 2):
            reused = self._connection is not None
            if self._connection is None:
                self._connection = self._connect()
            try:
                self._connection.request("GET", self.base + path, headers={"Accept": "application/json"})
                response = self._connection.getresponse()
                return response.status, response.read()
            except (OSError, http.client.HTTPException):
                self._connection.close()
                self._connection = None
                if not reused or attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _connect(self) -> http.client.HTTPConnection:
        url = urlsplit(self.endpoint)
        if url.scheme == "https":
            return http.client.HTTPSConnection(url.netloc, timeout=self.timeout, context=ssl.create_default_context())
        return http.client.HTTPConnection(url.netloc, timeout=self.timeout)

    def clusters(self) -> list[Body]:
        """The project's clusters in the reader's location (clusters.list)."""
        answer = self._get("projects", self.project, "locations", self.location, "clusters") or {}
        return [c for c in answer.get("clusters") or [] if isinstance(c, dict)]

    def node_pools(self) -> list[Body]:
        """Every pool of the project's clusters, each with ``cluster`` set to its cluster's resource name and
        ``clusterMasterVersion`` to its control plane's version (what a Spot pool's shutdown depends on)."""
        out: list[Body] = []
        for cluster in self.clusters():
            name, location = str(cluster.get("name", "")), str(cluster.get("location", ""))
            parent = ("projects", self.project, "locations", location, "clusters", name)
            answer = self._get(*parent, "nodePools", allow_404=True)
            for pool in (answer or {}).get("nodePools") or []:
                if isinstance(pool, dict):
                    out.append(
                        dict(
                            pool,
                            cluster="/".join(parent),
                            clusterMasterVersion=str(cluster.get("currentMasterVersion", "")),
                        )
                    )
        return out
