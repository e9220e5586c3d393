"""A region's kubeconfig (planb.regions.access.kubeconfig.load_region), read from a Secret that whoever writes
kueue-system's Secrets on the manager controls: what it must refuse before it costs the keeper or `planb status`
anything."""

from __future__ import annotations

import base64
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from planb import kube
from planb.regions.access import kubeconfig
from planb.regions.access.kubeconfig import RegionKubeconfigError, load_region

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
    started = time.process_time()  # CPU time, as below
    with pytest.raises(RegionKubeconfigError, match="anchors or aliases") as err:
        load_region(data, "kueue-system/r")
    assert time.process_time() - started < 1
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


def block_mapping(depth: int) -> bytes:
    """A block mapping `depth` levels deep, one space more indentation per level, as a kubeconfig nests."""
    return "".join(" " * i + f"k{i}:\n" for i in range(depth)).encode() + b" " * depth + b"tok3n-secret\n"


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"[" * 100_000, id="flow-sequences-100000"),
        pytest.param(b"{" * 100_000, id="flow-mappings-100000"),
        pytest.param(b"[" * 3000 + b"]" * 3000, id="flow-sequences-3000-closed"),
        pytest.param(block_mapping(1000), id="block-mapping-1000"),
        pytest.param(b"{a: " * 1000 + b"b" + b"}" * 1000, id="flow-mapping-1000"),
        pytest.param(b"- " * 1000 + b"x\n", id="block-sequence-1000"),
    ],
)
def test_deep_nesting_is_refused_before_the_loader_recurses(data: bytes) -> None:
    assert len(data) < kubeconfig.MAX_REGION_KUBECONFIG
    started = time.process_time()  # CPU time: the scan's own work, not a wait for the CPU under make test's load
    with pytest.raises(RegionKubeconfigError, match=f"nesting deeper than {kubeconfig.MAX_REGION_NESTING} levels"):
        load_region(data, "kueue-system/r")
    assert time.process_time() - started < 5


def test_the_nesting_refusal_names_the_place_not_the_text() -> None:
    with pytest.raises(RegionKubeconfigError) as err:
        load_region(block_mapping(1000), "kueue-system/r")
    message = str(err.value)
    assert message.startswith("kueue-system/r ")
    assert "at line 33, column 33" in message
    assert "k32" not in message and "tok3n" not in message
    assert "Fix:" in message


def test_nesting_up_to_the_bound_is_still_read() -> None:
    # 32 levels pass the event scan; the document then fails as a kubeconfig, not as YAML too deep.
    with pytest.raises(RegionKubeconfigError, match="not a kubeconfig with a current-context"):
        load_region(b"[" * 32 + b"]" * 32, "kueue-system/r")


def test_a_recursion_error_of_the_yaml_library_is_refused_as_the_region_s(monkeypatch: pytest.MonkeyPatch) -> None:
    def recurse(*args: Any) -> Any:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(kubeconfig, "parse", recurse)
    with pytest.raises(RegionKubeconfigError, match="nesting too deep") as err:
        load_region(region_config(), "kueue-system/r")
    assert err.value.__cause__ is None and err.value.__suppress_context__


def test_a_recursion_error_while_scanning_events_is_refused_too(monkeypatch: pytest.MonkeyPatch) -> None:
    def recurse(*args: Any, **kwargs: Any) -> Any:
        raise RecursionError("maximum recursion depth exceeded")
        yield  # a generator, as yaml.parse is

    monkeypatch.setattr(yaml, "parse", recurse)
    with pytest.raises(RegionKubeconfigError, match="nesting too deep"):
        load_region(region_config(), "kueue-system/r")


def test_a_kubeconfig_of_several_entries_still_loads() -> None:
    config = yaml.safe_load(region_config())
    config["clusters"].append(
        {"name": "other", "cluster": {"server": "https://198.51.100.1", "certificate-authority-data": CA}}
    )
    config["users"].append({"name": "v", "user": {"token": "w"}})
    config["contexts"].append({"name": "d", "context": {"cluster": "other", "user": "v", "namespace": "ns"}})
    for style in (False, True, None):
        conn = load_region(yaml.safe_dump(config, default_flow_style=style).encode(), "kueue-system/r")
        assert (conn.server, conn.token) == ("https://203.0.113.7", "t")
