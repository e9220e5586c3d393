# planb.gke: the action in front of the gke_cluster_info module (run in the task's worker: plugin_utils/in_worker).
from __future__ import annotations

from ansible_collections.planb.gke.plugins.plugin_utils.in_worker import InWorkerModuleAction


class ActionModule(InWorkerModuleAction):
    """gke_cluster_info, run as planb.gke.plugins.plugin_utils.in_worker describes."""
