"""What a project is set up with, as the day-0 check (planb.gke.gcp_project_check) reads it: organisation policies,
the project's number and IAM policy, its VPC networks, its CPU quotas, and the switch that makes a fresh project.

The emulator serves, each checked against its discovery document (``gke_emulator.discovery``):

* ``GET /orgpolicy/v2/projects/P/policies/C:getEffectivePolicy`` (orgpolicy v2 ``projects.policies.getEffectivePolicy``,
  https://cloud.google.com/resource-manager/docs/reference/orgpolicy/rest/v2/projects.policies/getEffectivePolicy):
  a ``GoogleCloudOrgpolicyV2Policy`` whose name carries the project's number (the document: "responses will return
  the name using the equivalent project number") and no etag ("The returned policy will not have an ETag").
  Google's page does not say what the effective policy of a constraint set nowhere holds; the emulator answers a
  spec with no rules, which the check reads as the constraint's default (not enforced, every value allowed).
* ``GET /cloudresourcemanager/v3/projects/P`` (``projects.get``, ``Project``: ``name`` is ``projects/NUMBER``,
  https://cloud.google.com/resource-manager/reference/rest/v3/projects/get) and
  ``POST /cloudresourcemanager/v3/projects/P:getIamPolicy`` (``Policy`` with ``bindings``,
  https://cloud.google.com/resource-manager/reference/rest/v3/projects/getIamPolicy; read-only although a POST,
  as its discovery document's cloud-platform.read-only scope says). The project number is the emulator's own,
  derived from the ID. Unless the project is fresh, its Compute Engine default service account
  (``NUMBER-compute@developer.gserviceaccount.com``,
  https://cloud.google.com/compute/docs/access/service-accounts#default_service_account) holds
  ``roles/container.defaultNodeServiceAccount``, the role GKE documents for a node service account
  (https://cloud.google.com/kubernetes-engine/docs/how-to/hardening-your-cluster#use_least_privilege_sa).
* ``GET /compute/v1/projects/P/global/networks/N`` and ``.../regions/R/subnetworks/S`` (compute v1 ``networks.get``,
  ``subnetworks.get``): every project has the ``default`` network, an auto mode network with one subnet named
  ``default`` per region (https://cloud.google.com/vpc/docs/vpc#default-network; its ranges here are the emulator's
  choice), and no other until one is added; an absent one is 404 as Compute Engine answers.
* ``GET /compute/v1/projects/P/regions/R/routers`` (compute v1 ``routers.list``, a ``RouterList``,
  https://cloud.google.com/compute/docs/reference/rest/v1/routers/list): the Cloud Routers of the region, each with
  its ``network`` and its Cloud NAT gateways (``nats``, https://cloud.google.com/nat/docs/overview). A project has
  none until one is added, as a new project has none.

While an API is off for the project billed for a call (Service Usage's switch, ``gke_emulator.project``), the call
answers 403 with reason SERVICE_DISABLED and that project as its consumer, as Google answers every API that is off
on the project billed for it (https://cloud.google.com/apis/design/errors#error_info); Service Usage and Cloud Quotas
included. The project billed is the quota project the request names (``x-goog-user-project``, "the project for quota
and billing", https://cloud.google.com/apis/docs/system-parameters) when it names one, else the project in the path;
Compute Engine's, whose resources live in the project in the path, is always that project (the emulator's reading:
Google documents no list of which APIs bill the quota project).

Emulator-only switches (``/planb/v1``):

* ``POST /planb/v1/fresh-project {"project": P}``: P as a new project stands on day 0 (the tutorial's "before you
  begin" not done): every API off but Cloud Resource Manager, every quota 0, ``constraints/compute.requireShieldedVm``
  enforced (an organisation that requires Shielded VMs), and no role granted to the default service account.
* ``POST /planb/v1/org-policies {"project": P|"*", "constraint": "compute.requireShieldedVm", "spec": {...}|null}``:
  the effective policy's spec (null: set nowhere).
* ``POST /planb/v1/iam-bindings {"project": P, "role": R, "member": M, "granted": true|false}``: a binding added or
  taken from the project's IAM policy.
* ``POST /planb/v1/networks {"project": P, "name": N, "present": true|false, "subnetworks": [...]}``: a VPC network
  (with its subnetworks: ``name``, ``region``, ``ipCidrRange``, ``secondaryIpRanges``) added or removed.
* ``POST /planb/v1/routers {"project": P, "region": R, "name": N, "network": NET, "nats": [...], "present": true}``:
  a Cloud Router of network NET (a name) with its NAT gateways (``RouterNat`` bodies; [] for none) added or removed.
* ``POST /planb/v1/cpu-quotas {"project": P|"*", "displayName": "N2 CPUs", "region": R|null, "value": N}``: a CPU
  quota (``CPU_QUOTAS``; region null for ``CPUs (all regions)``).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from planb.local.gke_emulator import routers
from planb.local.gke_emulator.cloud_quotas import CPU_QUOTAS
from planb.local.gke_emulator.errors import ProjectApiError, service_disabled
from planb.local.gke_emulator.project import ProjectApis
from planb.local.gke_emulator.store import Store

Body = dict[str, Any]

ORGPOLICY = "/orgpolicy/v2/"
_COMPUTE = "https://www.googleapis.com/compute/v1"
NODE_ROLE = "roles/container.defaultNodeServiceAccount"
#: The first API path segment after the prefix -> the service that answers it.
_SERVICES = {
    "/serviceusage/v1/projects/": "serviceusage.googleapis.com",
    "/v1/projects/": "serviceusage.googleapis.com",  # Service Usage at the root URL (project.SERVICE_USAGE_AT_ROOT)
    "/cloudquotas/v1/projects/": "cloudquotas.googleapis.com",
    "/orgpolicy/v2/projects/": "orgpolicy.googleapis.com",
    "/compute/v1/projects/": "compute.googleapis.com",
}
_NAMES = {
    "serviceusage.googleapis.com": "Service Usage API",
    "cloudquotas.googleapis.com": "Cloud Quotas API",
    "orgpolicy.googleapis.com": "Organization Policy API",
    "compute.googleapis.com": "Compute Engine API",
}


def project_number(project: str) -> str:
    """The emulator's number for a project ID: twelve digits, the same every time."""
    return str(10**11 + int(hashlib.sha256(project.encode()).hexdigest(), 16) % (9 * 10**11))


