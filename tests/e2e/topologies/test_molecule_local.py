"""The molecule scenario `local` on the session's `site` topology: site.yml from the checkout, the two jobs.

The seed's topology is converged once per test run, from the collection's tarball (the `site` fixture,
tests/support/e2e/outside.py). This test runs the scenario's steps on that stack as `molecule converge` then
`molecule verify`: its create (`planb local up`) finds the stack up; its converge is the checkout's site.yml on the
local inventory, which must change nothing the tarball's converge made and send the GKE emulator no write (on a
converged topology that run is the idempotence check, for the tarball's play too: the same files, see
test_installed_collection.py; `molecule test`'s own idempotence step would be one more identical run, about 20 s);
its verify submits job 1 and job 2 as a developer would and waits until job 1 is admitted on plan A and job 2 on
plan B. The syntax step is left out (the converge parses the same playbooks), and so is destroy (`planb local
down`, what `down`'s own tests run, tests/e2e/stack/test_local_stack.py). Run alone, `molecule test -s local`
still goes destroy, syntax, create, converge, idempotence, verify, destroy on a fresh stack.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from planb.local.gke_emulator.emulator import is_write
from planb.local.gke_emulator.store import read_request_log
from tests.support.shared.molecule import run_scenario


@pytest.mark.slow
def test_molecule_local_scenario_on_the_seeds_topology(site: Path, tmp_path: Path) -> None:
    writes: dict[str, int] = {"before": _writes()}
    output = run_scenario(
        "local",
        tmp_path / "molecule.log",
        {},
        ("GKE_API_ENDPOINT", "PLANB_GKE_EMULATOR_PORT", "KUBECONFIG", "CLUSTER_NAME", "PROJECT_ID"),
        timeout=280,
        commands=(("converge",), ("verify",)),
        reset=True,
        after_each=lambda command: writes.update({command: _writes()}),
    )
    for step in ("create", "converge", "verify"):
        assert f"{step}: Executed: Successful" in output, f"molecule step {step} did not run:\n{output[-3000:]}"
    assert "destroy: Executed" not in output and "idempotence: Executed" not in output
    # The stack was up: create found it so. The checkout's converge changed nothing the tarball's converge made.
    recaps = re.findall(r"localhost\s*:\s*ok=\d+\s+changed=(\d+)", output)
    assert len(recaps) >= 3, output[-3000:]  # create, converge, verify
    create, converge = (int(changed) for changed in recaps[:2])
    assert (create, converge) == (0, 0), output[-5000:]
    assert writes["converge"] == writes["before"], "the checkout's converge wrote to the GKE emulator"
    # verify printed the status table: job 1 on plan A, job 2 on plan B.
    assert "all 2 job(s) admitted as expected" in output


def _writes() -> int:
    """How many writes (any method but GET) the GKE emulator has served."""
    return len([entry for entry in read_request_log() if is_write(entry)])
