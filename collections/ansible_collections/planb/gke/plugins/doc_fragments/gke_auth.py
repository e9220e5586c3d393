# planb: documentation shared by the gke_* modules: authentication and endpoint (every module),
# the options of the converging modules (gke_auth.converge) and of the info modules (gke_auth.info), the
# requirements, platform and action group of every one, and the check and diff modes of those that only read
# (gke_auth.reader).


class ModuleDocFragment:
    DOCUMENTATION = r"""
requirements:
  - python >= 3.11
  - google-auth, for O(auth_kind=application), O(auth_kind=serviceaccount) or O(auth_kind=machineaccount)
attributes:
  platform:
    platforms: all
  action_group:
    description: Use C(group/planb.gke.gke) in C(module_defaults) to set the endpoint, credentials and waits once.
    support: full
    membership:
      - planb.gke.gke
options:
  project:
    description:
      - Google Cloud project ID. Falls back to the E(GCP_PROJECT) environment variable when the option is not given.
      - Must follow Google Cloud's rule for project IDs (6-30 lowercase letters, digits or hyphens, starting with
        a letter, not ending with a hyphen); anything else, a project number included, is refused before any call.
      - Every path segment sent to GKE is percent-encoded, so no project, location or name can address another
        resource.
    type: str
  auth_kind:
    description:
      - The credential to use, as in the google.cloud collection. Falls back to E(GCP_AUTH_KIND).
      - V(application) reads Application Default Credentials from E(GOOGLE_APPLICATION_CREDENTIALS) or
        the gcloud ADC file only; it never probes the metadata server (use V(machineaccount) for that).
      - V(none) sends no credential and is only accepted against a loopback O(api_endpoint) (the local GKE emulator).
      - Required; when missing the module fails before any API call and says so.
    type: str
    choices: [application, serviceaccount, machineaccount, accesstoken, none]
  service_account_file:
    description:
      - Path of a service account JSON key (O(auth_kind=serviceaccount)). Falls back to E(GCP_SERVICE_ACCOUNT_FILE).
    type: path
  service_account_contents:
    description:
      - Contents of a service account JSON key. Falls back to E(GCP_SERVICE_ACCOUNT_CONTENTS).
    type: jsonarg
  service_account_email:
    description:
      - Service account email for O(auth_kind=machineaccount). Falls back to E(GCP_SERVICE_ACCOUNT_EMAIL).
    type: str
  access_token:
    description:
      - OAuth access token for O(auth_kind=accesstoken). Falls back to E(GCP_ACCESS_TOKEN).
    type: str
  quota_project:
    description:
      - The project Google bills the calls' quota to, sent on every request as the C(x-goog-user-project) header
        (U(https://cloud.google.com/apis/docs/system-parameters)). Falls back to E(GOOGLE_CLOUD_QUOTA_PROJECT).
      - When not given, the quota project the credential carries is sent, such as the C(quota_project_id) that
        C(gcloud auth application-default set-quota-project) writes into the ADC file; with neither, no header is
        sent. User credentials need one for APIs such as Service Usage and Cloud Quotas
        (U(https://cloud.google.com/docs/authentication/troubleshoot-adc#user-creds-client-based)).
      - A project ID or a project number; anything else is refused before any call.
    type: str
  scopes:
    description:
      - OAuth scopes. Falls back to E(GCP_SCOPES); default C(https://www.googleapis.com/auth/cloud-platform).
    type: list
    elements: str
  api_endpoint:
    description:
      - Base URL of the GKE API. Falls back to E(GKE_API_ENDPOINT); default C(https://container.googleapis.com).
      - Point it at the local GKE emulator (for example C(http://127.0.0.1:8765)) in local mode.
      - Plain C(http://) is refused unless the address is loopback (planb's policy, so the token never crosses a
        network unencrypted). Redirects are never followed, so the credential is only sent to this endpoint.
    type: str
  timeout:
    description:
      - Seconds to wait for each GKE operation before failing (GKE continues the operation; re-run to resume).
    type: int
    default: 1800
  poll_interval:
    description:
      - Seconds between polls of a running operation.
      - The converging modules report each operation's polls in their C(operations) result (how many and, at each
        one, the seconds since the wait began, the operation's status and GKE's progress metrics), which
        C(ansible-playbook -v) shows.
    type: float
    default: 5.0
notes:
  - Every input is validated before the first API call; an invalid input fails with all problems listed.
  - Reads (GET, including operation polls) are retried on connection errors, 429 and 5xx, up to 6 tries with
    exponential backoff from 1s to at most 30s (Retry-After honoured). Writes (POST, PUT, DELETE) are retried
    only when the connection was refused, i.e. nothing was sent; otherwise the module fails and a re-run converges.
  - A Google access token is refreshed 5 minutes before it expires and once after a 401, so long operation
    waits outlive it; a fixed O(access_token) cannot be refreshed.
"""

    # gke_cluster, gke_node_pool
    #: The check_mode and diff_mode of the modules that only read (gcp_*_check, gcp_reservation_info, gke_*_info).
    READER = r"""
attributes:
  check_mode:
    support: full
    details: Reads only; the result is the same in check mode.
  diff_mode:
    support: N/A
    details: Changes nothing, so there is no diff.
"""

    CONVERGE = r"""
options:
  wait:
    description: Wait for the operation to finish.
    type: bool
    default: true
  validate_only:
    description: Only validate the inputs and credentials (no API call at all); for the roles' preflight.
    type: bool
    default: false
"""

    # gke_cluster_info, gke_node_pool_info
    INFO = r"""
options:
  location:
    description: Zone or region.
    type: str
    required: true
"""
