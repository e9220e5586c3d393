# planb.gke: the capacity ladder (planb_plans) checked and laid out by a task, as the planb.gke.plans filter does.
"""Action ``planb.gke.ladder``: ``planb.gke.plans``' check and layout of the ladder, as a task.

Returns ``ladder``, the filter's list of plans (each with its GKE settings and its pools); a refusal fails the
task with the filter's sentence alone (plugins/filter/ladder.py holds the rules).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ansible_collections.planb.gke.plugins.filter.ladder import plans
from ansible_collections.planb.gke.plugins.plugin_utils.refusal import RefusalAction


class ActionModule(RefusalAction):
    """The ladder ``plans`` checked and laid out: ``{ladder: [...]}``."""

    ARGUMENT_SPEC: ClassVar[dict[str, dict[str, Any]]] = {
        "plans": {"type": "raw", "required": True},
        "profile": {"type": "str", "required": True},
        "project": {"type": "str", "default": ""},
        "machine_type": {"type": "str"},
    }

    def check(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        ladder = plans(args["plans"], args["profile"], project=args["project"], machine_type=args["machine_type"])
        return {"ladder": ladder}
