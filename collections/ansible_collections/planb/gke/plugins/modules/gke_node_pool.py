#!/usr/bin/python
# planb: a GKE node pool with TPU topology, queued provisioning and flex-start (GKE REST API v1).
# Holds one thing: the module's interface (DOCUMENTATION, EXAMPLES, RETURN), which Ansible reads from this file.
DOCUMENTATION = r"""
module: gke_node_pool
short_description: Create, update or delete a GKE node pool, including DWS flex-start and queued provisioning
version_added: "0.1.0"
description:
  - Manages C(projects/*/locations/*/clusters/*/nodePools/*) of the GKE REST API v1 (or the planb GKE emulator).
  - Idempotent; supports check mode and diff (server-only fields are ignored in the comparison).
  - Waits for GKE's long-running operations and reports how long and how many polls each took.
  - Mutable fields (autoscaling, auto-repair/upgrade, labels, taints, max run duration) are updated in place;
    a change to an immutable field (machine type, TPU topology, reservation affinity, queued provisioning, flex-start,
    spot, GPU accelerators, the nodes' service account, secure boot) fails naming it and the fix (delete, recreate).
  - Refuses, before any API call, a TPU pool in a zone Google's list of TPU zones does not name for its generation, and
    a TPU pool of a regional cluster without exactly one zone in O(node_locations) (planb's policy based on Google's
    list; see O(check_tpu_zone)).
  - A node pool found in status ERROR (for example after a failed create) makes the module fail by default;
    with O(recreate_on_error=true) it is deleted and recreated, but only while it has no nodes.
options:
  name:
    description: Node pool name.
    type: str
    required: true
  cluster:
    description: Cluster name.
    type: str
    required: true
  location:
    description: Zone or region of the cluster (for example us-east5-b).
    type: str
    required: true
  state:
    description: Whether the node pool should exist.
    type: str
    choices: [present, absent]
    default: present
  machine_type:
    description: Compute Engine machine type, for example C(ct6e-standard-4t). Required with O(state=present).
    type: str
  tpu_topology:
    description: TPU slice topology (C(placementPolicy.tpuTopology)), for example C(4x4).
    type: str
  placement_policy:
    description:
      - Name of a Compute Engine workload policy (C(placementPolicy.policyName)), in the cluster's project and
        region. A multi-host TPU7x (Ironwood) slice takes it instead of O(tpu_topology), as the policy carries the
        slice's accelerator topology (U(https://cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood)).
      - Create it first, for example C(gcloud compute resource-policies create workload-policy NAME
        --region=REGION --type=HIGH_THROUGHPUT --accelerator-topology=2x2x2). Cannot change in place.
    type: str
  initial_node_count:
    description: Nodes at creation (not compared afterwards; the autoscaler owns the size).
    type: int
    default: 0
  autoscaling:
    description: Cluster autoscaler settings. Omit to leave autoscaling off.
    type: dict
    suboptions:
      enabled:
        description: Enable autoscaling.
        type: bool
        default: true
      min_node_count:
        description: Minimum nodes per zone.
        type: int
      max_node_count:
        description: Maximum nodes per zone.
        type: int
      total_min_node_count:
        description: Minimum nodes in total (exclusive with the per-zone counts).
        type: int
      total_max_node_count:
        description: Maximum nodes in total (exclusive with the per-zone counts).
        type: int
      location_policy:
        description: C(ANY) (planb's policy for flex-start and queued provisioning pools) or C(BALANCED), GKE's default.
        type: str
        choices: [BALANCED, ANY]
  reservation_affinity:
    description:
      - C(config.reservationAffinity.consumeReservationType).
      - V(SPECIFIC_RESERVATION) consumes the reservation O(reservation) names (key
        C(compute.googleapis.com/reservation-name)); before the pool is created the module reads that reservation
        (Compute Engine API) and fails, sending nothing to GKE, when it does not exist in the pool's zone, reserves
        another machine type, is not shared with the project, or is not specificReservationRequired (planb's policy;
        see O(reservation_require_specific)). U(https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations)
    type: str
    choices: [NO_RESERVATION, ANY_RESERVATION, SPECIFIC_RESERVATION]
  reservation:
    description:
      - The reservation a V(SPECIFIC_RESERVATION) pool consumes - its name (a reservation of O(project)) or
        C(projects/<owner project>/reservations/<name>) for one shared from another project. Only with
        O(reservation_affinity=SPECIFIC_RESERVATION).
    type: str
  reservation_require_specific:
    description:
      - Refuse a reservation whose C(specificReservationRequired) is false (planb's policy - VMs with the default
        affinity could drain it). V(false) accepts it.
    type: bool
    default: true
  compute_endpoint:
    description:
      - Base URL of the Compute Engine API, where the O(reservation) is read. Default
        C(https://compute.googleapis.com/compute), or C(<api_endpoint>/compute) when O(api_endpoint) is a loopback
        address (planb's emulator).
    type: str
  queued_provisioning:
    description: DWS queued provisioning (C(queuedProvisioning.enabled)); nodes come via ProvisioningRequests.
    type: bool
    default: false
  flex_start:
    description: DWS flex-start VMs (C(config.flexStart)).
    type: bool
    default: false
  spot:
    description:
      - Spot VMs (C(config.spot)); never with O(flex_start) or O(queued_provisioning), whose VMs are flex-start VMs
        (a VM has one provisioning model, U(https://cloud.google.com/compute/docs/instances/provisioning-models)).
      - GKE labels Spot nodes C(cloud.google.com/gke-spot=true) itself; to keep other pods off them, taint the pool
        C(cloud.google.com/gke-spot=true:NoSchedule) (O(taints)), as
        U(https://cloud.google.com/kubernetes-engine/docs/how-to/spot-vms) recommends.
    type: bool
    default: false
  auto_repair:
    description: Node auto-repair (planb's policy, not GKE's, requires false for flex-start and queued provisioning).
    type: bool
    default: true
  auto_upgrade:
    description: Node auto-upgrade.
    type: bool
    default: true
  maintenance_exclusion:
    description:
      - V(true) gives the pool a maintenance exclusion until the end of support of the control plane's version
        (C(maintenancePolicy.exclusionUntilEndOfSupport.enabled), container v1 C(NodePoolMaintenancePolicy)). GKE
        upgrades the control plane on its release channel, but not these nodes until then
        (U(https://cloud.google.com/kubernetes-engine/docs/concepts/maintenance-windows-and-exclusions)).
      - Changed in place (C(nodePools.update) with C(maintenancePolicy)). Omitted, the pool's policy is left alone.
    type: bool
  labels:
    description:
      - Kubernetes node labels (C(config.labels)) this module manages. Only these keys are compared and
        updated; labels GKE adds itself (C(cloud.google.com/gke-tpu-accelerator), ...) and any other key are
        left as they are, also when the module updates its own.
    type: dict
  resource_labels:
    description: Resource labels on the pool's VMs (C(config.resourceLabels)), by key as O(labels); GKE's own kept.
    type: dict
  taints:
    description:
      - Kubernetes node taints (C(config.taints)) this module manages, by key. Only these keys are compared and
        updated; taints GKE adds itself (C(google.com/tpu), C(cloud.google.com/gke-queued)) and any other key
        are left as they are, also when the module updates its own.
    type: list
    elements: dict
    suboptions:
      key:
        description: Taint key.
        type: str
        required: true
      value:
        description: Taint value.
        type: str
      effect:
        description: Taint effect.
        type: str
        required: true
        choices: [NoSchedule, PreferNoSchedule, NoExecute, NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE]
  max_run_duration:
    description: C(config.maxRunDuration), as seconds or with a unit (C(86400s), C(24h), C(7d)); at most 7 days.
    type: str
  cluster_version:
    description: The cluster's GKE version, if known, so the TPU flex-start version rule is checked before any API call.
    type: str
  node_locations:
    description:
      - The zones of the pool's nodes (C(locations)); omit for GKE's default (a zonal cluster's zone, a regional
        cluster's zones). Changed in place.
      - A TPU slice lives in one zone, so a TPU pool of a regional cluster must name exactly one zone here
        (planb's policy); each entry must be a zone of the cluster's region.
    type: list
    elements: str
  check_tpu_zone:
    description:
      - Refuse a TPU pool in a zone that Google's list of TPU zones does not name for its generation
        (U(https://cloud.google.com/tpu/docs/regions-zones)), as planb's catalog carries that list (dated).
      - planb's policy based on Google's list, not a GKE refusal; V(false) skips it for a zone Google lists after
        the catalog's date. There is no GKE flex-start zone list, so flex-start pools are held to the same list.
    type: bool
    default: true
  workload_metadata_mode:
    description:
      - C(config.workloadMetadataConfig.mode). V(GKE_METADATA) runs the GKE metadata server, so pods authenticate
        to Google APIs as their Kubernetes service account (Workload Identity Federation for GKE); GKE accepts it
        only on a cluster with a workload pool
        (M(planb.gke.gke_cluster) O(planb.gke.gke_cluster#module:workload_identity)).
      - Omit to leave it unmanaged. Changed in place.
    type: str
    choices: [GKE_METADATA, GCE_METADATA]
  node_service_account:
    description:
      - The service account the pool's nodes run as (C(config.serviceAccount)); omitted, Compute Engine's default
        service account. The same as the cluster's
        (M(planb.gke.gke_cluster) O(planb.gke.gke_cluster#module:node_service_account)) in planb's playbooks.
      - An email C(SA_NAME@PROJECT_ID.iam.gserviceaccount.com) or
        C(PROJECT_NUMBER-compute@developer.gserviceaccount.com), checked by shape before any API call; that it
        exists and that the caller may act as it is GKE's check.
      - Set at creation only (container v1 UpdateNodePoolRequest has no service account); a pool that runs as
        another one is refused, naming the option.
    type: str
  secure_boot:
    description:
      - Secure boot (C(config.shieldedInstanceConfig), integrity monitoring on), which C(compute.requireShieldedVm)
        requires; create-only. U(https://cloud.google.com/kubernetes-engine/docs/how-to/shielded-gke-nodes)
    type: bool
    default: true
  accelerator_type:
    description:
      - GPU type attached to each node (C(config.accelerators[].acceleratorType)), for example C(nvidia-h100-80gb).
        Not for TPU machine types, whose chips come with the machine type.
    type: str
  accelerator_count:
    description: GPUs per node; must match the machine type's GPUs for planb's catalog GPU machine types.
    type: int
  gpu_driver_version:
    description:
      - C(gpuDriverInstallationConfig.gpuDriverVersion) of the GPUs, sent whenever O(accelerator_type) is set.
      - V(DEFAULT) is what gcloud picks when its flag is omitted (GKE 1.30.1-gke.1156000 and later);
        V(LATEST) only works on Container-Optimized OS nodes; V(INSTALLATION_DISABLED) installs none.
        See U(https://cloud.google.com/kubernetes-engine/docs/how-to/gpus).
    type: str
    choices: [DEFAULT, LATEST, INSTALLATION_DISABLED]
    default: DEFAULT
  recreate_on_error:
    description:
      - Delete and recreate a node pool that GKE reports in status ERROR.
      - Off by default, as planb's policy, so that a routine re-run never deletes a pool that may run jobs.
      - Even when on, a pool that still has nodes is refused. GKE's v1 NodePool has no node count, so the
        module reads the C(targetSize) of each managed instance group in the pool's C(instanceGroupUrls)
        (Compute Engine API, needs C(compute.instanceGroupManagers.get)); if it cannot read them, it refuses.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    details: Reads the node pool and reports what would be created, updated or deleted; sends no write.
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
- name: Create the DWS flex-start pool (plan B)
  planb.gke.gke_node_pool:
    name: dws-pool
    cluster: tpu-cluster
    location: us-east5-b
    project: my-project
    machine_type: ct6e-standard-4t
    tpu_topology: 4x4
    autoscaling: {min_node_count: 0, max_node_count: 4, location_policy: ANY}
    reservation_affinity: NO_RESERVATION
    queued_provisioning: true
    flex_start: true
    auto_repair: false
"""

