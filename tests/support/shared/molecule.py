"""Running a molecule scenario the same way for every scenario test."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from planb import paths


def run_scenario(
    scenario: str,
    log: Path,
    set_env: dict[str, str],
    unset: tuple[str, ...],
    timeout: float,
    commands: tuple[tuple[str, ...], ...] = (("test",),),
    reset: bool = False,
    after_each: Callable[[str], None] | None = None,
) -> str:
    """`molecule COMMAND... -s SCENARIO` for each command in turn (`molecule test` by default) from the repository
    root, stopping at the first that fails; asserts success, returns their output together. With `reset`,
    molecule's own state of the scenario is reset before and after; `after_each` is called with each command's
    name once it succeeded."""
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

    def molecule(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(venv_bin / "molecule"), *args, "-s", scenario],
            cwd=paths.REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    # molecule keeps what a scenario made (`created`, `converged`) in its own state under ~/.ansible/tmp; a run
    # with `--destroy never` leaves it behind, and the next run would skip its create. `molecule reset` removes
    # that state (its ephemeral directory) and runs no playbook: each run starts as a first one, and leaves none.
    if reset:
        molecule("reset")
    output = ""
    try:
        for command in commands:
            done = molecule(*command)
            output += done.stdout + done.stderr
            if done.returncode != 0:
                break
            if after_each is not None:
                after_each(command[0])
    finally:
        if reset:
            molecule("reset")
    log.write_text(output)
    assert done.returncode == 0, output[-5000:]
    return output
