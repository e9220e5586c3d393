"""Running a one-off playbook against the checkout's roles, as the kueue role tests do: on localhost, with the
checkout's ansible.cfg and the collection's roles, the extra variables as JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from planb import paths


def run_playbook(playbook: Path, text: str, extra_vars: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """Write `text` to `playbook` and run it with `extra_vars` (and this interpreter as the target's Python)."""
    playbook.write_text(text)
    variables = {"ansible_python_interpreter": sys.executable, **extra_vars}
    return subprocess.run(
        [
            str(Path(sys.executable).parent / "ansible-playbook"),
            "-i",
            "localhost,",
            "-c",
            "local",
            "-e",
            json.dumps(variables),
            str(playbook),
        ],
        cwd=paths.REPO,
        env={
            **os.environ,
            "ANSIBLE_CONFIG": str(paths.REPO / "ansible.cfg"),
            "ANSIBLE_ROLES_PATH": str(paths.REPO / "collections/ansible_collections/planb/gke/roles"),
            "ANSIBLE_NOCOLOR": "1",
        },
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
