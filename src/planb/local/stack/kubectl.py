"""kubectl against the local stack (the preinstalled client; the server is ours)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from planb.local.stack.errors import LocalStackError


def kubectl(kubeconfig: Path, args: Sequence[str], *, stdin: str | None = None, timeout: float = 120) -> str:
    """Run kubectl and return stdout; raise LocalStackError with stderr on failure."""
    binary = shutil.which("kubectl")
    if binary is None:
        raise LocalStackError("kubectl is not on PATH. Fix: install kubectl (any 1.3x client).")
    try:
        proc = subprocess.run(
            [binary, "--kubeconfig", str(kubeconfig), *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise LocalStackError(f"kubectl {' '.join(args)} did not answer within {timeout:.0f} s") from exc
    if proc.returncode != 0:
        raise LocalStackError(f"kubectl {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout
