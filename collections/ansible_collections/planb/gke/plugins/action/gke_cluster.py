# planb.gke: the action in front of the gke_cluster module (validate_only answered on the controller).
from __future__ import annotations

from typing import Any

from ansible_collections.planb.gke.plugins.module_utils.cluster_request import ClusterRequest
from ansible_collections.planb.gke.plugins.module_utils.validate import validate_cluster
from ansible_collections.planb.gke.plugins.modules.gke_cluster import ARGUMENT_SPEC, RELATIONS
from ansible_collections.planb.gke.plugins.plugin_utils.validate_only import ValidateOnlyAction


class ActionModule(ValidateOnlyAction):
    """gke_cluster: ``validate_only`` checked here with the module's spec and rules; anything else runs the module."""

    ARGUMENT_SPEC = ARGUMENT_SPEC
    RELATIONS = RELATIONS
    RESULT_KEY = "cluster"

    def rules(self, params: dict[str, Any]) -> None:
        validate_cluster(ClusterRequest.of(params))
