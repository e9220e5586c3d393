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
* an exception the module does not handle becomes the failed result AnsiballZ's loader makes of it
  (``_loader._handle_exception``), so ``until``/``retries`` see a failed task as they would;
* that JSON is read back with ``ActionBase._parse_returned_data`` and cleaned as ``_execute_module`` cleans it.
  The module's warnings reach the task's result through Display, as any controller-side warning does.

Anything else runs the module as ansible.builtin.normal would: another connection, ``delegate_to``, ``become``,
``async``, an ``environment`` keyword, or another interpreter. Each worker is a process of its own, forked for one
task (its loop items included) and gone after it, so the module-level state a run sets (``basic._ANSIBLE_ARGS``)
dies with it.
"""

from __future__ import annotations

import importlib
import io
import json
import shutil
import sys
from contextlib import redirect_stderr, redirect_stdout, suppress
from typing import Any

from ansible.module_utils import basic
from ansible.module_utils._internal._ansiballz import _loader
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
    """AnsibleModule itself; only the formatted result goes to the action instead of stdout. The temporary
    directory a module may ask for (``AnsibleModule.tmpdir``) goes with it: its atexit clean-up would never run,
    as a worker leaves by ``os._exit``."""

    def _record_module_result(self, o: dict[str, Any]) -> None:
        if self._tmpdir:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
        raise _Recorded(json.dumps(o, cls=get_module_encoder(PROFILE, Direction.MODULE_TO_CONTROLLER)))


class InWorkerModuleAction(ActionBase):  # type: ignore[misc]
    """Run the task's module in this worker when it would run on the controller; otherwise as usual."""

    #: As ansible.builtin.normal, which ran these modules before: an ``async`` task runs the module the usual way.
    _supports_async = True

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = super().run(tmp, task_vars)
        result.update(self.run_module(dict(self._task.args), task_vars or {}))
        return result

    def run_module(self, module_args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        """The module's result for these arguments: run here when eligible, else as ansible.builtin.normal does."""
        if not self.in_worker(task_vars):
            wrap_async = bool(self._task.async_val) and not self._connection.has_native_async
            data: dict[str, Any] = self._execute_module(
                module_args=module_args, task_vars=task_vars, wrap_async=wrap_async
            )
            if not wrap_async:
                self._remove_tmp_path(self._connection._shell.tmpdir)
            return data
        self._update_module_args(self._task.action, module_args, task_vars)
        encoder = get_module_encoder(PROFILE, Direction.CONTROLLER_TO_MODULE)
        basic._ANSIBLE_ARGS = json.dumps({"ANSIBLE_MODULE_ARGS": module_args}, cls=encoder).encode()
        basic._ANSIBLE_PROFILE = PROFILE
        stdout, stderr = io.StringIO(), io.StringIO()
        payload = ""
        with redirect_stdout(stdout), redirect_stderr(stderr):
            try:
                module: Any = importlib.import_module(self.module_import_name())
                original = module.AnsibleModule
                module.AnsibleModule = _WorkerModule
                try:
                    module.main()
                finally:
                    module.AnsibleModule = original
            except _Recorded as recorded:
                payload = recorded.payload
            except SystemExit:
                pass
            except Exception as exc:  # as AnsiballZ's loader answers a module's unexpected exception: a failed result
                with suppress(SystemExit):
                    _loader._handle_exception(exc, PROFILE)
        res = {"stdout": payload or stdout.getvalue(), "stderr": stderr.getvalue(), "rc": 0 if payload else 1}
        data = self._parse_returned_data(res, PROFILE)
        remove_internal_keys(data)
        return data

    def module_import_name(self) -> str:
        """The Python name of the module the task resolved to (``planb.gke.gcp_service`` is
        ``ansible_collections.planb.gke.plugins.modules.gcp_service``), whose ``main()`` runs here."""
        namespace, collection, name = self._task.resolved_action.split(".")
        return f"ansible_collections.{namespace}.{collection}.plugins.modules.{name}"

    def in_worker(self, task_vars: dict[str, Any]) -> bool:
        """Whether the module would run on this controller with this Python, as this worker's user, unchanged."""
        if self._connection.transport != "local" or self._task.async_val or self._play_context.become:
            return False
        if self._task.delegate_to:  # the interpreter would be the delegated host's
            return False
        # The keyword's default is [{}]; each entry may be a template (of a mapping).
        if any(self._templar.template(entry) for entry in self._task.environment or ()):
            return False
        interpreter = task_vars.get("ansible_python_interpreter")
        if interpreter is None:
            return False
        return bool(self._templar.template(interpreter) == sys.executable)
