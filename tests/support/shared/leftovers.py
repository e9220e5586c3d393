"""What a play leaves in its temporary folder: ansible-playbook runs in tests get a TMPDIR of their own (which
Python's tempfile, helm and gcloud read), and a file a run leaves there, it would leave in an operator's /tmp on every
run."""

from __future__ import annotations

from pathlib import Path

#: Kept by design: kubernetes.core's API discovery cache, one file per cluster (k8srcp-<hash>.json, its
#: module_utils/client/discovery.py).
KEPT_PREFIX = "k8srcp-"


def assert_nothing_left(temporary: Path, what: str) -> None:
    """Fail, naming `what` and the files, when `temporary` holds anything but kubernetes.core's discovery cache."""
    left = sorted(path.name for path in temporary.iterdir() if not path.name.startswith(KEPT_PREFIX))
    assert not left, f"{what} left temporary files behind: {left}"
