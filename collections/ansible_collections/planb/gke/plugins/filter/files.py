# planb.gke: what a file on the controller holds, so a no-op converge can leave it be without a module run.
"""Ansible filter ``planb.gke.private_file_holds``: whether a file is this user's alone and holds exactly a text.

::

    when: not (gke_cluster_kubeconfig_path | planb.gke.private_file_holds(content))

The plays run on the controller (``ansible_connection: local``), like Jinja's ``is file``, so the filter reads the
path where the modules write it. ``ansible.builtin.copy`` would find the same with two module runs (``stat`` for
the checksum, then ``file`` for the mode), each a new Python process.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from typing import Any

from ansible.errors import AnsibleFilterError


def private_file_holds(path: str, content: str, mode: str = "0600") -> bool:
    """True when ``path`` is a regular file (not a link) of permissions ``mode`` whose bytes are ``content``."""
    try:
        wanted = int(str(mode), 8)
    except ValueError as exc:
        raise AnsibleFilterError(f"planb.gke.private_file_holds: mode {mode!r} is not an octal mode") from exc
    try:
        info = os.lstat(str(path))
    except OSError:
        return False
    if not stat.S_ISREG(info.st_mode) or stat.S_IMODE(info.st_mode) != wanted:
        return False
    try:
        with open(str(path), "rb") as handle:
            return handle.read() == str(content).encode()
    except OSError:
        return False


class FilterModule:
    """planb.gke file filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"private_file_holds": private_file_holds}
