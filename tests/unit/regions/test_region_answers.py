"""A region's token and answers that are not what planb asks for: each is a typed
error (RegionKubeconfigError, KubeError) the keeper and `planb status` already take as "this region is unreadable",
never a ValueError or TypeError that stops every region's loop, and none quotes the token or the answer's body."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
import yaml

from planb.kube import Kube, KubeError
from planb.kubeconfig import Connection
from planb.regions.access.kubeconfig import RegionKubeconfigError, load_region

PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def region_config(token: str) -> bytes:
    ca = base64.b64encode(PEM.encode()).decode()
    return yaml.safe_dump(
        {
            "clusters": [{"name": "r", "cluster": {"server": "https://203.0.113.7", "certificate-authority-data": ca}}],
            "users": [{"name": "u", "user": {"token": token}}],
            "contexts": [{"name": "c", "context": {"cluster": "r", "user": "u"}}],
            "current-context": "c",
        }
    ).encode()


@pytest.mark.parametrize("token", ["abc\r\nX-Injected: 1", "abc def", "abc\tdef", "abc\x00", "abcé"])
def test_a_token_an_http_header_cannot_carry_is_refused_by_field_not_by_text(token: str) -> None:
    with pytest.raises(RegionKubeconfigError, match="the token of user 'u'") as err:
        load_region(region_config(token), "Secret kueue-system/r")
    assert "abc" not in str(err.value) and "Injected" not in str(err.value)
    jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2ln-_~+/="  # a ServiceAccount token's characters still load
    assert load_region(region_config(jwt), "Secret kueue-system/r").token == jwt


class Answer:
    def __init__(self, data: bytes, status: int = 200) -> None:
        self.data, self.status, self.reason = data, status, "OK"

    def release_conn(self) -> None:
        pass


class Transport:
    """In place of urllib3's PoolManager: every request answers `data` (nothing is sent)."""

    def __init__(self, data: bytes = b"", refuse: Exception | None = None) -> None:
        self.data, self.refuse = data, refuse

    def request(self, method: str, url: str, **kwargs: Any) -> Answer:
        if self.refuse is not None:
            raise self.refuse
        return Answer(self.data)


def answering(data: bytes = b"", refuse: Exception | None = None) -> Kube:
    kube = Kube(Path("Secret kueue-system/a"), Connection(server="https://a.example", token="t"))
    kube.http = Transport(data, refuse)  # type: ignore[assignment]
    return kube


PATH = "/apis/ray.io/v1/namespaces/default/rayjobs/job-1"


@pytest.mark.parametrize("body", [b"<html><body>\x1b[2J proxy says no</body></html>", b"[1]", b'"text"', b"\xff"])
def test_an_answer_that_is_not_a_json_object_is_a_kube_error_naming_path_and_status(body: bytes) -> None:
    with pytest.raises(KubeError) as err:
        answering(body).get(PATH)
    assert err.value.status == 200
    assert PATH in str(err.value) and "200 OK" in str(err.value)
    assert "proxy" not in str(err.value) and "[1]" not in str(err.value)


def test_nesting_too_deep_for_the_json_library_is_a_kube_error() -> None:
    with pytest.raises(KubeError):
        answering(b"[" * 200_000 + b"]" * 200_000).get(PATH)


def test_a_list_whose_items_are_not_objects_is_a_kube_error() -> None:
    with pytest.raises(KubeError, match="not objects"):
        answering(b'{"items": [1, "x"]}').items("/apis/ray.io/v1/rayclusters")
    assert answering(b'{"items": [{"metadata": {"name": "x"}}]}').items("/apis/ray.io/v1/rayclusters") == [
        {"metadata": {"name": "x"}}
    ]


def test_a_header_the_http_client_refuses_is_a_kube_error_without_its_value() -> None:
    """http.client's own ValueError quotes the header value, the bearer token with it: not in the KubeError."""
    refused = ValueError("Invalid header value b'Bearer s3cret\\r\\nX: 1'")
    with pytest.raises(KubeError, match="refused a header value") as err:
        answering(refuse=refused).get(PATH)
    assert "s3cret" not in str(err.value) and err.value.__suppress_context__
