# planb.gke: the API modules run inside the task's worker when that worker is where they would have run.
"""``InWorkerModuleAction``: the action plugin in front of a planb.gke API module.

planb's plays target ``localhost`` over the ``local`` connection with the controller's own Python
(``ansible_python_interpreter: "{{ ansible_playbook_python }}"``), so each module would run on the controller,
in a new interpreter that unpacks its AnsiballZ payload and imports ``ansible.module_utils.basic`` and
planb's module_utils from that zip (no bytecode cache): about 0.45 CPU-seconds a task, before the first API
call. Such a task's module runs here, in the worker Ansible forked for the task, instead:

* the module's arguments are those ``ActionBase._execute_module`` would send (``_update_module_args``: check and
  diff mode, no_log, verbosity ...), serialized with the module's profile as the controller does;
* the module's own ``main()`` runs with the real ``AnsibleModule``, which reads them, validates them against the
  module's argument spec, masks ``no_log`` values and formats the result; only the result's last step, printing
  its JSON on stdout, is captured instead (``AnsibleModule._record_module_result``, ansible-core's hook for in-worker
  execution, which ansible.netcommon's ``import_modules`` option also uses);
* that JSON is read back with ``ActionBase._parse_returned_data`` and cleaned as ``_execute_module`` cleans it.

Anything else runs the module as usual: another connection, ``become``, ``async``, an ``environment`` keyword, or
another interpreter. Each worker is a process of its own, forked for one task and gone after it, so the
module-level state the run touches (``basic._ANSIBLE_ARGS``, the warning lists) dies with it.
"""

from __future__ import annotations

import importlib
import io
import json
import sys
from contextlib import redirect_stderr, redirect_stdout
from typing import Any, ClassVar

from ansible.module_utils import basic
from ansible.module_utils.common import warnings as module_warnings
from ansible.module_utils.common.json import Direction, get_module_encoder
from ansible.plugins.action import ActionBase
from ansible.vars.clean import remove_internal_keys

#: The serialization profile ansible-core gives a module without METADATA (module_common._DEFAULT_LEGACY_METADATA,
#: and _get_module_metadata while the experimental _MODULE_METADATA setting is off, its default).
PROFILE = "legacy"


class _Recorded(BaseException):
    """Carries the module's formatted result out of ``AnsibleModule._record_module_result``, past any
    ``except Exception`` as the ``SystemExit`` that would follow it goes past them."""

    def __init__(self, payload: str) -> None:
        super().__init__("module result recorded")
        self.payload = payload


class _WorkerModule(basic.AnsibleModule):  # type: ignore[misc]  # ansible-core ships no type hints
    """AnsibleModule itself; only the formatted result goes to the action instead of stdout."""

    def _record_module_result(self, o: dict[str, Any]) -> None:
        raise _Recorded(json.dumps(o, cls=get_module_encoder(PROFILE, Direction.MODULE_TO_CONTROLLER)))


class InWorkerModuleAction(ActionBase):  # type: ignore[misc]
    """Run the task's module in this worker when it would run on the controller; otherwise as usual."""

    #: The module this action fronts, as Python imports it (its ``main()`` is run).
    MODULE: ClassVar[str] = ""

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = super().run(tmp, task_vars)
        result.update(self.run_module(dict(self._task.args), task_vars or {}))
        return result

    def run_module(self, module_args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        """The module's result for these arguments: run here when eligible, else by ``_execute_module``."""
        if not self.in_worker(task_vars):
            data: dict[str, Any] = self._execute_module(module_args=module_args, task_vars=task_vars)
            return data
        self._update_module_args(self._task.action, module_args, task_vars)
        encoder = get_module_encoder(PROFILE, Direction.CONTROLLER_TO_MODULE)
        basic._ANSIBLE_ARGS = json.dumps({"ANSIBLE_MODULE_ARGS": module_args}, cls=encoder).encode()
        basic._ANSIBLE_PROFILE = PROFILE
        module_warnings._global_warnings.clear()
        module_warnings._global_deprecations.clear()
        module: Any = importlib.import_module(self.MODULE)
        stdout, stderr = io.StringIO(), io.StringIO()
        payload = ""
        original = module.AnsibleModule
        module.AnsibleModule = _WorkerModule
        try:
            with redirect_stdout(stdout), redirect_stderr(stderr):
                module.main()
        except _Recorded as recorded:
            payload = recorded.payload
        except SystemExit:
            pass
        finally:
            module.AnsibleModule = original
        res = {"stdout": payload or stdout.getvalue(), "stderr": stderr.getvalue(), "rc": 0 if payload else 1}
        data = self._parse_returned_data(res, PROFILE)
        remove_internal_keys(data)
        return data

    def in_worker(self, task_vars: dict[str, Any]) -> bool:
        """Whether the module would run on this controller with this Python, as this worker's user, unchanged."""
        if self._connection.transport != "local" or self._task.async_val or self._play_context.become:
            return False
        # The keyword's default is [{}]; each entry may be a template (of a mapping).
        if any(self._templar.template(entry) for entry in self._task.environment or ()):
            return False
        interpreter = task_vars.get("ansible_python_interpreter")
        if interpreter is None:
            return False
        return bool(self._templar.template(interpreter) == sys.executable)
