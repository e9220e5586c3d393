#!/usr/bin/python
# planb: a zonal/regional GKE cluster with image streaming and the Ray operator add-on (GKE REST API v1).
# Holds one thing: the module's interface (DOCUMENTATION, EXAMPLES, RETURN), which Ansible reads from this file.
DOCUMENTATION = r"""
module: gke_cluster
short_description: Create, update or delete a GKE cluster
version_added: "0.1.0"
description:
  - Manages C(projects/*/locations/*/clusters/*) of the GKE REST API v1 (or the planb GKE emulator).
  - Idempotent; supports check mode and diff (server-only fields are ignored in the comparison).
  - Waits for GKE's long-running operations (status RUNNING) and reports polls per operation.
  - Updates in place the RayOperator add-on and image streaming; the default pool's machine type and size are
    immutable here and fail naming the fix.
  - O(version) is a floor, not a pin. A new cluster is created at it; an existing one below it is upgraded to it
    (C(desiredMasterVersion)); one at or above it (GKE upgrades a cluster on a release channel by itself,
    U(https://cloud.google.com/kubernetes-engine/docs/concepts/cluster-upgrades)) is left as it is.
  - Refuses versions older than 1.34 (planb's policy, from the tutorial's GKE_VERSION).
  - Turns Workload Identity Federation for GKE on or off in place (O(workload_identity)), and changes the
    release channel in place (O(release_channel)).
  - Network, subnetwork, Dataplane V2, private nodes, the control plane's range and the nodes' service account are
    set at creation only; a change is refused naming the option.
options:
  name:
    description: Cluster name.
    type: str
    required: true
  location:
    description: Zone (zonal cluster, for example us-east5-b) or region.
    type: str
    required: true
  state:
    description: Whether the cluster should exist.
    type: str
    choices: [present, absent]
    default: present
  version:
    description:
      - The oldest GKE version the cluster may run, a version or prefix (C(1.34), C(1.34.1-gke.1829001)); at
        least 1.34. A cluster already newer (GKE's own upgrade on its release channel) is not changed.
    type: str
    default: "1.34"
  default_pool_machine_type:
    description: Machine type of C(default-pool) (CPU pool for Ray heads and system pods).
    type: str
    default: n2-standard-16
  default_pool_node_count:
    description: Nodes in C(default-pool) at creation.
    type: int
    default: 1
  ray_operator:
    description: The RayOperator add-on (C(addonsConfig.rayOperatorConfig.enabled)).
    type: bool
    default: true
  image_streaming:
    description: Image streaming for new node pools (C(nodePoolDefaults.nodeConfigDefaults.gcfsConfig.enabled)).
    type: bool
    default: true
  default_pool_min_node_count:
    description:
      - The least nodes GKE's autoscaler keeps in C(default-pool) (C(nodePools[].autoscaling.minNodeCount)), with
        O(default_pool_max_node_count); at least 1 (planb's policy, since the pool runs Kueue, the KubeRay operator
        and the Ray heads). Omitted, C(default-pool) is not autoscaled.
      - Changed in place (C(nodePools.setAutoscaling) on C(default-pool)).
    type: int
  default_pool_max_node_count:
    description: The most nodes GKE's autoscaler gives C(default-pool), with O(default_pool_min_node_count).
    type: int
  labels:
    description:
      - Cluster resource labels (C(resourceLabels)), which GKE also puts on the cluster's VMs and disks, so the billing
        export splits costs by them. Google's label rules are checked before any API call.
      - Changed in place (C(clusters.setResourceLabels)); labels set outside planb are kept.
    type: dict
  cost_allocation:
    description:
      - GKE cost allocation (C(costManagementConfig.enabled)), which splits the cluster's costs by namespace and by
        Kubernetes label in the billing export; changed in place. Omitted, the cluster's setting is left alone.
      - See U(https://cloud.google.com/kubernetes-engine/docs/how-to/cost-allocations).
    type: bool
  master_authorized_networks:
    description:
      - The IPv4 ranges that may reach the control plane's endpoint (C(masterAuthorizedNetworksConfig)), at most 50;
        V([]) turns the restriction off. Omitted, the cluster's setting is left alone. Changed in place.
      - See U(https://cloud.google.com/kubernetes-engine/docs/how-to/authorized-networks).
    type: list
    elements: str
  workload_identity:
    description:
      - Workload Identity Federation for GKE (C(workloadIdentityConfig.workloadPool)), so pods authenticate to
        Google APIs (a C(gs://) checkpoint bucket) as their Kubernetes service account.
      - V(true) sets the workload pool C(PROJECT_ID.svc.id.goog), the only one GKE accepts, and at creation runs
        C(default-pool) with the GKE metadata server (C(GKE_METADATA)); V(false) turns it off (an empty pool);
        omitted, the module leaves the cluster's setting alone.
      - Changed in place (C(desiredWorkloadIdentityConfig)). Node pools get the metadata server with
        M(planb.gke.gke_node_pool)'s O(planb.gke.gke_node_pool#module:workload_metadata_mode=GKE_METADATA).
      - See U(https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity).
    type: bool
  dataplane_v2:
    description:
      - GKE Dataplane V2 (C(networkConfig.datapathProvider=ADVANCED_DATAPATH)), which enforces Kubernetes
        NetworkPolicy, so the NetworkPolicies planb's chart ships hold. It needs a VPC-native cluster, so the body
        also sets C(ipAllocationPolicy.useIpAliases).
      - V(false) creates the cluster with GKE's legacy datapath (C(LEGACY_DATAPATH)), where NetworkPolicy is not
        enforced unless network policy enforcement is enabled separately.
      - Set at creation only; a cluster whose datapath differs is refused, naming the option.
      - See U(https://cloud.google.com/kubernetes-engine/docs/concepts/dataplane-v2).
    type: bool
    default: true
  network:
    description:
      - The VPC network the cluster's nodes join (C(network)); omitted, GKE takes the project's C(default)
        network, which organisations often forbid.
      - Set at creation only; a cluster on another network is refused, naming the option.
    type: str
  subnetwork:
    description:
      - The subnetwork of O(network) in the cluster's region (C(subnetwork)); omitted, GKE picks the network's
        subnetwork in that region.
      - Set at creation only; a cluster on another subnetwork is refused, naming the option.
    type: str
  private_nodes:
    description:
      - Nodes with internal IP addresses only (C(networkConfig.defaultEnablePrivateNodes), the field the container
        v1 discovery document names in place of the deprecated C(privateClusterConfig.enablePrivateNodes)). The
        cluster is then VPC-native whatever O(dataplane_v2) says (C(ipAllocationPolicy.useIpAliases)), as GKE
        requires of private nodes.
      - Nodes without external addresses reach the internet (Docker Hub, PyPI) only through Cloud NAT or a mirror,
        which planb does not create.
      - Set at creation only, as planb's policy, because GKE's C(desiredDefaultEnablePrivateNodes) applies to nodes
        created afterwards only; a cluster whose setting differs is refused, naming the option.
      - See U(https://cloud.google.com/kubernetes-engine/docs/how-to/network-isolation).
    type: bool
    default: false
  master_ipv4_cidr:
    description:
      - The control plane's internal range (C(privateClusterConfig.masterIpv4CidrBlock)), with O(private_nodes)
        only; omitted, GKE picks the control plane's address itself.
      - A /28 (GKE's rule) within RFC 1918 (planb's policy), refused before any API call otherwise; that it
        overlaps no range of the network is GKE's check.
      - Set at creation only (GKE cannot change it); a cluster with another range is refused, naming the option.
      - See U(https://cloud.google.com/kubernetes-engine/docs/how-to/legacy/network-isolation).
    type: str
  node_service_account:
    description:
      - The service account C(default-pool)'s nodes run as (C(nodePools[].config.serviceAccount)); omitted, Compute
        Engine's default service account. Give the same to M(planb.gke.gke_node_pool)'s
        O(planb.gke.gke_node_pool#module:node_service_account) for the other pools.
      - An email C(SA_NAME@PROJECT_ID.iam.gserviceaccount.com) or
        C(PROJECT_NUMBER-compute@developer.gserviceaccount.com), checked by shape before any API call; that it
        exists and that the caller may act as it (C(iam.serviceAccounts.actAs)) is GKE's check.
      - Set at creation only (GKE cannot change a node pool's service account); a cluster whose C(default-pool)
        runs as another one is refused, naming the option.
    type: str
  release_channel:
    description:
      - The GKE release channel (C(releaseChannel.channel)) - V(RAPID), V(REGULAR), V(STABLE) or V(EXTENDED);
        V(UNSPECIFIED), which the discovery document deprecates, is refused (planb's policy).
      - Omitted, the module sends none and leaves the channel to GKE, which enrolls a new cluster in one of its
        choice.
      - Changed in place (C(desiredReleaseChannel)); whether the cluster's version may move to that channel is
        GKE's check.
      - See U(https://cloud.google.com/kubernetes-engine/docs/concepts/release-channels).
    type: str
  shielded_nodes:
    description:
      - Shielded GKE Nodes (C(shieldedNodes.enabled)) - each node proves its identity with its vTPM before it joins.
        GKE turns it on for new clusters by itself; the module sends it so the body says it.
      - Changed in place (C(desiredShieldedNodes)).
      - See U(https://cloud.google.com/kubernetes-engine/docs/how-to/shielded-gke-nodes).
    type: bool
    default: true
  secure_boot:
    description:
      - Secure boot for C(default-pool)'s nodes (C(nodePools[].config.shieldedInstanceConfig.enableSecureBoot), with
        integrity monitoring on); GKE leaves it off unless a pool turns it on, and an organisation that enforces
        C(constraints/compute.requireShieldedVm) refuses VMs without it. Give the same to M(planb.gke.gke_node_pool)'s
        O(planb.gke.gke_node_pool#module:secure_boot) for the other pools.
      - Set at creation only (container v1 UpdateNodePoolRequest has no shieldedInstanceConfig); a cluster whose
        C(default-pool) differs is refused, naming the option and the fix (recreate).
      - See U(https://cloud.google.com/kubernetes-engine/docs/how-to/shielded-gke-nodes).
    type: bool
    default: true
  cluster_secondary_range_name:
    description:
      - The secondary range of O(subnetwork) the pods take their addresses from
        (C(ipAllocationPolicy.clusterSecondaryRangeName), the cluster VPC-native); a Shared VPC's host project
        creates it. With O(services_secondary_range_name) and O(subnetwork) (refused before any API call otherwise).
      - Set at creation only (container v1 ClusterUpdate has no such field); a cluster with another range is
        refused, naming the option.
      - See U(https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-shared-vpc).
    type: str
  services_secondary_range_name:
    description:
      - The secondary range of O(subnetwork) the Services' ClusterIPs come from
        (C(ipAllocationPolicy.servicesSecondaryRangeName)). With O(cluster_secondary_range_name).
      - Set at creation only, as O(cluster_secondary_range_name).
    type: str
  recreate_on_error:
    description:
      - Delete and recreate a cluster that GKE reports in status ERROR.
      - Off by default, as planb's policy, so that a routine re-run never deletes a cluster that may run jobs.
      - Even when on, a cluster whose node pools still have nodes is refused (each pool's managed instance
        groups are read from the Compute Engine API, see M(planb.gke.gke_node_pool)); if they cannot be read,
        it refuses.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    details: Reads the cluster and reports what would be created, updated or deleted; sends no write.
  diff_mode:
    support: full
    details: C(before) and C(after) of the fields the module manages; server-only fields are left out.
  action:
    description: An action plugin answers O(validate_only=true) on the controller; anything else runs the module.
    support: full
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - planb.gke.gke_auth
  - planb.gke.gke_auth.converge
author:
  - planb engineers (@planb)
"""

