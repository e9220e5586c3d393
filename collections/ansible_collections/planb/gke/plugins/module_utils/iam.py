# planb.gke: the rights a run uses, each with the predefined role that grants it, and the check of them.
"""Every IAM permission the planb.gke roles' API calls need, the role that grants it, and one rights check.

``RIGHTS`` is the one table: each permission, the predefined roles that grant it (the one planb recommends first),
what in the run needs it, and the ``needs`` (keys the gke_cluster role chooses from its variables) that make a run
use it. docs/first-run.md's rights table is ``markdown_table()`` verbatim (tests/unit/test_iam_rights.py).

Where the permissions come from, per API method the roles call:

* GKE (https://cloud.google.com/kubernetes-engine/docs/reference/api-permissions): clusters.create needs
  ``container.clusters.create`` on the project "and ``iam.serviceAccounts.actAs`` on the specified service account"
  (the nodes'); clusters.get and nodePools.get/list ``container.clusters.get``, "and
  ``container.clusters.getCredentials`` to see the cluster's credentials" (the kubeconfig's CA); clusters.update
  and nodePools.create/update/delete (setSize, setAutoscaling, setManagement) ``container.clusters.update``;
  clusters.delete ``container.clusters.delete``; operations.get ``container.operations.get``.
* Service Usage (https://cloud.google.com/service-usage/docs/access-control): services.get
  ``serviceusage.services.get``, services.enable ``serviceusage.services.enable``.
* Cloud Quotas: quotaInfos.list ``cloudquotas.quotas.get``
  (https://cloud.google.com/docs/quotas/reference/rest/v1/projects.locations.services.quotaInfos/list).
* Compute Engine (https://cloud.google.com/compute/docs/reference/rest/v1/reservations/get,
  .../instanceGroupManagers/get): ``compute.reservations.get``, ``compute.instanceGroupManagers.get``.
* Cloud Storage (https://cloud.google.com/storage/docs/access-control/iam-json): buckets.get
  ``storage.buckets.get`` on the bucket (which may be granted on the bucket alone), buckets.insert
  ``storage.buckets.create`` on the project; roles: https://cloud.google.com/storage/docs/access-control/iam-roles
  (storage.admin; storage.bucketViewer, which Google marks Beta, grants the read).
* The roles: https://cloud.google.com/iam/docs/understanding-roles (container.admin, container.clusterAdmin,
  serviceusage.serviceUsageViewer and serviceUsageAdmin, cloudquotas.viewer, compute.viewer,
  iam.serviceAccountUser).

The check is one Cloud Resource Manager v3 call, ``POST v3/projects/P:testIamPermissions`` with every permission the
run's needs name; Google answers the subset the caller holds on the project
(https://cloud.google.com/resource-manager/reference/rest/v3/projects/testIamPermissions: no permission is needed to
call it, wildcards are refused). A permission Google checks on another resource than the project
(``iam.serviceAccounts.actAs``: on the nodes' service account) may be granted there alone, so its absence at the
project is a warning, not a failure.

A request that names a quota project (``x-goog-user-project``: the ``quota_project`` option or the credential's) is
billed to it, and Google refuses it unless the caller holds ``serviceusage.services.use`` on that project
(https://cloud.google.com/docs/quotas/set-quota-project, https://cloud.google.com/apis/docs/system-parameters; role
``roles/serviceusage.serviceUsageConsumer``); so whenever one is sent, the check asks for that permission there too.

A 403 from testIamPermissions is read by its google.rpc.ErrorInfo reason: SERVICE_DISABLED (the Cloud Resource
Manager API is off on the project billed for the call, which the answer names), USER_PROJECT_DENIED (the caller may
not bill the quota project), or anything else, reported as Google's own words and nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ansible_collections.planb.gke.plugins.module_utils.client import api_path
from ansible_collections.planb.gke.plugins.module_utils.credentials import check_auth
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError
from ansible_collections.planb.gke.plugins.module_utils.project_apis import ApiClient, endpoint

Body = dict[str, Any]

RESOURCEMANAGER_ENDPOINT = "https://cloudresourcemanager.googleapis.com"
#: Using a project as the quota project (x-goog-user-project) needs this permission on it, granted by this role.
QUOTA_PROJECT_RIGHT = "serviceusage.services.use"
QUOTA_PROJECT_ROLE = "roles/serviceusage.serviceUsageConsumer"
DOC_QUOTA_PROJECT = "https://cloud.google.com/docs/quotas/set-quota-project"
#: Google's message for a call to an API that is off on the project billed for it (reason SERVICE_DISABLED), for an
#: answer that carries no ErrorInfo.
_SERVICE_DISABLED_TEXT = "has not been used in project"
DOC_TEST = "https://cloud.google.com/resource-manager/reference/rest/v3/projects/testIamPermissions"
DOC_GRANT = "https://cloud.google.com/iam/docs/granting-changing-revoking-access"

#: What makes a run use a right (the gke_cluster role picks these from its variables; the play adds reservations).
NEEDS = {
    "cluster": "the cluster and every plan's node pools (always)",
    "kubeconfig": "the kubeconfig written for gke-gcloud-auth-plugin",
    "apis": "the APIs' state read (gke_cluster_prerequisites)",
    "enable_apis": "APIs enabled (gke_cluster_enable_apis)",
    "quota": "the accelerator quota read (gke_cluster_quota_check)",
    "reservations": "a reservation plan's reservation read",
    "recreate_on_error": "a cluster or pool in ERROR recreated (gke_cluster_recreate_on_error)",
    "bucket": "the checkpoint bucket read (gke_cluster_bucket)",
    "create_bucket": "the checkpoint bucket created when missing (gke_cluster_bucket_create)",
    "cloud_nat": "Cloud NAT created for private nodes (gke_cluster_cloud_nat_create)",
}


@dataclass(frozen=True)
class Right:
    """One permission: the predefined roles that grant it (planb's recommendation first), what uses it, when."""

    permission: str
    roles: tuple[str, ...]
    task: str
    needs: tuple[str, ...]
    #: Where Google checks it: the project, or another resource it may be granted on alone.
    on: str = "project"


_CONTAINER = ("roles/container.admin", "roles/container.clusterAdmin")

RIGHTS: tuple[Right, ...] = (
    Right(
        "serviceusage.services.get",
        ("roles/serviceusage.serviceUsageViewer", "roles/serviceusage.serviceUsageAdmin"),
        "read whether each API the cluster needs is enabled (`planb.gke.gcp_service`)",
        ("apis",),
    ),
    Right(
        "serviceusage.services.enable",
        ("roles/serviceusage.serviceUsageAdmin",),
        "enable the Kubernetes Engine, Cloud TPU, image streaming and Cloud Quotas APIs (`planb.gke.gcp_service`; "
        "not needed with `planb_enable_apis=false` when they are enabled already)",
        ("enable_apis",),
    ),
    Right(
        "cloudquotas.quotas.get",
        ("roles/cloudquotas.viewer",),
        "read the accelerator quota one slice draws on before the cluster is made (`planb.gke.gcp_quota_check`)",
        ("quota",),
    ),
    Right(
        "compute.reservations.get",
        ("roles/compute.viewer",),
        "read a reservation plan's reservation before any write (`planb.gke.gcp_reservation_info`)",
        ("reservations",),
    ),
    Right(
        "container.clusters.get",
        _CONTAINER,
        "read the cluster and its node pools (`planb.gke.gke_cluster`, `planb.gke.gke_node_pool`)",
        ("cluster",),
    ),
    Right(
        "container.clusters.create",
        _CONTAINER,
        "create the cluster",
        ("cluster",),
    ),
    Right(
        "container.clusters.update",
        _CONTAINER,
        "update the cluster in place; create, resize, update and delete its node pools",
        ("cluster",),
    ),
    Right(
        "container.operations.get",
        _CONTAINER,
        "wait for GKE's operations",
        ("cluster",),
    ),
    Right(
        "iam.serviceAccounts.actAs",
        ("roles/iam.serviceAccountUser",),
        "create the nodes as their service account (the Compute Engine default one unless the organisation gives "
        "another)",
        ("cluster",),
        on="the nodes' service account",
    ),
    Right(
        "container.clusters.getCredentials",
        _CONTAINER,
        "read the cluster's CA for the kubeconfig (`gke-gcloud-auth-plugin`)",
        ("kubeconfig",),
    ),
    Right(
        "container.clusters.delete",
        _CONTAINER,
        "delete a cluster in ERROR before recreating it (`planb_recreate_on_error`)",
        ("recreate_on_error",),
    ),
    Right(
        "compute.instanceGroupManagers.get",
        ("roles/compute.viewer",),
        "count a cluster's or pool's nodes before one in ERROR is recreated (`planb_recreate_on_error`)",
        ("recreate_on_error",),
    ),
    Right(
        "storage.buckets.get",
        ("roles/storage.admin", "roles/storage.bucketViewer"),
        "read the checkpoint bucket's location and access before any write (`planb.gke.gcp_storage_bucket`, "
        "`planb_checkpoint_bucket`)",
        ("bucket", "create_bucket"),
        on="the bucket",
    ),
    Right(
        "storage.buckets.create",
        ("roles/storage.admin",),
        "create the checkpoint bucket when it is missing (`planb_checkpoint_bucket_create`)",
        ("create_bucket",),
    ),
    *(
        Right(
            f"compute.routers.{verb}",
            ("roles/compute.networkAdmin",),
            f"{task} (`planb.gke.gcp_router_nat`, `planb_cloud_nat_create`)",
            ("cloud_nat",),
        )
        for verb, task in (
            ("get", "read the Cloud Router of the nodes' Cloud NAT"),
            ("create", "create the Cloud Router with the nodes' Cloud NAT"),
            ("update", "add the nodes' Cloud NAT to a router without one"),
        )
    ),
)


def rights_for(needs: list[str]) -> list[Right]:
    """The rights a run with these needs uses, in the table's order; an unknown need is refused."""
    unknown = [need for need in needs if need not in NEEDS]
    if unknown:
        raise GkeError(f"Invalid input (nothing was sent): unknown needs {unknown}; known: {', '.join(NEEDS)}.")
    return [right for right in RIGHTS if set(right.needs) & set(needs)]


def role_text(right: Right) -> str:
    """``roles/a`` or ``roles/a or roles/b``."""
    return " or ".join(right.roles)


def markdown_table() -> str:
    """docs/first-run.md's rights table: one row per permission, the role that grants it, and the task."""
    rows = ["| permission | role that grants it | what in the run needs it |", "|---|---|---|"]
    for right in RIGHTS:
        where = "" if right.on == "project" else f" (on {right.on})"
        roles = " or ".join(f"`{role}`" for role in right.roles)
        rows.append(f"| `{right.permission}`{where} | {roles} | {right.task} |")
    return "\n".join(rows) + "\n"


class ResourceManagerClient(ApiClient):
    """Cloud Resource Manager v3 over the collection's REST client (same credentials, retries, transport rules); it
    takes no query parameters."""

    API_VERSION, QUERIES = "v3", False


def _skip() -> str:
    return "or skip this check with gke_cluster_iam_check: false (playbooks: -e planb_iam_check=false)."


def refusal(exc: GkeError, project: str, quota_project: str | None) -> GkeError:
    """What a 403 from testIamPermissions means, by its ErrorInfo reason; any other error as it is."""
    if exc.code != 403 and " answered 403" not in str(exc):
        return exc
    disabled = exc.reason == "SERVICE_DISABLED" or (not exc.reason and _SERVICE_DISABLED_TEXT in str(exc))
    if disabled:
        billed = exc.metadata.get("consumer", "").removeprefix("projects/") or quota_project or project
        return GkeError(
            f"{exc} The rights check calls Cloud Resource Manager's projects.testIamPermissions, which needs no "
            f"permission but the Cloud Resource Manager API enabled on the project billed for the call (project "
            f"{billed}): `gcloud services enable cloudresourcemanager.googleapis.com --project {billed}`; " + _skip()
        )
    if exc.reason == "USER_PROJECT_DENIED":
        named = quota_project or "(the credential's)"
        return GkeError(
            f"{exc} The call names quota project {named} (x-goog-user-project), "
            f"which the caller may not bill: grant it {QUOTA_PROJECT_RIGHT} there (role {QUOTA_PROJECT_ROLE}, "
            f"{DOC_QUOTA_PROJECT}), or name a quota project it may use (quota_project, GOOGLE_CLOUD_QUOTA_PROJECT); "
            + _skip()
        )
    return GkeError(
        f"{exc} Google refused the rights check itself (projects.testIamPermissions on project {project}"
        + (f", billed to quota project {quota_project}" if quota_project else "")
        + "), for the reason it gives above; "
        + _skip()
    )


def held_permissions(
    client: ResourceManagerClient, project: str, permissions: list[str], quota_project: str | None = None
) -> list[str]:
    """The subset of ``permissions`` the caller holds on the project (one testIamPermissions call)."""
    try:
        answer = client.request(
            "POST", api_path("projects", project) + ":testIamPermissions", {"permissions": permissions}
        )
    except GkeError as exc:
        raise refusal(exc, project, quota_project or client.quota_project()) from exc
    held = (answer or {}).get("permissions") or []
    return [str(permission) for permission in held]


def run_iam_check(module: Any) -> Body:
    """gcp_iam_check: the caller holds every permission the run's needs use, else fail naming each and its role."""
    params = module.params
    rights = rights_for(params["needs"])
    check_auth(params)
    project = params["project"]
    client = ResourceManagerClient(
        params,
        endpoint(params, "resourcemanager_endpoint", RESOURCEMANAGER_ENDPOINT, "cloudresourcemanager"),
        "Cloud Resource Manager API",
    )
    asked = list(dict.fromkeys(right.permission for right in rights))
    held = set(held_permissions(client, project, asked))
    missing = [right for right in rights if right.permission not in held]
    # Known once the first call has fetched the token: the option, else the credential's quota project. Every call
    # names it, so without the right to bill it the run stops here, before the project's own missing rights.
    quota_project = client.quota_project()
    if quota_project and QUOTA_PROJECT_RIGHT not in held_permissions(
        client, quota_project, [QUOTA_PROJECT_RIGHT], quota_project
    ):
        raise GkeError(
            f"Missing right on quota project {quota_project}: every call of this run names it as x-goog-user-project, "
            f"and the caller lacks {QUOTA_PROJECT_RIGHT} there, so nothing was written. Fix: grant the caller "
            f"{QUOTA_PROJECT_ROLE} on project {quota_project} (`gcloud projects add-iam-policy-binding "
            f"{quota_project} --member=user:EMAIL --role={QUOTA_PROJECT_ROLE}`, {DOC_QUOTA_PROJECT}), or name a "
            "quota project it may use (quota_project, GOOGLE_CLOUD_QUOTA_PROJECT); " + _skip()
        )
    result: Body = {
        "changed": False,
        "checked": asked + ([f"{QUOTA_PROJECT_RIGHT} on project {quota_project}"] if quota_project else []),
        "missing": [{"permission": r.permission, "roles": list(r.roles), "task": r.task, "on": r.on} for r in missing],
    }
    elsewhere = [right for right in missing if right.on != "project"]
    for right in elsewhere:
        module.warn(
            f"The caller does not hold {right.permission} on project {project} ({role_text(right)}); the run needs it "
            f"to {right.task}, and Google checks it on {right.on}: if it is granted there alone, ignore this."
        )
    refused = [right for right in missing if right.on == "project"]
    if refused:
        lines = "; ".join(f"{r.permission} (role {role_text(r)}) to {r.task}" for r in refused)
        roles = sorted({r.roles[0] for r in refused})
        raise GkeError(
            f"Missing rights on project {project}: the caller lacks {len(refused)} of the {len(asked)} permissions "
            f"this run uses, so nothing was written: {lines}. Fix: grant the caller "
            f"{', '.join(roles)} on project {project} (`gcloud projects add-iam-policy-binding {project} "
            f"--member=user:EMAIL --role=ROLE`, {DOC_GRANT}), or skip this check with gke_cluster_iam_check: false "
            "(playbooks: -e planb_iam_check=false)."
        )
    result["msg"] = (
        f"the caller holds {len(asked) - len(missing)} of the {len(asked)} permissions this run uses on project "
        f"{project}" + (f"; {', '.join(r.permission for r in elsewhere)}: see the warning" if elsewhere else "")
    )
    return result
