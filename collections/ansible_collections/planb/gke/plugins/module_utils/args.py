# planb.gke: argument specs shared by the gke_* modules (documented in the gke_auth doc fragment).
"""Argument specs: authentication and endpoint (every module), converge options (gke_cluster, gke_node_pool), and the
options' relations, declared as AnsibleModule takes them (``required_if``, ``required_together``, ...): AnsibleModule
refuses a combination they rule out before the module's own code runs; module_utils/validate.py keeps the rules on
the values themselves (formats, GKE's rules, planb's policy)."""

from __future__ import annotations

from typing import Any

from ansible.module_utils.basic import env_fallback

DEFAULT_ENDPOINT = "https://container.googleapis.com"
DEFAULT_SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]
AUTH_KINDS = ["application", "serviceaccount", "machineaccount", "accesstoken", "none"]
#: Kubernetes spellings and GKE's enum spellings of a taint effect -> GKE's enum.
TAINT_EFFECTS = {
    "NoSchedule": "NO_SCHEDULE",
    "PreferNoSchedule": "PREFER_NO_SCHEDULE",
    "NoExecute": "NO_EXECUTE",
    "NO_SCHEDULE": "NO_SCHEDULE",
    "PREFER_NO_SCHEDULE": "PREFER_NO_SCHEDULE",
    "NO_EXECUTE": "NO_EXECUTE",
}

Spec = dict[str, dict[str, Any]]

AUTH_ARGSPEC: Spec = {
    "project": {"type": "str", "fallback": (env_fallback, ["GCP_PROJECT"])},
    "auth_kind": {"type": "str", "choices": AUTH_KINDS, "fallback": (env_fallback, ["GCP_AUTH_KIND"])},
    "service_account_file": {"type": "path", "fallback": (env_fallback, ["GCP_SERVICE_ACCOUNT_FILE"])},
    "service_account_contents": {
        "type": "jsonarg",
        "no_log": True,
        "fallback": (env_fallback, ["GCP_SERVICE_ACCOUNT_CONTENTS"]),
    },
    "service_account_email": {"type": "str", "fallback": (env_fallback, ["GCP_SERVICE_ACCOUNT_EMAIL"])},
    "access_token": {"type": "str", "no_log": True, "fallback": (env_fallback, ["GCP_ACCESS_TOKEN"])},
    # The x-goog-user-project header (module_utils/client.py); google-auth reads the same variable for ADC.
    "quota_project": {"type": "str", "fallback": (env_fallback, ["GOOGLE_CLOUD_QUOTA_PROJECT"])},
    "scopes": {"type": "list", "elements": "str", "fallback": (env_fallback, ["GCP_SCOPES"])},
    "api_endpoint": {"type": "str", "fallback": (env_fallback, ["GKE_API_ENDPOINT"])},
    "timeout": {"type": "int", "default": 1800},
    "poll_interval": {"type": "float", "default": 5.0},
}

#: Options of the converging modules (gke_cluster, gke_node_pool); the gke_auth.converge fragment documents them.
CONVERGE_ARGSPEC: Spec = {
    "wait": {"type": "bool", "default": True},
    "validate_only": {"type": "bool", "default": False},
}

#: AnsibleModule's keyword arguments for the options' relations (required_if, required_together, required_by,
#: mutually_exclusive, required_one_of); ansible.module_utils.common.validation checks them. A relation counts an
#: option as given when the task sets it, even to null (``omit`` leaves it out), except required_by (set and not null).
Relations = dict[str, Any]

#: The credential each auth_kind reads (every module).
AUTH_RELATIONS: Relations = {
    "required_if": [
        ("auth_kind", "serviceaccount", ("service_account_file", "service_account_contents"), True),
        ("auth_kind", "accesstoken", ("access_token",)),
    ],
}


def with_relations(base: Relations, **more: Any) -> Relations:
    """``base`` with ``more`` added: lists (required_if, required_together, ...) appended, required_by merged."""
    out: Relations = {key: (dict(value) if isinstance(value, dict) else list(value)) for key, value in base.items()}
    for key, value in more.items():
        if isinstance(value, dict):
            out[key] = {**out.get(key, {}), **value}
        else:
            out[key] = [*out.get(key, []), *value]
    return out
