"""`molecule test -s local`: site.yml on the local inventory, idempotence, the two-job failover, stack down."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.molecule.conftest import run_scenario


@pytest.mark.stack
@pytest.mark.stack_teardown(order=3)  # its sequence starts with destroy and ends with destroy
@pytest.mark.slow
def test_molecule_local_scenario(tmp_path: Path) -> None:
    output = run_scenario(
        "local",
        tmp_path / "molecule.log",
        {},
        ("GKE_API_ENDPOINT", "PLANB_GKE_EMULATOR_PORT", "KUBECONFIG", "CLUSTER_NAME", "PROJECT_ID"),
        timeout=280,
    )
    for step in ("create", "converge", "idempotence", "verify", "destroy"):
        assert f"{step}: Executed: Successful" in output, f"molecule step {step} did not run:\n{output[-3000:]}"
    # verify printed the status table: job 1 on plan A, job 2 on plan B.
    assert "all 2 job(s) admitted as expected" in output
