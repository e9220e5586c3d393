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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ansible_collections.planb.gke.plugins.module_utils.client import _API_PATH, api_path
from ansible_collections.planb.gke.plugins.module_utils.credentials import check_auth
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError
from ansible_collections.planb.gke.plugins.module_utils.project_apis import ApiClient, endpoint

Body = dict[str, Any]

RESOURCEMANAGER_ENDPOINT = "https://cloudresourcemanager.googleapis.com"
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
    """Cloud Resource Manager v3 over the collection's REST client (same credentials, retries, transport rules)."""

    def query(
        self, method: str, path: str, query: dict[str, str], body: Body | None = None, allow_404: bool = False
    ) -> Any:
        if query or not _API_PATH.fullmatch(path):
            raise GkeError(f"{path!r} is not an API path built from quoted segments; nothing was sent")
        return self._call(method, f"{self.endpoint}/v3/{path}", f"{self.API_NAME} {method} {path}", body, allow_404)


def held_permissions(client: ResourceManagerClient, project: str, permissions: list[str]) -> list[str]:
    """The subset of ``permissions`` the caller holds on the project (one testIamPermissions call)."""
    try:
        answer = client.request(
            "POST", api_path("projects", project) + ":testIamPermissions", {"permissions": permissions}
        )
    except GkeError as exc:
        if " answered 403" not in str(exc):
            raise
        raise GkeError(
            f"{exc} The rights check calls Cloud Resource Manager's projects.testIamPermissions, which needs no "
            "permission but the Cloud Resource Manager API enabled on the project that bills the call (project "
            f"{project}, or the quota project): `gcloud services enable cloudresourcemanager.googleapis.com "
            f"--project {project}`; or skip this check with gke_cluster_iam_check: false (playbooks: "
            "-e planb_iam_check=false)."
        ) from exc
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
    result: Body = {
        "changed": False,
        "checked": asked,
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
