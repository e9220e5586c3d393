"""An API server's 3xx is no success. planb follows no redirect (urllib3 retries=False); before, a 302
read as `{}`, so a list of a region's RayClusters read as none (the unsafe side for the keeper's release). Now any
status outside 200-299 raises KubeError naming the status. The server is on 127.0.0.1, run by the test."""

from __future__ import annotations

from pathlib import Path

import pytest

from planb.kube import Kube, KubeError
from planb.kubeconfig import Connection
from planb.local.tls import ServingCert, ensure_serving_cert
from tests.support.integration.loopback_json import Answer, json_server

RAYCLUSTERS = "/apis/ray.io/v1/rayclusters"


@pytest.fixture
def cert(tmp_path: Path) -> ServingCert:
    return ensure_serving_cert(tmp_path / "region-pki", common_name="planb-test-region")


@pytest.mark.parametrize("status", [301, 302, 307])
def test_a_redirect_is_an_error_and_not_an_empty_list(cert: ServingCert, status: int) -> None:
    seen: list[tuple[str, str]] = []
    with json_server(cert, lambda path: Answer(status, b'{"items": []}'), seen) as url:
        client = Kube(Path("Secret kueue-system/a-multikueue"), Connection(url, ca_data=cert.ca_crt.read_text()))
        with pytest.raises(KubeError) as caught:
            client.items(RAYCLUSTERS)
        with pytest.raises(KubeError):
            client.get(f"{RAYCLUSTERS}/x")
        with pytest.raises(KubeError):
            client.text(f"{RAYCLUSTERS}/x")
    assert caught.value.status == status
    assert f"GET {RAYCLUSTERS} answered a redirect, not followed" in str(caught.value)
    assert len(seen) == 3, seen  # one request each: nothing followed


def test_a_204_without_a_body_is_still_a_success(cert: ServingCert) -> None:
    with json_server(cert, lambda path: Answer(204, b"")) as url:
        client = Kube(Path("Secret kueue-system/a-multikueue"), Connection(url, ca_data=cert.ca_crt.read_text()))
        assert client.get("/x") == {}
