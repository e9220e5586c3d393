"""Service Usage at its own paths under the emulator's root URL, for a client pointed there (gcloud).

serviceusage.v1.json (google-api-python-client) has rootUrl https://serviceusage.googleapis.com/ and servicePath
"": services.get is ``v1/{name}`` at the host's root. gcloud with ``api_endpoint_overrides/serviceusage`` set to
the emulator's URL sends exactly that, beside GKE's own ``/v1/projects/*/locations/*`` paths.
"""

from __future__ import annotations

from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.integration.gke.gke_api import call, create

PROJECT, ZONE, CLUSTER = "planb-usage", "us-east5-b", "tpu-cluster"
LOCATION = f"projects/{PROJECT}/locations/{ZONE}"


def test_service_usage_answers_at_its_own_paths_under_the_root_url(emulator: RunningEmulator) -> None:
    """serviceusage.v1.json's paths (``v1/{name}`` at the host's root), for a client pointed at the emulator's URL."""
    emulator.engine.project_apis.op_seconds = 0.0  # an :enable operation is done at its first read
    service = f"/v1/projects/{PROJECT}/services/containerfilesystem.googleapis.com"
    status, body = call(emulator, "GET", service)
    assert status == 200 and body["state"] == "ENABLED", body
    assert body["name"] == f"projects/{PROJECT}/services/containerfilesystem.googleapis.com"
    call(emulator, "POST", "/planb/v1/services", {"service": "containerfilesystem.googleapis.com"})
    assert call(emulator, "GET", service)[1]["state"] == "DISABLED"
    status, operation = call(emulator, "POST", f"{service}:enable", {})
    assert status == 200 and operation["name"].startswith("operations/"), operation
    assert call(emulator, "GET", f"/v1/{operation['name']}") == (200, {**operation, "done": True, "response": {}})
    assert call(emulator, "GET", service)[1]["state"] == "ENABLED"
    # GKE's own paths under /v1/ are still GKE's.
    create(emulator, LOCATION, f"{LOCATION}/clusters", {"cluster": {"name": CLUSTER, "initialClusterVersion": "1.34"}})
    assert call(emulator, "GET", f"/v1/{LOCATION}/clusters/{CLUSTER}")[0] == 200
    assert call(emulator, "GET", f"/v1/{LOCATION}/services/x.googleapis.com")[0] == 405
