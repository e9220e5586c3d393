"""`planb local gke-emulator reservation|bucket|workload-policy create`: what a plan consumes that the operator makes
beside GKE, inserted through the running emulator's Compute Engine and Cloud Storage APIs."""

from __future__ import annotations

import argparse
import os
from urllib.parse import quote

from planb.local.gke_emulator import reservation_cli
from planb.local.gke_emulator.background import post_switch
from planb.local.gke_emulator.errors import EmulatorError


def cmd_reservation_create(args: argparse.Namespace) -> int:
    """Insert a Compute Engine reservation through the running emulator's Compute API (reservations.insert)."""
    try:
        body = reservation_cli.reservation_body(args)
    except reservation_cli.ReservationArgsError as exc:
        raise EmulatorError(f"planb local gke-emulator reservation create: {exc}") from exc
    path = f"/compute/v1/projects/{args.project}/zones/{args.zone}/reservations"
    try:
        post_switch(path, body)
    except EmulatorError as exc:
        raise EmulatorError(str(exc).replace("refused the switch", "refused the reservation")) from exc
    print(reservation_cli.summary(args, body))
    return 0


def cmd_bucket_create(args: argparse.Namespace) -> int:
    """Insert a Cloud Storage bucket through the running emulator's Storage API (buckets.insert): one the role then
    refuses (another location, no uniform access) or finds ready."""
    body = {
        "name": args.name,
        "location": args.location,
        "iamConfiguration": {"uniformBucketLevelAccess": {"enabled": args.uniform_access}},
    }
    try:
        post_switch(f"/storage/v1/b?project={quote(args.project, safe='')}", body)
    except EmulatorError as exc:
        raise EmulatorError(str(exc).replace("refused the switch", "refused the bucket")) from exc
    access = "on" if args.uniform_access else "off"
    print(f"bucket gs://{args.name} in {args.location.upper()}, uniform bucket-level access {access} (project "
          f"{args.project})")  # fmt: skip
    return 0


def cmd_workload_policy_create(args: argparse.Namespace) -> int:
    """Insert a Compute Engine workload policy through the running emulator's Compute API (resourcePolicies.insert)."""
    body = {
        "name": args.name,
        "workloadPolicy": {"type": args.type, "acceleratorTopology": args.accelerator_topology},
    }
    try:
        post_switch(f"/compute/v1/projects/{args.project}/regions/{args.region}/resourcePolicies", body)
    except EmulatorError as exc:
        raise EmulatorError(str(exc).replace("refused the switch", "refused the workload policy")) from exc
    print(
        f"workload policy projects/{args.project}/regions/{args.region}/resourcePolicies/{args.name}: "
        f"{args.type}, accelerator topology {args.accelerator_topology}"
    )
    return 0


def register(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """What a plan consumes that the operator makes beside GKE: reservations, buckets, workload policies."""
    reservation = actions.add_parser("reservation", help="Compute Engine reservations a reservation plan consumes")
    verbs = reservation.add_subparsers(dest="verb", required=True, metavar="VERB")
    create = reservation_cli.add_parser(verbs)
    create.set_defaults(handler=cmd_reservation_create)
    bucket = actions.add_parser("bucket", help="Cloud Storage buckets (the checkpoint bucket the cluster play checks)")
    bucket_verbs = bucket.add_subparsers(dest="verb", required=True, metavar="VERB")
    bucket_create = bucket_verbs.add_parser("create", help="a bucket in any location, with or without uniform access")
    bucket_create.add_argument("name", help="the bucket's name (planb_checkpoint_bucket)")
    bucket_create.add_argument("--location", required=True, help="e.g. us-east5, europe-west4, US")
    bucket_create.add_argument(
        "--no-uniform-access", dest="uniform_access", action="store_false",
        help="without uniform bucket-level access (which the cluster play refuses)",
    )  # fmt: skip
    bucket_create.add_argument(
        "--project", default=os.environ.get("PROJECT_ID") or "planb-local", help="owner project (default PROJECT_ID)"
    )
    bucket_create.set_defaults(handler=cmd_bucket_create)
    policy = actions.add_parser(
        "workload-policy", help="Compute Engine workload policies a multi-host TPU7x pool names"
    )
    policy_verbs = policy.add_subparsers(dest="verb", required=True, metavar="VERB")
    policy_create = policy_verbs.add_parser(
        "create", help="a workload policy holding a TPU7x slice's topology (resourcePolicies.insert)"
    )
    policy_create.add_argument("name", help="the policy's name (the pools' placement_policy / planb_workload_policy)")
    policy_create.add_argument("--region", required=True, help="the pools' region, e.g. us-central1")
    policy_create.add_argument("--accelerator-topology", required=True, help="the slice's topology, e.g. 2x2x2")
    policy_create.add_argument(
        "--type", default="HIGH_THROUGHPUT", choices=("HIGH_THROUGHPUT", "HIGH_AVAILABILITY"),
        help="workloadPolicy.type (default HIGH_THROUGHPUT, the one GKE's Ironwood page names)",
    )  # fmt: skip
    policy_create.add_argument(
        "--project", default=os.environ.get("PROJECT_ID") or "planb-local", help="owner project (default PROJECT_ID)"
    )
    policy_create.set_defaults(handler=cmd_workload_policy_create)
