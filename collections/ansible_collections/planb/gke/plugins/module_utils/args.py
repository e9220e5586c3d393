# planb.gke: argument specs shared by the gke_* modules (documented in the gke_auth doc fragment).
"""Argument specs: authentication and endpoint (every module), converge options (gke_cluster, gke_node_pool)."""

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
