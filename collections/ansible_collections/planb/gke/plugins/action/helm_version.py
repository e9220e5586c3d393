# planb.gke: the helm binary kubernetes.core.helm will run, checked before any write (module_utils/helm_version.py).
"""Action ``planb.gke.helm_version``: run ``BINARY version --short`` where kubernetes.core.helm would run it (the task's
host, over its connection) and refuse a helm the pinned kubernetes.core cannot drive, with planb's sentence alone.

It reads only, so it runs in check mode too and never reports a change; ``version`` is what helm printed, parsed
(``3.19.5``).
"""

from __future__ import annotations

import shlex
from typing import Any, ClassVar

from ansible.errors import AnsibleError
from ansible_collections.planb.gke.plugins.module_utils.helm_version import HelmVersionError, check
from ansible_collections.planb.gke.plugins.plugin_utils.refusal import RefusalAction


class ActionModule(RefusalAction):
    """``{version: "3.19.5"}``, or the task fails naming the binary, its version, why and the fix."""

    # The command runs on the task's host, where kubernetes.core.helm runs helm.
    _requires_connection = True

    ARGUMENT_SPEC: ClassVar[dict[str, dict[str, Any]]] = {
        "binary": {"type": "str", "default": "helm"},
        "variable": {"type": "str", "default": "planb_helm_binary"},
    }

    def check(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        binary = args["binary"]
        done = self._low_level_execute_command(f"{shlex.quote(binary)} version --short", sudoable=False)
        try:
            version = check(
                binary, int(done.get("rc", 1)), done.get("stdout", ""), done.get("stderr", ""), args["variable"]
            )
        except HelmVersionError as exc:
            raise AnsibleError(str(exc)) from exc
        return {"version": version}
