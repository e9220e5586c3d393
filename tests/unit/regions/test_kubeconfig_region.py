"""A region's kubeconfig (planb.regions.kubeconfig.load_region), read from a Secret that whoever writes kueue-system's
Secrets on the manager controls: what it must refuse before it costs the keeper or `planb status` anything."""

from __future__ import annotations

import base64
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from planb import kube
from planb.regions import kubeconfig
from planb.regions.kubeconfig import RegionKubeconfigError, load_region

PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
CA = base64.b64encode(PEM.encode()).decode()


def region_config(server: str = "https://203.0.113.7") -> bytes:
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "r", "cluster": {"server": server, "certificate-authority-data": CA}}],
            "users": [{"name": "u", "user": {"token": "t"}}],
            "contexts": [{"name": "c", "context": {"cluster": "r", "user": "u"}}],
            "current-context": "c",
        }
    ).encode()


def billion_laughs() -> bytes:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 10)}]")
    lines.append("current-context: *a9")
    return ("\n".join(lines) + "\n").encode()


def test_nested_aliases_are_refused_before_any_expansion(monkeypatch: pytest.MonkeyPatch) -> None:
    def compose(*args: Any) -> Any:
        raise AssertionError("the document was composed: its aliases would be expanded")

    monkeypatch.setattr(kubeconfig, "parse", compose)
    data = billion_laughs()
    assert len(data) < 600
    started = time.monotonic()
    with pytest.raises(RegionKubeconfigError, match="anchors or aliases") as err:
        load_region(data, "kueue-system/r")
    assert time.monotonic() - started < 1
    assert "Fix:" in str(err.value)


def test_a_single_anchor_is_refused() -> None:
    data = region_config().replace(b"current-context: c", b"current-context: &x c")
    with pytest.raises(RegionKubeconfigError, match="anchors or aliases"):
        load_region(data, "kueue-system/r")


def test_an_oversized_document_is_refused_unparsed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kubeconfig, "parse", lambda *a: pytest.fail("parsed"))
    data = region_config() + b"#" * kubeconfig.MAX_REGION_KUBECONFIG
    with pytest.raises(RegionKubeconfigError, match="more than"):
        load_region(data, "kueue-system/r")


def test_the_roles_kubeconfig_still_loads() -> None:
    conn = load_region(region_config(), "kueue-system/r")
    assert conn.server == "https://203.0.113.7"
    assert conn.token == "t"


@pytest.mark.parametrize("scheme", ["HTTPS", "Https"])
def test_an_upper_case_scheme_still_uses_the_regions_ca(scheme: str) -> None:
    conn = load_region(region_config(f"{scheme}://203.0.113.7:443"), "kueue-system/r")
    assert conn.server == "https://203.0.113.7:443"
    client = kube.Kube(Path("kueue-system/r"), conn)
    assert client.http.connection_pool_kw.get("ca_cert_data") == PEM
    assert client.http.connection_pool_kw.get("cert_reqs") == "CERT_REQUIRED"
