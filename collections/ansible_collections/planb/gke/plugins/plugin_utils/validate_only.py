# planb.gke: validate_only runs of the converging modules, answered on the controller.
"""``ValidateOnlyAction``: the action plugin in front of a converging module (gke_cluster, gke_node_pool).

A task with ``validate_only: true`` makes no API call: it checks the arguments against the module's own
argument spec and its options' relations (required_if, required_together, ...), and runs the module's own rules
(``validate_*`` and ``check_auth`` from module_utils). Those are pure Python, so the action runs them in the task's
worker on the controller instead of shipping and starting the module; the result, and every refusal's message, is
the module's. Every other task runs the module as planb.gke.plugins.plugin_utils.in_worker describes. planb's plays
target localhost, so the controller is where the module would have run.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ansible.module_utils.common.arg_spec import ModuleArgumentSpecValidator
from ansible.module_utils.errors import UnsupportedError
from ansible.module_utils.parsing.convert_bool import boolean
from ansible_collections.planb.gke.plugins.module_utils.credentials import check_auth
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError
from ansible_collections.planb.gke.plugins.plugin_utils.in_worker import InWorkerModuleAction


class ValidateOnlyAction(InWorkerModuleAction):
    """Answer ``validate_only`` on the controller; run the module for everything else."""

    #: The module's argument spec, its options' relations (AnsibleModule's keyword arguments) and the key its result
    #: carries the resource under.
    ARGUMENT_SPEC: ClassVar[dict[str, Any]] = {}
    RELATIONS: ClassVar[dict[str, Any]] = {}
    RESULT_KEY: ClassVar[str] = ""

    def rules(self, params: dict[str, Any]) -> None:
        """The module's own rules for its validated arguments; raise GkeError to refuse."""

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        args = dict(self._task.args)
        if not boolean(args.get("validate_only", False), strict=False):
            return super().run(tmp, task_vars)
        result: dict[str, Any] = super(InWorkerModuleAction, self).run(tmp, task_vars)
        checked = ModuleArgumentSpecValidator(self.ARGUMENT_SPEC, **self.RELATIONS).validate(args)
        # As AnsibleModule reports them: the errors object is a sequence without a truth value of its own.
        if len(checked.errors.errors) > 0:
            msg = checked.errors.msg
            if isinstance(checked.errors.errors[0], UnsupportedError):
                msg = f"Unsupported parameters for ({self._task.action}) module: {msg}"
            result.update(failed=True, changed=False, msg=msg)
            return result
        params = checked.validated_parameters
        try:
            self.rules(params)
            check_auth(params)
        except GkeError as exc:
            result.update(failed=True, changed=False, msg=str(exc))
            return result
        result.update(changed=False, actions=[], operations=[], **{self.RESULT_KEY: {}})
        return result
