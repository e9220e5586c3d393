"""The planb.gke.emulator_reply lookup against the real GKE emulator: what the gke_cluster role reads instead of
a uri module run (its status, content, json and msg, as uri registers them)."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleLookupError
from ansible_collections.planb.gke.plugins.lookup.emulator_reply import reply

from planb.local.gke_emulator.emulator import RunningEmulator
from planb.local.stack.ports import free_port

KUBECONFIG = "/planb/v1/projects/planb-local/locations/us-east5-b/clusters/tpu-cluster/kubeconfig"


def test_an_answer_is_its_status_content_and_reason(emulator: RunningEmulator) -> None:
    ok = reply(emulator.url + "/planb/v1/healthz", timeout=10)
    assert ok["status"] == 200 and ok["msg"] == "OK" and ok["content"], ok


def test_an_error_keeps_its_json_body(emulator: RunningEmulator) -> None:
    # No such cluster: the emulator hands out no kubeconfig and says why, as GKE's errors do.
    refused = reply(emulator.url + KUBECONFIG, timeout=10)
    assert refused["status"] == 404 and refused["msg"] == "Not Found", refused
    assert (
        refused["json"]["error"]["message"]
        == "Not found: " + KUBECONFIG.removeprefix("/planb/v1/").removesuffix("/kubeconfig") + "."
    )
    assert refused["content"].startswith("{")


def test_nothing_listening_is_status_0_with_the_reason() -> None:
    silent = reply(f"http://127.0.0.1:{free_port()}/planb/v1/healthz", timeout=5)
    assert silent["status"] == 0 and "json" not in silent
    assert "Connection refused" in silent["msg"], silent


def test_only_an_http_url_is_asked() -> None:
    with pytest.raises(AnsibleLookupError, match="takes an http or https URL"):
        reply("file:///etc/passwd", timeout=5)
