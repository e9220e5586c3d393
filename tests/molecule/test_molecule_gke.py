"""`molecule test -s gke` (converge, idempotence, check mode, verify) against the GKE emulator; no Kubernetes stack."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from planb.paths import REPO


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.mark.slow
def test_molecule_gke_scenario(tmp_path: Path) -> None:
    venv_bin = Path(sys.executable).parent
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(venv_bin), os.environ.get("PATH", "")]),
        "PLANB_GKE_EMULATOR_PORT": str(_free_port()),
        "ANSIBLE_NOCOLOR": "1",
        "NO_COLOR": "1",
    }
    for variable in ("GKE_API_ENDPOINT", "PLANB_STATE_DIR", "CLUSTER_NAME", "PROJECT_ID"):
        env.pop(variable, None)
    done = subprocess.run(
        [str(venv_bin / "molecule"), "test", "-s", "gke"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = done.stdout + done.stderr
    (tmp_path / "molecule.log").write_text(output)
    assert done.returncode == 0, output[-5000:]
    for step in ("converge", "idempotence", "check", "verify"):
        assert f"{step}: Executed: Successful" in output, f"molecule step {step} did not run:\n{output[-3000:]}"
