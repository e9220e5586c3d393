"""The rights table (planb.gke's module_utils/iam.py) is the one docs/first-run.md prints, and it covers what the
roles call.

* docs/first-run.md's rights table is ``iam.markdown_table()`` verbatim;
* the needs the module, the gke_cluster role's argument specs and its iam.yml name are the table's;
* every planb.gke module the roles and playbooks call that reaches a Google API has its permissions in the table
  (GKE's per method: https://cloud.google.com/kubernetes-engine/docs/reference/api-permissions), so a new call
  without a row fails here.
"""

from __future__ import annotations

import re

import pytest
import yaml
from ansible_collections.planb.gke.plugins.module_utils import iam
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError
from ansible_collections.planb.gke.plugins.module_utils.project_check import CHECK_RIGHTS

from planb import paths
from planb.build.collection import COLLECTION_DIR

FIRST_RUN = paths.REPO / "docs" / "first-run.md"
#: The Google API permissions each module's calls need; modules that call no Google API map to nothing.
MODULE_PERMISSIONS: dict[str, set[str]] = {
    "gcp_service": {"serviceusage.services.get", "serviceusage.services.enable"},
    "gcp_quota_check": {"cloudquotas.quotas.get"},
    "gcp_reservation_info": {"compute.reservations.get"},
    "gcp_storage_bucket": {"storage.buckets.get", "storage.buckets.create"},
    "gcp_router_nat": {"compute.routers.get", "compute.routers.create", "compute.routers.update"},
    "gke_cluster": {
        "container.clusters.get",
        "container.clusters.create",
        "container.clusters.update",
        "container.clusters.delete",
        "container.operations.get",
        "iam.serviceAccounts.actAs",
        "compute.instanceGroupManagers.get",
    },
    "gke_node_pool": {
        "container.clusters.get",
        "container.clusters.update",
        "container.operations.get",
        "compute.reservations.get",
        "compute.instanceGroupManagers.get",
    },
    "gke_cluster_info": {"container.clusters.get", "container.clusters.getCredentials"},
    "gke_node_pool_info": {"container.clusters.get"},
    # The day-0 check's reads: the run's table for the APIs and quotas, its own rights (CHECK_RIGHTS) for the rest.
    "gcp_project_check": {
        "serviceusage.services.get",
        "cloudquotas.quotas.get",
        "orgpolicy.policy.get",
        "resourcemanager.projects.get",
        "resourcemanager.projects.getIamPolicy",
        "compute.networks.get",
        "compute.subnetworks.get",
        "compute.routers.list",
    },
    # testIamPermissions needs no permission; the rest are action plugins or local checks.
    "gcp_iam_check": set(),
    "helm_version": set(),
    "inventory_vars": set(),
    "ladder": set(),
    "node_pool_layout": set(),
}


def test_the_first_run_page_prints_the_table() -> None:
    assert iam.markdown_table() in FIRST_RUN.read_text()


def test_every_permission_is_well_formed_and_every_need_is_used() -> None:
    permissions = [right.permission for right in iam.RIGHTS]
    assert len(permissions) == len(set(permissions))
    for right in iam.RIGHTS:
        assert re.fullmatch(r"[a-z]+\.[a-zA-Z]+\.[a-zA-Z]+", right.permission), right
        assert right.roles and all(role.startswith("roles/") for role in right.roles), right
        assert right.needs and set(right.needs) <= set(iam.NEEDS), right
    assert {need for right in iam.RIGHTS for need in right.needs} == set(iam.NEEDS)


def test_needs_pick_their_rights_and_an_unknown_need_is_refused() -> None:
    assert [r.permission for r in iam.rights_for(["quota"])] == ["cloudquotas.quotas.get"]
    assert "container.clusters.getCredentials" not in {r.permission for r in iam.rights_for(["cluster"])}
    with pytest.raises(GkeError, match=r"unknown needs \['clusters'\]"):
        iam.rights_for(["cluster", "clusters"])


def test_the_module_and_the_role_name_the_tables_needs() -> None:
    from ansible_collections.planb.gke.plugins.modules import gcp_iam_check

    documented = yaml.safe_load(gcp_iam_check.DOCUMENTATION)["options"]["needs"]["choices"]
    specs = yaml.safe_load((COLLECTION_DIR / "roles/gke_cluster/meta/argument_specs.yml").read_text())
    role = specs["argument_specs"]["main"]["options"]["gke_cluster_iam_needs"]["choices"]
    assert documented == role == list(iam.NEEDS)
    task = (COLLECTION_DIR / "roles/gke_cluster/tasks/iam.yml").read_text()
    play = (COLLECTION_DIR / "playbooks/cluster.yml").read_text()
    named = set(re.findall(r"\['([a-z_]+)'\]", task)) | {"cluster", "apis"}
    assert named | {"reservations"} == set(iam.NEEDS)
    assert "['reservations']" in play


def test_every_module_the_roles_call_has_its_permissions_in_the_table() -> None:
    called = set()
    for path in [*COLLECTION_DIR.glob("roles/*/tasks/*.yml"), *COLLECTION_DIR.glob("playbooks/*.yml")]:
        called |= set(re.findall(r"^\s+planb\.gke\.([a-z_]+):", path.read_text(), re.MULTILINE))
    assert called and called <= set(MODULE_PERMISSIONS), called - set(MODULE_PERMISSIONS)
    tabled = {right.permission for right in iam.RIGHTS} | {right.permission for right in CHECK_RIGHTS}
    for module in called:
        assert MODULE_PERMISSIONS[module] <= tabled, (module, MODULE_PERMISSIONS[module] - tabled)


def test_the_first_run_page_names_the_day0_check_s_own_rights() -> None:
    """The day-0 check asks for the rights its own reads use beside the run's; docs/first-run.md lists each with the
    role that grants it."""
    text = FIRST_RUN.read_text()
    for right in CHECK_RIGHTS:
        assert f"`{right.permission}`" in text and f"`{right.roles[0]}`" in text, right
