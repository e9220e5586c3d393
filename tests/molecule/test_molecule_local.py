"""`molecule test -s local`: site.yml on the local inventory, idempotence, the two-job failover, stack down."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from planb import paths
from planb.paths import REPO


@pytest.mark.stack
@pytest.mark.slow
def test_molecule_local_scenario(tmp_path: Path) -> None:
    venv_bin = Path(sys.executable).parent
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(paths.tools_dir() / "bin"), str(venv_bin), os.environ.get("PATH", "")]),
        "ANSIBLE_NOCOLOR": "1",
        "NO_COLOR": "1",
    }
    for variable in ("GKE_API_ENDPOINT", "PLANB_GKE_EMULATOR_PORT", "KUBECONFIG", "CLUSTER_NAME", "PROJECT_ID"):
        env.pop(variable, None)
    done = subprocess.run(
        [str(venv_bin / "molecule"), "test", "-s", "local"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    output = done.stdout + done.stderr
    (tmp_path / "molecule.log").write_text(output)
    assert done.returncode == 0, output[-5000:]
    for step in ("create", "converge", "idempotence", "verify", "destroy"):
        assert f"{step}: Executed: Successful" in output, f"molecule step {step} did not run:\n{output[-3000:]}"
    # verify printed the status table: job 1 on plan A, job 2 on plan B.
    assert "all 2 job(s) admitted as expected" in output
