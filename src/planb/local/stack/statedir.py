"""Directories of local mode's state, and removing only what planb put there.

``PLANB_STATE_DIR`` may point anywhere, a home directory included, so `planb local down` must never
delete a directory wholesale because of its name (``~/local``, ``~/gke``). A directory planb creates
carries a marker file; `remove` deletes such a directory entirely. In a directory without the
marker (it existed before planb used it) only the entries planb writes there are removed, the
directory itself only if that leaves it empty, and whatever else is in it is reported and kept.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from planb.local.statefile import private_dir, write_atomic

#: The file that says "planb created this directory".
MARKER = ".planb-owned"
_MARKER_TEXT = "Created by planb; 'planb local down' removes this directory and everything in it.\n"


def create(path: Path) -> bool:
    """Create `path` (mode 0700) with the marker if it does not exist; True if it was created here."""
    if path.exists():
        return False
    private_dir(path)
    write_atomic(path / MARKER, _MARKER_TEXT)
    return True


def owned(path: Path) -> bool:
    return (path / MARKER).is_file()


def remove(path: Path, known: Sequence[str]) -> list[Path]:
    """Remove what planb put under `path`; the entries left behind (planb did not create them).

    `known` are glob patterns, relative to `path`, of what planb writes there; they are the only
    entries removed from a directory without the marker.
    """
    if not path.is_dir() or path.is_symlink():
        return []
    if owned(path):
        shutil.rmtree(path)
        return []
    for pattern in known:
        for match in sorted(path.glob(pattern), key=lambda p: len(p.parts), reverse=True):
            if match.is_dir() and not match.is_symlink():
                shutil.rmtree(match)
            else:
                match.unlink(missing_ok=True)
            # Parents of a nested pattern (kwok/clusters/planb) go too once empty.
            parent = match.parent
            while parent != path and parent.is_dir() and not any(parent.iterdir()):
                parent.rmdir()
                parent = parent.parent
    left = sorted(path.iterdir())
    if not left:
        path.rmdir()
    return left
