# planb.gke: the inventory variables a play acts on, resolved by one task that fails with the inventory's sentence.
"""Action ``planb.gke.inventory_vars``: resolve the named variables before a play uses any of them.

An inventory that refuses a value does so while the value is templated: ``inventories/gke`` reads PROJECT_ID
with ``lookup('ansible.builtin.env', 'PROJECT_ID') or undef(hint=...)``. Used by a later task, that refusal would be
wrapped in Ansible's words about that task's arguments; resolved here, the task fails with the hint alone.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ansible.errors import AnsibleError
from ansible_collections.planb.gke.plugins.plugin_utils.refusal import RefusalAction


class ActionModule(RefusalAction):
    """Resolve each of ``names``; the first that cannot be resolved fails the task with its own message."""

    ARGUMENT_SPEC: ClassVar[dict[str, dict[str, Any]]] = {
        "names": {"type": "list", "elements": "str", "required": True}
    }

    def check(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        for name in args["names"]:
            if name not in task_vars:
                raise AnsibleError(
                    f"{name} is not set: the inventory's group_vars set it (inventories/local, inventories/gke), "
                    f"or -e {name}=<value>"
                )
            self._templar.template(task_vars[name])
        return {"resolved": list(args["names"])}
