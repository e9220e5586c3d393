"""The fixed loopback ports of the local stack's processes, and ``PLANB_PORT_OFFSET``, which moves all of them.

One machine runs one local stack on these ports; planb.local.stack.ports says why ``up`` refuses a taken port
rather than moving to a free one. A second stack beside the first (``make test`` runs its end-to-end tests on two,
side by side) is started with ``PLANB_PORT_OFFSET=N``, its own ``PLANB_STATE_DIR`` and its own
``PLANB_GKE_EMULATOR_PORT``: every port named with `port` moves by N in every process that inherits the variable
(the stack's components, ansible-playbook and the roles, the planb CLI), so each of them agrees with the others.

This is planb's own arrangement for its local stack; GKE has no such setting.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from planb.errors import PlanbError

#: The environment variable that moves every fixed port of the local stack.
ENV = "PLANB_PORT_OFFSET"
#: The largest offset: the moved ports stay below the control plane's own (planb.local.stack.kwokctl_config picks
#: those downwards from 32766, moved by the same offset) and above the privileged range.
MAX_OFFSET = 2000


class PortOffsetError(PlanbError):
    """PLANB_PORT_OFFSET is not a whole number from 0 to MAX_OFFSET."""


def offset(environ: Mapping[str, str] | None = None) -> int:
    """The offset the environment asks for (0 when PLANB_PORT_OFFSET is unset or empty)."""
    raw = (os.environ if environ is None else environ).get(ENV, "").strip()
    if not raw:
        return 0
    if not raw.isdigit() or int(raw) > MAX_OFFSET:
        raise PortOffsetError(
            f"{ENV}={raw!r} is not a whole number from 0 to {MAX_OFFSET}. Fix: unset it (the stack's usual ports) or "
            f"set it to the amount every port of a second stack moves by, for example {ENV}=100"
        )
    return int(raw)


def port(base: int, environ: Mapping[str, str] | None = None) -> int:
    """`base`, the port a stack started without PLANB_PORT_OFFSET uses, moved by the offset."""
    return base + offset(environ)