def _bad(message: str) -> ProjectApiError:
    return ProjectApiError(400, message, "INVALID_ARGUMENT")


def org_policies(store: Store) -> Body:
    """The org policies the day-0 setup holds, ``"{project}/{constraint}"`` to a spec, which Compute Engine enforces
    when GKE creates VMs (``rules.check_shielded_vm``) and GKE on a peering-form cluster's create
    (``vpc_peering``)."""
    return dict((store.project_apis.get("setup") or {}).get("orgPolicies") or {})


def subnet_ranges(store: Store, project: str, location: str, cluster: Body) -> list[str] | None:
    """The secondary range names of a cluster body's subnetwork when the day-0 setup holds it (``networks``), else
    None: the emulator does not know that subnetwork's ranges (``cluster_rules.check_secondary_ranges``)."""
    subnet = str(cluster.get("subnetwork") or "")
    network = str(cluster.get("network") or "default").rsplit("/", 1)[-1]
    host = subnet.split("projects/", 1)[1].split("/", 1)[0] if "projects/" in subnet else project
    region = location if location.count("-") < 2 else location.rsplit("-", 1)[0]
    stored = ((store.project_apis.get("setup") or {}).get("networks") or {}).get(f"{host}/{network}") or {}
    for found in stored.get("subnetworks") or []:
        if found.get("name") == subnet.rsplit("/", 1)[-1] and found.get("region") == region:
            return [str(r.get("rangeName")) for r in found.get("secondaryIpRanges") or []]
    return None


