# planb.gke: the action in front of the gcp_router_nat module (run in the task's worker: plugin_utils/in_worker).
from __future__ import annotations

from ansible_collections.planb.gke.plugins.plugin_utils.in_worker import InWorkerModuleAction


class ActionModule(InWorkerModuleAction):
    """gcp_router_nat, run as planb.gke.plugins.plugin_utils.in_worker describes."""
