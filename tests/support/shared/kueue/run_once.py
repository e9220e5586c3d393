"""What the kueue role tests compute from the pinned tools, kept for the session: the same inputs run once.

A role's one-off playbook and `helm template` of the pinned chart are pure functions of their inputs (the
role's tasks, the pinned chart and the extra variables), so a second test with the same inputs reads the first
one's result. Each caller gets its own deep copy, so no test sees what another changed; a run that fails is
not kept, and the next caller runs it again.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_RESULTS: dict[str, Any] = {}


def once(kind: str, inputs: Any, compute: Callable[[], T]) -> T:
    """`compute()` the first time `kind` is asked for with `inputs` (JSON-able) this session; a copy of it after."""
    key = f"{kind} {json.dumps(inputs, sort_keys=True)}"
    if key not in _RESULTS:
        _RESULTS[key] = compute()
    result: T = copy.deepcopy(_RESULTS[key])
    return result
