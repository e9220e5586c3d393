"""`molecule test -s gke` (converge, idempotence, check mode, verify) against the GKE emulator; no Kubernetes stack."""

from __future__ import annotations

from pathlib import Path

import pytest

from planb.local.stack.ports import free_port
from tests.support.shared.molecule import run_scenario


@pytest.mark.slow
def test_molecule_gke_scenario(tmp_path: Path) -> None:
    output = run_scenario(
        "gke",
        tmp_path / "molecule.log",
        {"PLANB_GKE_EMULATOR_PORT": str(free_port())},
        ("GKE_API_ENDPOINT", "PLANB_STATE_DIR", "CLUSTER_NAME", "PROJECT_ID"),
        timeout=600,
    )
    for step in ("converge", "idempotence", "check", "verify"):
        assert f"{step}: Executed: Successful" in output, f"molecule step {step} did not run:\n{output[-3000:]}"
