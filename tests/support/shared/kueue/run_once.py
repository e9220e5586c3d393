"""What the kueue role tests compute from the pinned tools, kept for the session: the same inputs run once.

A role's one-off playbook and `helm template` of the pinned chart are pure functions of their inputs (the
role's tasks, the pinned chart and the extra variables), so a second test with the same inputs reads the first
one's result. Each caller gets its own deep copy, so no test sees what another changed; a run that fails is
not kept, and the next caller runs it again. A test module may declare at import the inputs its tests will ask for
(`ahead`): pytest imports every module before the first test runs, so the first caller can compute them all in one
run (one ansible-playbook of one host per input) and `keep` each result.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_RESULTS: dict[str, Any] = {}
_AHEAD: dict[str, dict[str, Any]] = {}


def _key(kind: str, inputs: Any) -> str:
    return f"{kind} {json.dumps(inputs, sort_keys=True)}"


def once(kind: str, inputs: Any, compute: Callable[[], T]) -> T:
    """`compute()` the first time `kind` is asked for with `inputs` (JSON-able) this session; a copy of it after."""
    key = _key(kind, inputs)
    if key not in _RESULTS:
        _RESULTS[key] = compute()
    result: T = copy.deepcopy(_RESULTS[key])
    return result


def kept(kind: str, inputs: Any) -> bool:
    """Whether `once` has the result of `kind` for `inputs` already."""
    return _key(kind, inputs) in _RESULTS


def keep(kind: str, inputs: Any, result: Any) -> None:
    """The result of `kind` for `inputs`, computed with others before a test asks for it (`once` returns it)."""
    _RESULTS[_key(kind, inputs)] = result


def ahead(kind: str, *inputs: Any) -> None:
    """Declare inputs the tests will ask `kind` for (see the module's docstring)."""
    for one in inputs:
        _AHEAD.setdefault(kind, {})[_key(kind, one)] = one


def take_ahead(kind: str) -> list[Any]:
    """The inputs declared for `kind` whose result is not kept yet, each once; the declarations are cleared."""
    return [one for key, one in _AHEAD.pop(kind, {}).items() if key not in _RESULTS]
