# planb.gke: the action in front of the gcp_project_check module (run in the task's worker: plugin_utils/in_worker).
from __future__ import annotations

from ansible_collections.planb.gke.plugins.plugin_utils.in_worker import InWorkerModuleAction


class ActionModule(InWorkerModuleAction):
    """gcp_project_check, run as planb.gke.plugins.plugin_utils.in_worker describes."""
