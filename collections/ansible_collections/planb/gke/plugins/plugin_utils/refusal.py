# planb.gke: the base of the collection's controller-side validating actions.
"""``RefusalAction``: an action plugin that checks its input on the controller and, on a refusal, fails the task with
planb's sentence alone (the input, what is wrong, and the fix).

A refusal raised while Ansible templates a task's arguments (a filter in a ``set_fact``, an inventory variable
whose lookup refuses) reaches the user wrapped in Ansible's words ("Finalization of task args for ... failed:
Error while resolving value for ..."). The actions built on this class run the same Python validation inside the
task instead: an ``AnsibleError`` that ``check`` raises becomes ``failed: true`` with ``msg`` its own message.
Nothing is sent anywhere, so every such action supports check mode and never reports a change.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase


class RefusalAction(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    """Validate ``ARGUMENT_SPEC``'s arguments, run ``check``; its AnsibleError is the task's failure message."""

    _requires_connection = False
    _supports_check_mode = True
    _supports_async = False

    #: The action's options, as its module stub under plugins/modules documents them.
    ARGUMENT_SPEC: ClassVar[dict[str, dict[str, Any]]] = {}

    def check(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        """The result's keys on success; raise AnsibleError (planb's sentence) to refuse."""
        raise NotImplementedError

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = super().run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(argument_spec=self.ARGUMENT_SPEC)
        try:
            result.update(self.check(args, task_vars or {}))
        except AnsibleError as exc:
            result.update(failed=True, changed=False, msg=str(exc))
            return result
        result["changed"] = False
        return result
