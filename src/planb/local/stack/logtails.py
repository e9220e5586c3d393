"""The last lines of the stack's logs, for the error of an `up` that failed from nothing: that `up` removes its state
(nothing half-created is left), so its logs would go with it. The most recently written logs come first: the part
that failed is usually the last one that wrote."""

from __future__ import annotations

from pathlib import Path

#: How many logs, and how many of each one's last lines, an error carries.
LOGS = 4
LINES = 6


def log_tails(state: Path, logs: int = LOGS, lines: int = LINES) -> str:
    """Up to `logs` of the `*.log` files under `state` (newest first), each with its last `lines` lines; "" if none."""
    found: list[tuple[float, Path]] = []
    for path in state.rglob("*.log"):
        try:
            found.append((path.stat().st_mtime, path))
        except OSError:
            continue
    parts = []
    for _mtime, path in sorted(found, reverse=True)[:logs]:
        try:
            tail = path.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            continue
        shown = "\n".join(f"    {line[:300]}" for line in tail) or "    (empty)"
        parts.append(f"  {path.relative_to(state)}:\n{shown}")
    return "the last lines of its newest logs:\n" + "\n".join(parts) if parts else ""
