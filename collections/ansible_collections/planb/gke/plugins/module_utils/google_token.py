# planb.gke: a Google access token from google-auth, for the REST clients.
"""``google_token``: a credential's access token, its expiry and its quota project, from google-auth, for auth_kind
application, serviceaccount or machineaccount (GkeClient refreshes it before it expires and once on a 401)."""

from __future__ import annotations

import json
from datetime import UTC
from typing import Any

from ansible_collections.planb.gke.plugins.module_utils.args import DEFAULT_SCOPES
from ansible_collections.planb.gke.plugins.module_utils.credentials import Access
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError


def google_token(access: Access) -> tuple[str, float | None, str | None]:
    """(token, expiry as epoch seconds or None, the credential's quota project or None) for auth_kind application,
    serviceaccount or machineaccount.

    The quota project is what google-auth reads with the credential: ``quota_project_id`` of the ADC file
    (``gcloud auth application-default set-quota-project`` writes it) or of a key, or the
    GOOGLE_CLOUD_QUOTA_PROJECT environment variable (google-auth's ``with_quota_project_from_environment``).
    Google's client libraries send it as ``x-goog-user-project`` (google-auth ``Credentials.apply``), and so does
    GkeClient.
    """
    kind = access.auth_kind
    try:
        import google.auth
        import google.auth.compute_engine
        import google.auth.transport.requests
        from google.oauth2 import service_account
    except ImportError as exc:
        raise GkeError(f"auth_kind={kind} needs the google-auth and requests libraries ({exc})") from exc
    scopes = access.scopes or DEFAULT_SCOPES
    # google-auth is untyped; its credentials are used through Any.
    accounts: Any = service_account
    compute: Any = google.auth.compute_engine
    creds: Any
    if kind == "serviceaccount":
        contents = access.service_account_contents
        if contents:
            info = json.loads(contents) if isinstance(contents, str) else contents
            creds = accounts.Credentials.from_service_account_info(info, scopes=scopes)
        else:
            creds = accounts.Credentials.from_service_account_file(access.service_account_file, scopes=scopes)
    elif kind == "machineaccount":
        creds = compute.Credentials(access.service_account_email or "default")
    else:
        creds = google.auth.default(scopes=scopes)[0]
    creds.refresh(google.auth.transport.requests.Request())
    expiry = creds.expiry  # naive UTC datetime, or None
    quota_project = getattr(creds, "quota_project_id", None) or None
    return str(creds.token), (expiry.replace(tzinfo=UTC).timestamp() if expiry else None), quota_project