EXAMPLES = r"""
- name: Create the tutorial's cluster
  planb.gke.gke_cluster:
    name: tpu-cluster
    location: us-east5-b
    project: my-project
    auth_kind: application
    version: "1.34"
    default_pool_machine_type: n2-standard-16
    ray_operator: true
    image_streaming: true
"""

RETURN = r"""
cluster:
  description:
    - The cluster as GKE returns it (a GKE v1 Cluster); in check mode, the body that would be sent when it would be
      created; V({}) when O(state=absent).
  returned: always
  type: dict
  sample:
    name: tpu-cluster
    location: us-east5-b
    status: RUNNING
    currentMasterVersion: 1.34.1-gke.1829001
    addonsConfig: {rayOperatorConfig: {enabled: true}}
    nodePoolDefaults: {nodeConfigDefaults: {gcfsConfig: {enabled: true}}}
    networkConfig: {datapathProvider: ADVANCED_DATAPATH, defaultEnablePrivateNodes: false}
  contains:
    name:
      description: The cluster's name.
      returned: when the cluster exists or would be created
      type: str
      sample: tpu-cluster
    status:
      description: GKE's status of the cluster (C(PROVISIONING), C(RUNNING), C(RECONCILING), C(STOPPING), C(ERROR)).
      returned: when the cluster exists
      type: str
      sample: RUNNING
    currentMasterVersion:
      description: The control plane's GKE version.
      returned: when the cluster exists
      type: str
      sample: 1.34.1-gke.1829001
    location:
      description: The cluster's zone or region.
      returned: when the cluster exists
      type: str
      sample: us-east5-b
actions:
  description: What was (or in check mode would be) done, in order.
  returned: always
  type: list
  elements: str
  sample: [create]
operations:
  description:
    - The GKE operations waited for, in order; V([]) when nothing was sent, in check mode, or with O(wait=false).
    - Modules cannot print while they run; C(ansible-playbook -v) shows this list, each poll in
      RV(operations[].progress).
  returned: always
  type: list
  elements: dict
  sample:
    - {name: operation-1718000000000-5f1c2a7e, operationType: CREATE_CLUSTER, target: cluster tpu-cluster,
       polls: 2, elapsed_s: 10.1, status: DONE, progress: [
         {elapsed_s: 5.0, status: RUNNING, metrics: {nodes done: 3, nodes total: 4}}, {elapsed_s: 10.1, status: DONE}]}
  contains:
    name:
      description: The operation's name.
      type: str
      sample: operation-1718000000000-5f1c2a7e
    operationType:
      description: GKE's type of the operation.
      type: str
      sample: CREATE_CLUSTER
    target:
      description: What the operation acts on, in words.
      type: str
      sample: cluster tpu-cluster
    polls:
      description: How many times the operation was read until it was C(DONE).
      type: int
      sample: 37
    elapsed_s:
      description: Seconds from the first wait to C(DONE).
      type: float
      sample: 184.6
    status:
      description: C(DONE); a failed or timed-out operation fails the module instead.
      type: str
      sample: DONE
    progress:
      description: >-
        One entry per poll, oldest first; GKE's C(Operation.progress) (an C(OperationProgress) in the container v1
        discovery document) reduced to its metrics by name, and its stages when it has any.
      type: list
      elements: dict
      sample:
        - {elapsed_s: 10.1, status: RUNNING, metrics: {nodes done: 3, nodes total: 4}}
        - {elapsed_s: 15.1, status: DONE}
      contains:
        elapsed_s:
          description: Seconds since the wait began when this poll's answer came.
          type: float
          sample: 10.1
        status:
          description: The operation's status at this poll (C(PENDING), C(RUNNING), C(DONE) or C(ABORTING)).
          type: str
          sample: RUNNING
        metrics:
          description:
            - The progress metrics by name; an integer metric (an C(intValue), a string in GKE's JSON) as a number.
            - V({}) when GKE sent C(progress) without metrics.
          returned: when GKE sent C(progress)
          type: dict
          sample: {nodes done: 3, nodes total: 4}
        stages:
          description: The stages of a multi-stage operation, each with C(name), C(status) and C(metrics).
          returned: when GKE's C(progress) has stages
          type: list
          elements: dict
          sample: [{name: CREATING_NODES, status: RUNNING, metrics: {nodes done: 3}}]
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.cluster import run_cluster  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.cluster_request import (  # noqa: E402
    CLUSTER_ARGSPEC,
    CLUSTER_RELATIONS,
)
from ansible_collections.planb.gke.plugins.module_utils.converge import main_wrapper  # noqa: E402

ARGUMENT_SPEC = CLUSTER_ARGSPEC
RELATIONS = CLUSTER_RELATIONS


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True, **RELATIONS)
    main_wrapper(module, run_cluster)


if __name__ == "__main__":
    main()
