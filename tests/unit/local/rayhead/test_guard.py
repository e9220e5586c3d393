"""The Ray head stand-in starts against the local stack's API server only (https://127.0.0.1:<its port>)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from planb import paths
from planb.local.rayhead import server
from planb.local.rayhead.guard import NotLocalStackError, require_local_apiserver

PORT = 26443


def _kubeconfig(tmp_path: Path, address: str) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "c",
                "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
                "clusters": [{"name": "k", "cluster": {"server": address, "insecure-skip-tls-verify": True}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
            }
        )
    )
    return path


def test_the_local_stacks_api_server_is_accepted(tmp_path: Path) -> None:
    address = f"https://127.0.0.1:{PORT}"
    assert require_local_apiserver(_kubeconfig(tmp_path, address), PORT) == address


@pytest.mark.parametrize(
    "address",
    [
        "https://34.118.224.10",  # a GKE cluster's endpoint
        f"https://34.118.224.10:{PORT}",
        "https://127.0.0.1:6443",  # another API server on this machine
        f"http://127.0.0.1:{PORT}",
        f"https://127.0.0.1.example.com:{PORT}",
        "https://127.0.0.1:notaport",
    ],
)
def test_any_other_api_server_is_refused_before_a_request(tmp_path: Path, address: str) -> None:
    kubeconfig = _kubeconfig(tmp_path, address)
    with pytest.raises(
        NotLocalStackError,
        match=r"The Ray head stand-in refuses to start: .*planb's policy, because it writes pod statuses",
    ):
        require_local_apiserver(kubeconfig, PORT)
    with pytest.raises(NotLocalStackError):
        server.run(kubeconfig, PORT, port=0, stopping=lambda: True)


def test_rayhead_run_exits_naming_the_server_it_refused(tmp_path: Path) -> None:
    kubeconfig = _kubeconfig(tmp_path, "https://34.118.224.10")
    env = {**os.environ, "PYTHONPATH": str(paths.REPO / "src"), "PLANB_STATE_DIR": str(tmp_path)}
    argv = ["local", "rayhead", "run", "--kubeconfig", str(kubeconfig), f"--apiserver-port={PORT}", "--port=0"]
    done = subprocess.run(
        [sys.executable, "-m", "planb.cli", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done
    assert f"'https://34.118.224.10', not the local stack's API server https://127.0.0.1:{PORT}" in done.stderr
