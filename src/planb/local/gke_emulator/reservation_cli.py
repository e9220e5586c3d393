"""`planb local gke-emulator reservation create`: the Compute Engine reservations.insert body each shape needs.

Flags mirror the gcloud commands Google documents for each shape:

* specific (VMs of one machine type, how GPU capacity is reserved): ``gcloud compute reservations create NAME
  --machine-type=TYPE --vm-count=N --require-specific-reservation [--share-setting=projects --share-with=P]``
  (https://cloud.google.com/sdk/gcloud/reference/compute/reservations/create). ``--count`` is the same as
  ``--vm-count``.
* aggregate (TPU chips of one VM family, how TPU capacity is reserved): ``gcloud beta compute future-reservations
  create NAME --tpu-version=V6E --chip-count=N --workload-type=BATCH ...``
  (https://cloud.google.com/sdk/gcloud/reference/beta/compute/future-reservations/create; Compute Engine creates
  the reservation from it at the start time). gcloud maps V5E, V5P and V6E to their ``vmFamily``
  (googlecloudsdk command_lib/compute/future_reservations/util.py MakeAggregateReservationPropertiesMessage);
  ``--vm-family`` names any value of the v1 enum (TPU7x, v4: gcloud has no --tpu-version for them) and
  ``--accelerator-type`` the reserved accelerator (default: the VM family's).
* ``--for-profile PROFILE [--slices N]``: the shape Google makes for a planb profile's ``N`` slices: aggregate for a
  TPU profile (its chips, BATCH for a multi-host slice, SERVING for a single-host one, as GKE's autoscaler matches
  them, planb.local.gke_emulator.reservation_rules), specific for a GPU profile.

``--share-setting`` takes gcloud's ``local`` and ``projects`` and the v1 enum's ``organization``, which gcloud's
reservations commands do not offer.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from planb.catalog import profiles

Body = dict[str, Any]

#: gcloud's --tpu-version -> compute v1 vmFamily (gcloud's own table, module docstring), and planb's own V4 and
#: TPU7X for the families gcloud's flag does not cover.
TPU_VERSIONS = {
    "V5E": "VM_FAMILY_CLOUD_TPU_LITE_POD_SLICE_CT5LP",
    "V5P": "VM_FAMILY_CLOUD_TPU_POD_SLICE_CT5P",
    "V6E": "VM_FAMILY_CLOUD_TPU_LITE_POD_SLICE_CT6E",
    "V4": "VM_FAMILY_CLOUD_TPU_POD_SLICE_CT4P",
    "TPU7X": "VM_FAMILY_CLOUD_TPU_POD_SLICE_TPU7X",
}
#: planb's TPU generation name -> gcloud's --tpu-version.
VERSION_OF_GENERATION = {"v5e": "V5E", "v5p": "V5P", "v6e": "V6E", "v4": "V4", "tpu7x": "TPU7X"}
SHARE_SETTINGS = {"local": "LOCAL", "projects": "SPECIFIC_PROJECTS", "organization": "ORGANIZATION"}


class ReservationArgsError(ValueError):
    """The flags do not describe one reservation; the message names the fix."""


def _from_profile(args: argparse.Namespace) -> None:
    """Fill the shape flags from --for-profile and --slices."""
    profile = profiles.get(args.for_profile)
    slices = args.slices
    if profile.kind == "tpu":
        args.tpu_version = args.tpu_version or VERSION_OF_GENERATION[profile.generation]
        args.chip_count = args.chip_count or slices * profile.chips_per_slice
        args.workload_type = args.workload_type or ("BATCH" if profile.multi_host else "SERVING")
    else:
        args.machine_type = args.machine_type or profile.machine_type
        args.count = args.count or slices * profile.hosts_per_slice


def reservation_body(args: argparse.Namespace) -> Body:
    """The reservations.insert body the flags describe."""
    if args.for_profile:
        _from_profile(args)
    aggregate = bool(
        args.tpu_version or args.vm_family or args.chip_count or args.accelerator_type or args.workload_type
    )
    specific = bool(args.machine_type or args.count)
    if aggregate == specific:
        raise ReservationArgsError(
            "give either --machine-type and --vm-count (a specific reservation, e.g. GPU VMs) or --tpu-version "
            "(or --vm-family) and --chip-count (an aggregate TPU reservation), or --for-profile PROFILE"
        )
    body: Body = {"name": args.name, "specificReservationRequired": not args.any_vm}
    if specific:
        if not args.machine_type or not args.count:
            raise ReservationArgsError("a specific reservation needs --machine-type and --vm-count")
        body["specificReservation"] = {"count": args.count, "instanceProperties": {"machineType": args.machine_type}}
    else:
        vm_family = args.vm_family or TPU_VERSIONS.get(args.tpu_version or "", "")
        if not vm_family or not args.chip_count:
            raise ReservationArgsError("an aggregate reservation needs --tpu-version (or --vm-family) and --chip-count")
        accelerator: Body = {"acceleratorCount": args.chip_count}
        if args.accelerator_type:
            accelerator["acceleratorType"] = args.accelerator_type
        body["aggregateReservation"] = {
            "vmFamily": vm_family,
            "workloadType": args.workload_type or "UNSPECIFIED",
            "reservedResources": [{"accelerator": accelerator}],
        }
    share_with = [p for item in args.share_with for p in item.split(",") if p]
    setting = args.share_setting or ("projects" if share_with else "local")
    if setting != "local":
        body["shareSettings"] = {"shareType": SHARE_SETTINGS[setting]}
        if share_with:
            body["shareSettings"]["projectMap"] = {p: {"projectId": p} for p in share_with}
    return body


def summary(args: argparse.Namespace, body: Body) -> str:
    """One line saying what was reserved."""
    where = f"projects/{args.project}/zones/{args.zone}/reservations/{args.name}"
    kind = "any VM may consume it" if args.any_vm else "consumed only by name (specificReservationRequired)"
    if "aggregateReservation" in body:
        agg = body["aggregateReservation"]
        what = f"{agg['reservedResources'][0]['accelerator']['acceleratorCount']} chips of {agg['vmFamily']}, "
        what += f"workload type {agg['workloadType']}"
    else:
        spec = body["specificReservation"]
        what = f"{spec['count']} x {spec['instanceProperties']['machineType']}"
    return f"reservation {where}: {what}, {kind}"


def add_parser(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """`reservation create` and its flags."""
    create = verbs.add_parser(
        "create", help="reserve VMs of a machine type, or TPU chips of a family, in a zone (reservations.insert)"
    )
    create.add_argument("name", help="the reservation's name (a plan's reservation: value)")
    create.add_argument("--zone", required=True, help="the pools' zone, e.g. us-east5-b")
    create.add_argument(
        "--project", default=os.environ.get("PROJECT_ID") or "planb-local", help="owner project (default PROJECT_ID)"
    )
    create.add_argument("--for-profile", help="the reservation Google makes for this planb profile's slices")
    create.add_argument("--slices", type=int, default=1, help="with --for-profile: slices to reserve (default 1)")
    specific = create.add_argument_group("specific reservation (gcloud compute reservations create)")
    specific.add_argument("--machine-type", help="e.g. a3-highgpu-8g (the profile's machine type)")
    specific.add_argument("--vm-count", "--count", dest="count", type=int, help="VMs reserved (slices x hosts)")
    aggregate = create.add_argument_group("aggregate TPU reservation (gcloud beta compute future-reservations create)")
    aggregate.add_argument("--tpu-version", type=str.upper, choices=sorted(TPU_VERSIONS), help="e.g. V6E")
    aggregate.add_argument("--chip-count", type=int, help="TPU chips reserved (slices x chips per slice)")
    aggregate.add_argument(
        "--workload-type", type=str.upper, choices=["BATCH", "SERVING", "UNSPECIFIED"], help="BATCH for multi-host"
    )
    aggregate.add_argument("--vm-family", help="a compute v1 vmFamily, e.g. VM_FAMILY_CLOUD_TPU_POD_SLICE_TPU7X")
    aggregate.add_argument("--accelerator-type", help="reserved accelerator, e.g. ct6e (default: the VM family's)")
    create.add_argument(
        "--any-vm", action="store_true", help="specificReservationRequired false: any VM may consume it"
    )
    create.add_argument(
        "--share-setting", choices=sorted(SHARE_SETTINGS), help="local (default), projects, or organization"
    )
    create.add_argument(
        "--share-with", action="append", default=[], help="share it with these projects (comma-separated, repeatable)"
    )
    return create
