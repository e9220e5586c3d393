# planb.gke: the credential, endpoint and project checks every module runs before any API call.
"""Where the modules talk to and as whom: checked before the first request, each problem naming the fix.

``Access.of`` resolves a module's options once into what a client needs: the endpoint, the credential, the
quota project and the timeouts, with whether the endpoint is loopback (the local GKE emulator), the client's
refusal of it, if any, and every problem ``check_auth`` raises: a malformed ``api_endpoint``, plain http:// to
anything but a loopback address or with any ``auth_kind`` but ``none`` (a Google credential never crosses http), a
missing or unusable credential for the chosen ``auth_kind`` and a project that is not a Google Cloud project ID.
Nothing here makes a network call; ``plain_http_problem`` is the http rule, applied again to every endpoint a client
is given.
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlparse

from ansible_collections.planb.gke.plugins.module_utils.args import DEFAULT_ENDPOINT
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError

Params = dict[str, Any]

#: Google Cloud's rule for project IDs: 6-30 characters, lowercase letters, digits and hyphens, starting with a
#: letter, not ending with a hyphen (https://cloud.google.com/resource-manager/docs/creating-managing-projects).
DOC_PROJECT_ID = "https://cloud.google.com/resource-manager/docs/creating-managing-projects"
PROJECT_ID = re.compile(r"^[a-z][-a-z0-9]{4,28}[a-z0-9]$")
#: What x-goog-user-project may name: a project ID (a legacy domain-scoped one, ``example.com:my-project``, too) or a
#: project number (https://cloud.google.com/apis/docs/system-parameters: "the project ID or project number").
QUOTA_PROJECT = re.compile(r"^(?:[a-z][-a-z0-9.]*[a-z0-9]:)?[a-z][-a-z0-9]{4,28}[a-z0-9]$|^[0-9]{1,20}$")


def is_loopback(url: str) -> bool:
    """Whether the URL's host is localhost or a loopback address."""
    host = urlparse(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def plain_http_problem(endpoint: str, kind: str | None) -> str | None:
    """Why planb refuses this endpoint for this auth_kind, if it does: http:// only to loopback, only with none."""
    if not endpoint.lower().startswith("http://"):
        return None
    if not is_loopback(endpoint):
        return (
            f"api_endpoint {endpoint} is plain http:// to a non-loopback address: refused by planb's policy, "
            "because the access token would cross the network unencrypted; use https:// (http:// is for the "
            "local GKE emulator on 127.0.0.1 only)"
        )
    if kind and kind != "none":
        return (
            f"api_endpoint {endpoint} is plain http:// and auth_kind is {kind}: refused by planb's policy, because "
            "a Google access token is never sent over http, not even to a loopback address; use auth_kind: none "
            "against the local GKE emulator (GCP_AUTH_KIND=none), or an https:// api_endpoint with this credential"
        )
    return None


# ---- credentials and project ---------------------------------------------------------------------
def well_known_adc() -> str:
    config = os.environ.get("CLOUDSDK_CONFIG") or os.path.join(os.path.expanduser("~"), ".config", "gcloud")
    return os.path.join(config, "application_default_credentials.json")


def adc_file() -> str | None:
    """The Application Default Credentials file gcloud or GOOGLE_APPLICATION_CREDENTIALS names, if it exists."""
    explicit = os.environ.get("GOOGLE_APPLICATION_CREDENTIALS")
    if explicit:
        return explicit if os.path.isfile(explicit) else None
    path = well_known_adc()
    return path if os.path.isfile(path) else None


def auth_problems(params: Params, endpoint: str) -> list[str]:
    """Every missing credential or setting of the options, each naming the fix; makes no network call."""
    problems: list[str] = []
    kind = params.get("auth_kind")
    http_problem = plain_http_problem(endpoint, kind)
    if http_problem:
        problems.append(http_problem)
    if not kind:
        problems.append(
            "Missing credential: auth_kind is not set. Set the auth_kind option or the GCP_AUTH_KIND environment "
            "variable to one of application, serviceaccount, machineaccount, accesstoken (or none against a "
            "loopback api_endpoint such as the local GKE emulator)"
        )
    elif kind == "none" and not is_loopback(endpoint):
        problems.append(
            f"auth_kind=none is only allowed against a loopback api_endpoint (the local GKE emulator), "
            f"not {endpoint}; use application or serviceaccount credentials for Google Cloud"
        )
    # That auth_kind's credential option is given is the argument spec's (args.AUTH_RELATIONS, required_if); what
    # is checked here is what it holds (an option set to "" or null counts as given there).
    elif kind == "serviceaccount":
        path = params.get("service_account_file")
        if path and not os.path.isfile(path):
            problems.append(f"Missing credential: service_account_file {path} does not exist")
        elif not path and not params.get("service_account_contents"):
            problems.append(
                "Missing credential: service_account_file (GCP_SERVICE_ACCOUNT_FILE) and service_account_contents "
                "(GCP_SERVICE_ACCOUNT_CONTENTS) are empty"
            )
    elif kind == "accesstoken" and not str(params.get("access_token") or "").strip():
        problems.append(
            "Missing credential: access_token (GCP_ACCESS_TOKEN) is empty: give the token itself, such as "
            "`gcloud auth print-access-token` prints"
        )
    elif kind == "application" and not adc_file():
        problems.append(
            "Missing credential: auth_kind=application found no Application Default Credentials: "
            f"GOOGLE_APPLICATION_CREDENTIALS is unset and {well_known_adc()} does not exist. Run "
            "`gcloud auth application-default login`, or set GCP_AUTH_KIND=serviceaccount and "
            "GCP_SERVICE_ACCOUNT_FILE"
        )
    quota_project = params.get("quota_project")
    if quota_project and not QUOTA_PROJECT.fullmatch(str(quota_project)):
        problems.append(
            f"quota_project {quota_project!r} (GOOGLE_CLOUD_QUOTA_PROJECT) is not a Google Cloud project ID or "
            "number: it is sent as the x-goog-user-project header, the project Google bills the calls' quota to"
        )
    project = params.get("project")
    if not project:
        problems.append("Missing project: set the project option or the GCP_PROJECT environment variable (PROJECT_ID)")
    elif not PROJECT_ID.fullmatch(project):
        problems.append(
            f"project {project!r} is not a Google Cloud project ID: 6-30 lowercase letters, digits or hyphens, "
            f"starting with a letter and not ending with a hyphen ({DOC_PROJECT_ID}); give the project ID, "
            "not its name or number"
        )
    return problems


def _well_formed(endpoint: str) -> bool:
    return bool(re.match(r"^https?://[^/]+", endpoint))


def _refusal(endpoint: str, loopback: bool, kind: str | None) -> str | None:
    """Why a client refuses ``endpoint`` (its trailing '/' dropped) before any request, or None."""
    if endpoint.lower().startswith("http://") and not loopback:
        return f"Refusing plain-http api_endpoint {endpoint}: only a loopback address may use http://"
    problem = plain_http_problem(endpoint, kind)
    return f"{problem[0].upper()}{problem[1:]}. Nothing was sent." if problem else None


@dataclass(frozen=True)
class Access:
    """Where a module talks to and as whom, resolved once from its options: all a client reads of them."""

    #: api_endpoint as given (DEFAULT_ENDPOINT when unset); a client drops a trailing '/'.
    api_endpoint: str
    auth_kind: str | None
    access_token: str | None
    service_account_file: str | None
    #: A key as JSON text or as its parsed object (the option's type is jsonarg).
    service_account_contents: Any
    service_account_email: str | None
    scopes: list[str] | None
    #: The quota_project option (GOOGLE_CLOUD_QUOTA_PROJECT), sent as x-goog-user-project.
    quota_project: str | None
    timeout: float
    poll_interval: float
    #: Whether api_endpoint is localhost or a loopback address (the local GKE emulator).
    loopback: bool
    #: Why a client refuses api_endpoint (plain http:// off loopback, or with a Google credential), or None.
    refusal: str | None
    #: What check_auth raises (every problem of the credential, the endpoint and the project), or None.
    error: str | None

    @classmethod
    def of(cls, params: Params) -> Access:
        """The options' access, checked (``error``) but not refused: check_auth raises, a client refuses."""
        endpoint = params.get("api_endpoint") or DEFAULT_ENDPOINT
        kind = params.get("auth_kind")
        well_formed = _well_formed(endpoint)
        loopback = well_formed and is_loopback(endpoint)
        if not well_formed:
            error: str | None = f"api_endpoint {endpoint!r} must be a URL such as {DEFAULT_ENDPOINT}"
        else:
            problems = auth_problems(params, endpoint)
            error = "; ".join(problems) + ". Nothing was sent to GKE." if problems else None
        return cls(
            api_endpoint=endpoint,
            auth_kind=kind,
            access_token=params.get("access_token"),
            service_account_file=params.get("service_account_file"),
            service_account_contents=params.get("service_account_contents"),
            service_account_email=params.get("service_account_email"),
            scopes=params.get("scopes"),
            quota_project=params.get("quota_project"),
            timeout=params.get("timeout", 1800),
            poll_interval=params.get("poll_interval", 5.0),
            loopback=loopback,
            refusal=_refusal(endpoint.rstrip("/"), loopback, kind),
            error=error,
        )

    def at(self, endpoint: str) -> Access:
        """The same credential and settings at another Google API's ``endpoint``, as a client reads them (loopback
        and refusal are the endpoint's; ``error`` stays the options' own)."""
        loopback = _well_formed(endpoint) and is_loopback(endpoint)
        refusal = _refusal(endpoint.rstrip("/"), loopback, self.auth_kind)
        return replace(self, api_endpoint=endpoint, loopback=loopback, refusal=refusal)


def check_auth(params: Params) -> None:
    """Raise GkeError naming every missing credential or setting; makes no network call."""
    error = Access.of(params).error
    if error:
        raise GkeError(error)