RETURN = r"""
node_pool:
  description:
    - The node pool as GKE returns it (a GKE v1 NodePool); in check mode, the body that would be sent when it would be
      created; V({}) when O(state=absent).
  returned: always
  type: dict
  sample:
    name: dws-pool
    status: RUNNING
    config:
      machineType: ct6e-standard-4t
      flexStart: true
      reservationAffinity: {consumeReservationType: NO_RESERVATION}
    queuedProvisioning: {enabled: true}
    autoscaling: {enabled: true, minNodeCount: 0, maxNodeCount: 4, locationPolicy: ANY}
  contains:
    name:
      description: The node pool's name.
      returned: when the node pool exists or would be created
      type: str
      sample: dws-pool
    status:
      description: GKE's status of the node pool (C(PROVISIONING), C(RUNNING), C(RECONCILING), C(STOPPING), C(ERROR)).
      returned: when the node pool exists
      type: str
      sample: RUNNING
    config:
      description: The nodes' configuration (machine type, labels, taints, reservation affinity, Spot, flex-start).
      returned: when the node pool exists or would be created
      type: dict
      sample: {machineType: ct6e-standard-4t, flexStart: true}
actions:
  description: What was (or in check mode would be) done, in order, for example C(create), C(setAutoscaling), C(update).
  returned: always
  type: list
  elements: str
  sample: [setAutoscaling, update]
operations:
  description:
    - The GKE operations waited for, in order; V([]) when nothing was sent, in check mode, or with O(wait=false).
    - Modules cannot print while they run; C(ansible-playbook -v) shows this list, each poll in
      RV(operations[].progress).
  returned: always
  type: list
  elements: dict
  sample:
    - {name: operation-1718000000000-5f1c2a7e, operationType: CREATE_NODE_POOL,
       target: node pool dws-pool of cluster tpu-cluster, polls: 2, elapsed_s: 10.1, status: DONE}
  contains:
    name:
      description: The operation's name.
      type: str
      sample: operation-1718000000000-5f1c2a7e
    operationType:
      description: GKE's type of the operation.
      type: str
      sample: CREATE_NODE_POOL
    target:
      description: What the operation acts on, in words.
      type: str
      sample: node pool dws-pool of cluster tpu-cluster
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
from ansible_collections.planb.gke.plugins.module_utils.converge import main_wrapper  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.node_pool import run_node_pool  # noqa: E402
from ansible_collections.planb.gke.plugins.module_utils.node_pool_spec import NODE_POOL_ARGSPEC, NODE_POOL_RELATIONS  # noqa: E402

ARGUMENT_SPEC = NODE_POOL_ARGSPEC
RELATIONS = NODE_POOL_RELATIONS


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True, **RELATIONS)
    main_wrapper(module, run_node_pool)


if __name__ == "__main__":
    main()
