# planb.gke: the day-0 check's reads for private nodes: Cloud NAT for their egress, the firewall for Kueue's webhook.
"""What private nodes need beyond GKE's own checks, read by the day-0 check (gcp_project_check).

* **Cloud NAT.** Nodes without external addresses reach the internet only through Cloud NAT (a NAT gateway on a Cloud
  Router of the nodes' network in the cluster's region, https://cloud.google.com/nat/docs/overview; GKE's example:
  https://cloud.google.com/nat/docs/gke-example). GKE creates such a cluster without one, so this is planb's policy:
  a blocker, because the images of Kueue and KubeRay's Ray workers and the job's pip packages come from registries on
  the internet (registry.k8s.io, Docker Hub, PyPI) and a training pod would wait on its image pull while its TPU
  slice bills. The read is Compute Engine ``routers.list`` in the network's project (a Shared VPC's host project
  owns the routers; https://cloud.google.com/compute/docs/reference/rest/v1/routers/list). A mirror for images and
  packages (docs/first-run.md, section 8) stands in for NAT: ``cloud_nat: false`` (``planb_cloud_nat``) skips it.
  planb checks and does not create NAT unless asked (``planb_cloud_nat_create``, which the cluster play runs with
  ``gcp_router_nat`` and which skips this read): a router is a network resource, in a Shared VPC the host project's,
  that a run may have no right to write (``compute.routers.create``), and the fix is two gcloud commands.
* **Kueue's webhook on 9443.** With private nodes on VPC Network Peering (``master_ipv4_cidr``), GKE's firewall rule
  lets the control plane reach the nodes on TCP 443 and 10250 only, and a webhook on another port needs a rule of
  its own (https://cloud.google.com/kubernetes-engine/docs/how-to/legacy/network-isolation#add_firewall_rules,
  "Adding firewall rules for specific use cases"; Google's service mesh page does the same for its webhook:
  https://cloud.google.com/service-mesh/docs/private-cluster-open-port). Kueue's webhook server listens on 9443, so
  without the rule every Job and RayJob create times out. It is a note, not a blocker, and planb does not create the
  rule: its target is the nodes' network tag, which GKE generates when it creates the cluster (after this check),
  and its source the control plane's range; the note gives the commands to run once the cluster exists.
"""

from __future__ import annotations

from ansible_collections.planb.gke.plugins.module_utils.client import api_path
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError
from ansible_collections.planb.gke.plugins.module_utils.locations import region_of
from ansible_collections.planb.gke.plugins.module_utils.project_apis import ApiClient
from ansible_collections.planb.gke.plugins.module_utils.project_reads import Finding, network_parts, not_read

DOC_NAT = "https://cloud.google.com/nat/docs/gke-example"
DOC_WEBHOOK_FIREWALL = (
    "https://cloud.google.com/kubernetes-engine/docs/how-to/legacy/network-isolation#add_firewall_rules"
)
#: Kueue's webhook server's port (its manager's --webhook-port default, the Service's targetPort).
KUEUE_WEBHOOK_PORT = 9443


def _serves(router: dict[str, object], network: str) -> bool:
    """Whether a router of ``routers.list`` is on ``network`` (a name) and has a NAT gateway."""
    on = str(router.get("network") or "").rsplit("/", 1)[-1] == network
    return on and bool(router.get("nats"))


def nat_findings(
    client: ApiClient, project: str, location: str, network: str, private_nodes: bool, cloud_nat: bool
) -> list[Finding]:
    """With private nodes: a blocker (planb's policy) when the network has no Cloud NAT in the cluster's region."""
    if not private_nodes or not cloud_nat:
        return []
    host, name = network_parts(network or "default", project, "networks")
    region = region_of(location)
    try:
        answer = client.request("GET", api_path("projects", host, "regions", region, "routers"))
    except GkeError as exc:
        return [not_read("the Cloud NAT routers", exc, project)]
    if any(_serves(router, name) for router in answer.get("items") or []):
        return []
    return [
        Finding(
            "network",
            f"the network {name} of project {host} has no Cloud NAT in region {region}, and the cluster's nodes are "
            "private (planb_private_nodes). planb's policy: this is a blocker, because GKE creates the cluster "
            "anyway but its nodes cannot pull Kueue's, KubeRay's and the job's images or pip packages from the "
            f"internet without NAT ({DOC_NAT}), so a job would wait on its image while its slice bills",
            f"`gcloud compute routers create planb-nat-router --network {name} --region {region} --project {host}` "
            f"then `gcloud compute routers nats create planb-nat --router planb-nat-router --region {region} "
            f"--project {host} --auto-allocate-nat-external-ips --nat-all-subnet-ip-ranges`; or let the cluster play "
            "create them (planb_cloud_nat_create: true, roles/compute.networkAdmin); or, with a mirror for the images "
            "and packages (docs/first-run.md, section 8), set planb_cloud_nat: false",
            by="planb",
        )
    ]


def webhook_findings(project: str, network: str, private_nodes: bool, master_ipv4_cidr: str) -> list[Finding]:
    """With private nodes on a control plane range: a note naming the firewall rule Kueue's webhook needs."""
    if not private_nodes or not master_ipv4_cidr:
        return []
    host, name = network_parts(network or "default", project, "networks")
    return [
        Finding(
            "network",
            f"with private nodes, GKE lets the control plane ({master_ipv4_cidr}) reach the nodes on TCP 443 and "
            f"10250 only, and Kueue's webhook listens on {KUEUE_WEBHOOK_PORT}: without a firewall rule every Job and "
            f"RayJob create times out ({DOC_WEBHOOK_FIREWALL})",
            "once the cluster exists, read its nodes' tag (TARGET_TAGS of `gcloud compute firewall-rules list "
            "--filter 'name~gke-CLUSTER-[0-9a-z]*-master'`) and add "
            "`gcloud compute firewall-rules create planb-kueue-webhook "
            f"--network {name} --project {host} --direction INGRESS --allow tcp:{KUEUE_WEBHOOK_PORT} "
            f"--source-ranges {master_ipv4_cidr} --target-tags NODE_TAG`",
            blocker=False,
        )
    ]
