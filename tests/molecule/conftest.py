"""Running a molecule scenario the same way for every scenario test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from planb import paths


def run_scenario(
    scenario: str,
    log: Path,
    set_env: dict[str, str],
    unset: tuple[str, ...],
    timeout: float,
    extra: tuple[str, ...] = (),
) -> str:
    """`molecule test -s SCENARIO [EXTRA...]` from the repository root; asserts success, returns its output."""
    venv_bin = Path(sys.executable).parent
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(paths.tools_dir() / "bin"), str(venv_bin), os.environ.get("PATH", "")]),
        "ANSIBLE_NOCOLOR": "1",
        "NO_COLOR": "1",
        **set_env,
    }
    for variable in unset:
        env.pop(variable, None)
    done = subprocess.run(
        [str(venv_bin / "molecule"), "test", "-s", scenario, *extra],
        cwd=paths.REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    output = done.stdout + done.stderr
    log.write_text(output)
    assert done.returncode == 0, output[-5000:]
    return output
