"""The guard of local-only components: only a kubeconfig whose server is the local stack's API server passes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from planb.local import apiserver as local_apiserver
from planb.local import failover_settings
from planb.local.apiserver import NotLocalStackError
from planb.local.stack.kwokctl_config import APISERVER_PORT, BIND_ADDRESS
from planb.local.stack.parts import StackParts


def _kubeconfig(tmp_path: Path, server: str) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
        f"clusters: [{{name: x, cluster: {{server: '{server}'}}}}]\n"
        "contexts: [{name: x, context: {cluster: x, user: x}}]\nusers: [{name: x, user: {token: t}}]\n"
    )
    return path


def test_the_control_plane_listens_where_the_guard_expects() -> None:
    assert f"https://{BIND_ADDRESS}:{APISERVER_PORT}" == local_apiserver.SERVER == "https://127.0.0.1:26443"


@pytest.mark.parametrize("server", ["https://127.0.0.1:26443", "https://127.0.0.1:26443/"])
def test_the_local_stacks_server_passes(tmp_path: Path, server: str) -> None:
    assert local_apiserver.require_local(_kubeconfig(tmp_path, server), "x") == "https://127.0.0.1:26443"


@pytest.mark.parametrize(
    "server",
    [
        "https://34.118.0.1",  # a GKE control plane
        "https://10.0.0.1:26443",
        "https://127.0.0.1:6443",  # another local cluster (kind, minikube)
        "http://127.0.0.1:26443",
        "https://localhost:26443",
        "https://127.0.0.1:26443/proxy",
        "https://user@127.0.0.1:26443",
        "https://127.0.0.1:port",
    ],
)
def test_any_other_server_is_refused_naming_it_and_the_fix(tmp_path: Path, server: str) -> None:
    config = _kubeconfig(tmp_path, server)
    with pytest.raises(local_apiserver.NotLocalStackError) as refused:
        local_apiserver.require_local(config, "the capacity simulator")
    message = str(refused.value)
    assert message.startswith(f"the capacity simulator refuses to start: {config}'s server is {server!r}")
    assert "planb's policy, because" in message and "https://127.0.0.1:26443" in message


def test_the_failover_controllers_local_mode_refuses_another_api_server(tmp_path: Path) -> None:
    """`planb local failover` starts the controller only against the local stack's API server."""
    parts = StackParts(tmp_path / "local")
    parts.kubeconfig.parent.mkdir(parents=True)
    parts.kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "c",
                "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
                "clusters": [{"name": "k", "cluster": {"server": "https://34.118.224.10"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
            }
        )
    )
    failover_settings.save(parts.state, failover_settings.FailoverSettings(after_seconds=8))
    with pytest.raises(NotLocalStackError, match=r"The failover controller's local mode refuses to start"):
        parts.start_failover()
    assert parts.failover.pid() is None
