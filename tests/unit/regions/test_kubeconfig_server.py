"""The server a region's kubeconfig names is checked as it is used. urlsplit drops tab, CR and LF and
leading spaces and C0 before the host check, and the server was returned as written, those characters still in it;
now a server with any character outside printable ASCII (or a space) is refused, and the URL returned is rebuilt from
the checked parts."""

from __future__ import annotations

import base64

import pytest
import yaml

from planb.regions.access.kubeconfig import RegionKubeconfigError, load_region

PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def config(server: str) -> bytes:
    ca = base64.b64encode(PEM.encode()).decode()
    return yaml.safe_dump(
        {
            "clusters": [{"name": "r", "cluster": {"server": server, "certificate-authority-data": ca}}],
            "users": [{"name": "u", "user": {"token": "t"}}],
            "contexts": [{"name": "c", "context": {"cluster": "r", "user": "u"}}],
            "current-context": "c",
        }
    ).encode()


@pytest.mark.parametrize(
    "server",
    [
        "https://good.example\t.evil.com",
        " https://good.example",
        "https://good.example\n",
        "https://good.example\r.evil.com",
        "\x00https://good.example",
        "https://gööd.example",
        "https://good.example/a b",
    ],
)
def test_a_server_with_a_character_urlsplit_would_drop_is_refused(server: str) -> None:
    with pytest.raises(RegionKubeconfigError, match="a space, a control character or a character outside printable"):
        load_region(config(server), "Secret kueue-system/a")


@pytest.mark.parametrize(
    ("server", "used"),
    [
        ("HTTPS://203.0.113.7:6443/", "https://203.0.113.7:6443"),
        ("https://region.example/prefix//", "https://region.example/prefix"),
        ("https://region.example?", "https://region.example"),
    ],
)
def test_the_server_used_is_rebuilt_from_the_parts_checked(server: str, used: str) -> None:
    assert load_region(config(server), "Secret kueue-system/a").server == used
