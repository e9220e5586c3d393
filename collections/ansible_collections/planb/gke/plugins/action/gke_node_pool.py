# planb.gke: the action in front of the gke_node_pool module (validate_only answered on the controller).
from __future__ import annotations

from typing import Any

from ansible_collections.planb.gke.plugins.module_utils.node_pool_request import NodePoolRequest
from ansible_collections.planb.gke.plugins.module_utils.validate_pool import validate_node_pool
from ansible_collections.planb.gke.plugins.modules.gke_node_pool import ARGUMENT_SPEC, RELATIONS
from ansible_collections.planb.gke.plugins.plugin_utils.validate_only import ValidateOnlyAction


class ActionModule(ValidateOnlyAction):
    """gke_node_pool: ``validate_only`` checked here with the module's spec and rules; anything else runs the module."""

    ARGUMENT_SPEC = ARGUMENT_SPEC
    RELATIONS = RELATIONS
    RESULT_KEY = "node_pool"

    def rules(self, params: dict[str, Any]) -> None:
        validate_node_pool(NodePoolRequest.of(params))