class ProjectSetup:
    """Org policies, the IAM policy, networks and the fresh-project switch over ``state["projectApis"]["setup"]``."""

    def __init__(self, store: Store, apis: ProjectApis) -> None:
        self.apis = apis
        setup = store.project_apis.setdefault("setup", {})
        for key in ("fresh", "orgPolicies", "bindings", "networks", "routers"):
            setup.setdefault(key, {})
        self.setup: Body = setup

    # ---- an API that is off answers 403 ------------------------------------------------------
    def gate(self, path: str, user_project: str | None = None) -> None:
        """Raise SERVICE_DISABLED when the API serving ``path`` is off for the project billed for the call."""
        for prefix, service in _SERVICES.items():
            if path.startswith(prefix) and (prefix != "/v1/projects/" or "/services/" in path):
                project = path[len(prefix) :].split("/", 1)[0].split(":", 1)[0]
                if user_project and service != "compute.googleapis.com":
                    project = user_project
                if self.apis.service_state(project, service) != "ENABLED":
                    raise ProjectApiError(
                        403,
                        f"{_NAMES[service]} has not been used in project {project} before or it is disabled. Enable "
                        f"it by visiting https://console.developers.google.com/apis/api/{service}/overview?project="
                        f"{project} then retry.",
                        "PERMISSION_DENIED",
                        [service_disabled(project, service)],
                    )
                return

    # ---- Org Policy v2 ------------------------------------------------------------------------
    def effective_policy(self, project: str, constraint: str) -> Body:
        policies: Body = self.setup["orgPolicies"]
        spec = policies.get(f"{project}/{constraint}", policies.get(f"*/{constraint}"))
        name = f"projects/{project_number(project)}/policies/{constraint}"
        return {"name": name, "spec": dict(spec)} if spec else {"name": name, "spec": {}}

    # ---- Cloud Resource Manager v3 -------------------------------------------------------------
    def project(self, project: str) -> Body:
        return {
            "name": f"projects/{project_number(project)}",
            "projectId": project,
            "state": "ACTIVE",
            "displayName": project,
        }

    def iam_policy(self, project: str) -> Body:
        roles: dict[str, list[str]] = {}
        if not self.setup["fresh"].get(project):
            roles[NODE_ROLE] = [f"serviceAccount:{project_number(project)}-compute@developer.gserviceaccount.com"]
        for change in self.setup["bindings"].get(project, []):
            members = roles.setdefault(change["role"], [])
            if change["granted"] and change["member"] not in members:
                members.append(change["member"])
            elif not change["granted"] and change["member"] in members:
                members.remove(change["member"])
        bindings = [{"role": role, "members": members} for role, members in sorted(roles.items()) if members]
        return {"version": 1, "etag": "BwXplanb", "bindings": bindings}

    # ---- Compute Engine networks ---------------------------------------------------------------
    def _network(self, project: str, name: str) -> Body | None:
        stored = self.setup["networks"].get(f"{project}/{name}")
        if stored is None:
            return {"present": True, "subnetworks": None} if name == "default" else None
        return stored if stored.get("present") else None

    def network(self, project: str, name: str) -> Body:
        found = self._network(project, name)
        if found is None:
            missing = f"The resource 'projects/{project}/global/networks/{name}' was not found"
            raise ProjectApiError(404, missing, "NOT_FOUND")
        subnets = found["subnetworks"]
        return {
            "kind": "compute#network",
            "name": name,
            "selfLink": f"{_COMPUTE}/projects/{project}/global/networks/{name}",
            "autoCreateSubnetworks": subnets is None,
            "subnetworks": [
                f"{_COMPUTE}/projects/{project}/regions/{s['region']}/subnetworks/{s['name']}" for s in subnets or []
            ],
        }

    def subnetwork(self, project: str, region: str, name: str) -> Body:
        names = {"default"} | {key.split("/", 1)[1] for key in self.setup["networks"] if key.startswith(f"{project}/")}
        for network_name in sorted(names):
            found = self._network(project, network_name)
            if found is None:
                continue
            subnets = found["subnetworks"]
            if subnets is None:  # an auto mode network: one subnet per region, named after the network
                subnets = [{"name": network_name, "region": region, "ipCidrRange": "10.128.0.0/20"}]
            for subnet in subnets:
                if subnet["name"] == name and subnet["region"] == region:
                    return {
                        "kind": "compute#subnetwork",
                        "name": name,
                        "region": f"{_COMPUTE}/projects/{project}/regions/{region}",
                        "network": f"{_COMPUTE}/projects/{project}/global/networks/{network_name}",
                        "ipCidrRange": subnet.get("ipCidrRange", "10.0.0.0/20"),
                        "secondaryIpRanges": list(subnet.get("secondaryIpRanges") or []),
                    }
        raise ProjectApiError(
            404, f"The resource 'projects/{project}/regions/{region}/subnetworks/{name}' was not found", "NOT_FOUND"
        )

    def routers(self, project: str, region: str) -> Body:
        """compute v1 routers.list: the region's routers, a ``RouterList`` (no ``items`` when there is none)."""
        prefix = f"{project}/{region}/"
        items = [
            routers.view(project, region, key[len(prefix) :], router)
            for key, router in sorted(self.setup["routers"].items())
            if key.startswith(prefix)
        ]
        listed: Body = {"kind": "compute#routerList", "id": f"projects/{project}/regions/{region}/routers"}
        return {**listed, "items": items} if items else listed

    # ---- switches ----------------------------------------------------------------------------
    def switch(self, kind: str, request: Body) -> Body:
        project = str(request.get("project") or "*")
        if kind == "fresh-project":
            if project == "*":
                raise _bad("fresh-project needs the project it makes fresh")
            services = self.apis.state["services"]
            for key in [key for key in services if key.startswith(f"{project}/")]:
                del services[key]
            services[f"{project}/*"] = {"state": "DISABLED"}
            services[f"{project}/cloudresourcemanager.googleapis.com"] = {"state": "ENABLED"}
            self.apis.state.setdefault("quotaDefaults", {})[project] = 0
            self.setup["orgPolicies"][f"{project}/compute.requireShieldedVm"] = {"rules": [{"enforce": True}]}
            self.setup["fresh"][project] = True
            return {"fresh": project}
        if kind == "org-policies":
            constraint = str(request.get("constraint") or "")
            if not re.fullmatch(r"[a-zA-Z0-9.]+", constraint):
                raise _bad(f"constraint must be a constraint name such as compute.requireShieldedVm, not {request!r}")
            spec = request.get("spec")
            if spec is None:
                self.setup["orgPolicies"].pop(f"{project}/{constraint}", None)
            else:
                self.setup["orgPolicies"][f"{project}/{constraint}"] = dict(spec)
            return {"orgPolicies": self.setup["orgPolicies"]}
        if kind == "iam-bindings":
            role, member = str(request.get("role") or ""), str(request.get("member") or "")
            if not role.startswith("roles/") or ":" not in member or not isinstance(request.get("granted"), bool):
                raise _bad(f"role roles/..., member kind:identity and granted true or false, not {request!r}")
            self.setup["bindings"].setdefault(project, []).append(
                {"role": role, "member": member, "granted": request["granted"]}
            )
            return self.iam_policy(project)
        if kind == "networks":
            name = str(request.get("name") or "")
            if not re.fullmatch(r"[a-z]([-a-z0-9]*[a-z0-9])?", name):
                raise _bad(f"name must be a VPC network name, not {request!r}")
            subnets = request.get("subnetworks")
            self.setup["networks"][f"{project}/{name}"] = {
                "present": bool(request.get("present", True)),
                "subnetworks": list(subnets) if isinstance(subnets, list) else None,
            }
            return {"networks": self.setup["networks"]}
        if kind == "routers":
            name, where, network = (str(request.get(k) or "") for k in ("name", "region", "network"))
            nats = request.get("nats", [])
            if not (name and where and network and project != "*" and isinstance(nats, list)):
                raise _bad(f"project, region, name, network and a list of nats, not {request!r}")
            if request.get("present", True):
                self.setup["routers"][f"{project}/{where}/{name}"] = {"network": network, "nats": nats}
            else:
                self.setup["routers"].pop(f"{project}/{where}/{name}", None)
            return {"routers": self.setup["routers"]}
        display, region, value = request.get("displayName"), request.get("region"), request.get("value")
        regional = CPU_QUOTAS.get(str(display))
        if regional is None or not isinstance(value, int) or value < 0 or bool(region) != regional:
            names = ", ".join(CPU_QUOTAS)
            raise _bad(f"displayName one of {names}, a region for a regional one, value >= 0: {request!r}")
        entry = {"project": project, "displayName": display, "dimensions": {"region": region} if region else {}}
        quotas = [q for q in self.apis.state["quotas"] if {**q, "value": None} != {**entry, "value": None}]
        self.apis.state["quotas"] = [{**entry, "value": value}, *quotas]
        return {"quotas": self.apis.state["quotas"]}

    # ---- routing ------------------------------------------------------------------------------
    def route(self, method: str, path: str) -> Body | None:
        """The answer for a path this module serves, None for any other (after ``gate``)."""
        effective = r"/orgpolicy/v2/projects/([^/]+)/policies/([^/:]+):getEffectivePolicy"
        if method == "GET" and (m := re.fullmatch(effective, path)):
            return self.effective_policy(m.group(1), m.group(2))
        if m := re.fullmatch(r"/cloudresourcemanager/v3/projects/([^/:]+)(:getIamPolicy)?", path):
            if m.group(2) and method == "POST":
                return self.iam_policy(m.group(1))
            if not m.group(2) and method == "GET":
                return self.project(m.group(1))
        if method == "GET" and (m := re.fullmatch(r"/compute/v1/projects/([^/]+)/global/networks/([^/]+)", path)):
            return self.network(m.group(1), m.group(2))
        if method == "GET" and (
            m := re.fullmatch(r"/compute/v1/projects/([^/]+)/regions/([^/]+)/subnetworks/([^/]+)", path)
        ):
            return self.subnetwork(m.group(1), m.group(2), m.group(3))
        if method == "GET" and (m := re.fullmatch(r"/compute/v1/projects/([^/]+)/regions/([^/]+)/routers", path)):
            return self.routers(m.group(1), m.group(2))
        return None
