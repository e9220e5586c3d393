# planb.gke: the checkpoint bucket, read (and created) over the Cloud Storage JSON API (gcp_storage_bucket).
"""The checkpoint bucket: it exists, lives in the cluster's region and has uniform bucket-level access.

Cloud Storage JSON API v1 over the collection's REST client (same credentials, retries, transport rules):

* ``GET storage/v1/b/B`` (buckets.get, https://cloud.google.com/storage/docs/json_api/v1/buckets/get) answers the
  Bucket, ``location`` upper-case (``US-EAST5``), ``locationType`` (``region``, ``dual-region``, ``multi-region``)
  and ``iamConfiguration.uniformBucketLevelAccess.enabled``; 404 when no bucket has that name. It needs
  ``storage.buckets.get`` on the bucket, which a grant on the bucket alone may give.
* ``POST storage/v1/b?project=P`` (buckets.insert, https://cloud.google.com/storage/docs/json_api/v1/buckets/insert)
  with a Bucket creates one in project P; it needs ``storage.buckets.create`` on P. Bucket names are global: 409 when
  the name is taken, by this project or another.

planb's policy, checked before any write of the run: the bucket's location is the cluster's region (checkpoints that
cross a region boundary pay inter-region egress and its latency, https://cloud.google.com/storage/docs/locations) and
its access is uniform (IAM alone grants access, so the job's Workload Identity binding is the one grant on its
checkpoints; fine-grained object ACLs could grant what IAM does not show,
https://cloud.google.com/storage/docs/uniform-bucket-level-access). A bucket planb creates has both, and STANDARD
storage.

The google.cloud collection's ``gcp_storage_bucket`` has its URL fixed to Google's host, so it cannot reach planb's
emulator; this module takes ``storage_endpoint``, or uses a loopback ``api_endpoint`` itself (the emulator serves
the Storage API at Google's own paths).
"""

from __future__ import annotations

import re
from typing import Any

from ansible_collections.planb.gke.plugins.module_utils.args import DEFAULT_ENDPOINT
from ansible_collections.planb.gke.plugins.module_utils.client import api_path
from ansible_collections.planb.gke.plugins.module_utils.credentials import check_auth, is_loopback
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError
from ansible_collections.planb.gke.plugins.module_utils.locations import region_of
from ansible_collections.planb.gke.plugins.module_utils.project_apis import ApiClient
from ansible_collections.planb.gke.plugins.module_utils.resource_labels import as_labels, label_problems

Body = dict[str, Any]
Params = dict[str, Any]

STORAGE_ENDPOINT = "https://storage.googleapis.com"
DOC_LOCATIONS = "https://cloud.google.com/storage/docs/locations"
DOC_UNIFORM = "https://cloud.google.com/storage/docs/uniform-bucket-level-access"
DOC_NAMING = "https://cloud.google.com/storage/docs/buckets#naming"
DOC_MOVE = "https://cloud.google.com/storage/docs/moving-buckets"
#: https://cloud.google.com/storage/docs/buckets#naming: lowercase letters, digits, '-', '_', '.'; a letter or
#: digit first and last; 3-63 characters (up to 222 with dots, at most 63 between two).
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$")
_LOCATION = re.compile(r"^[a-z]+-[a-z]+[0-9]+(-(ai[0-9]+)?[a-z])?$")


def storage_endpoint(params: Params) -> str:
    """``storage_endpoint`` when given; else a loopback api_endpoint itself (the emulator); else Google's."""
    explicit = params.get("storage_endpoint")
    if explicit:
        return str(explicit).rstrip("/")
    api = (params.get("api_endpoint") or DEFAULT_ENDPOINT).rstrip("/")
    return api if is_loopback(api) else STORAGE_ENDPOINT


class StorageClient(ApiClient):
    """The Cloud Storage JSON API: paths under ``storage/v1/`` of the endpoint."""

    API_VERSION = "storage/v1"


def bucket_name(given: str) -> str:
    """The bucket's name from ``B`` or ``gs://B``; refused (before any call) when Cloud Storage would refuse it."""
    name = given[len("gs://") :] if given.startswith("gs://") else given
    name = name.rstrip("/")
    parts = name.split(".")
    valid = (
        bool(_NAME.fullmatch(name))
        and len(name) <= (222 if "." in name else 63)
        and all(0 < len(part) <= 63 for part in parts)
        and not name.startswith("goog")
        and "google" not in name
    )
    if not valid:
        raise GkeError(
            f"Invalid input (nothing was sent): {given!r} is not a Cloud Storage bucket name: 3-63 lowercase letters, "
            "digits, '-', '_' or '.', a letter or digit first and last, no 'goog' prefix and no 'google' "
            f"({DOC_NAMING}); give the bucket's name (or gs://NAME), not a path in it."
        )
    return name


def desired_bucket(name: str, region: str, labels: dict[str, Any] | None = None) -> Body:
    """The Bucket planb creates: in the cluster's region, uniform bucket-level access, STANDARD storage, with the
    inventory's resource labels (Bucket.labels), by which the billing export splits the bucket's cost."""
    body: Body = {
        "name": name,
        "location": region.upper(),
        "storageClass": "STANDARD",
        "iamConfiguration": {"uniformBucketLevelAccess": {"enabled": True}},
    }
    if labels:
        body["labels"] = as_labels(labels)
    return body


def missing_labels(bucket: Body, name: str, labels: dict[str, Any] | None) -> str | None:
    """The warning for an existing bucket whose labels lack some of ``labels``: planb never changes an existing
    bucket (planb's policy, above), so the operator adds them, with the command named here."""
    have = bucket.get("labels") or {}
    lacking = {key: value for key, value in as_labels(labels).items() if have.get(key) != value}
    if not lacking:
        return None
    pairs = ",".join(f"{key}={value}" for key, value in sorted(lacking.items()))
    return (
        f"The checkpoint bucket gs://{name} lacks the labels {pairs}, so the billing export does not count its cost "
        "with the cluster's; planb does not change an existing bucket. Fix: "
        f"`gcloud storage buckets update gs://{name} --update-labels={pairs}`."
    )


def uniform_access(bucket: Body) -> bool:
    iam = bucket.get("iamConfiguration") or {}
    flag = iam.get("uniformBucketLevelAccess") or iam.get("bucketPolicyOnly") or {}
    return bool(flag.get("enabled"))


def refusals(bucket: Body, name: str, region: str) -> list[str]:
    """planb's policy on an existing bucket: each reason it cannot hold the checkpoints, with its fix."""
    out = []
    location = str(bucket.get("location") or "")
    if location.lower() != region:
        kind = bucket.get("locationType") or "location"
        out.append(
            f"planb's policy: the checkpoint bucket gs://{name} is in {location} ({kind}), not in the cluster's region "
            f"{region}, because checkpoints would cross a region boundary: egress cost and latency ({DOC_LOCATIONS}). "
            f"A bucket's location cannot be changed: create one in {region} (`gcloud storage buckets create gs://NEW "
            f"--location={region} --uniform-bucket-level-access`) and name it in planb_checkpoint_bucket, or move "
            f"this one ({DOC_MOVE})"
        )
    if not uniform_access(bucket):
        out.append(
            f"planb's policy: the checkpoint bucket gs://{name} does not have uniform bucket-level access, because "
            "IAM must be the only grant on the checkpoints (the job's Workload Identity binding): object ACLs could "
            f"grant access IAM does not show ({DOC_UNIFORM}). Fix: `gcloud storage buckets update gs://{name} "
            "--uniform-bucket-level-access`"
        )
    return out


def _read(client: StorageClient, name: str) -> Body | None:
    try:
        bucket: Body | None = client.request("GET", api_path("b", name), allow_404=True)
    except GkeError as exc:
        if " answered 403" not in str(exc):
            raise
        raise GkeError(
            f"{exc} Reading the checkpoint bucket gs://{name} needs storage.buckets.get on it (role "
            "roles/storage.bucketViewer or roles/storage.admin, on the bucket or its project); a bucket of another "
            "project that grants the caller nothing answers 403 too. Grant it, or leave planb_checkpoint_bucket "
            "empty to skip the check."
        ) from exc
    return bucket


def _create(client: StorageClient, project: str, desired: Body) -> Body:
    name = desired["name"]
    try:
        created: Body = client.query("POST", "b", {"project": project}, desired)
    except GkeError as exc:
        text = str(exc)
        if " answered 409" in text:
            raise GkeError(
                f"{text} Bucket names are global across Cloud Storage: gs://{name} exists but this run could not read "
                "it a moment ago. If it is yours (another run made it), re-run; else choose another "
                "planb_checkpoint_bucket."
            ) from exc
        if " answered 403" in text:
            raise GkeError(
                f"{text} Creating gs://{name} needs storage.buckets.create on project {project} (role "
                "roles/storage.admin); or create it yourself (`gcloud storage buckets create gs://"
                f"{name} --location={desired['location'].lower()} --uniform-bucket-level-access`)."
            ) from exc
        raise
    return created


def run_storage_bucket(module: Any) -> Body:
    """gcp_storage_bucket: the bucket exists (created when ``create``), in the location's region, uniform access."""
    params = module.params
    name = bucket_name(params["name"])
    if not _LOCATION.fullmatch(params["location"]):
        raise GkeError(f"location {params['location']!r} must be a zone (us-east5-b) or a region (us-east5)")
    region = region_of(params["location"])
    problems = label_problems("labels", params.get("labels"))
    if problems:
        raise GkeError(f"gs://{name}: " + "; ".join(problems))
    check_auth(params)
    project = params["project"]
    client = StorageClient(params, storage_endpoint(params), "Cloud Storage JSON API")
    current = _read(client, name)
    if current is None:
        desired = desired_bucket(name, region, params.get("labels"))
        if not params["create"]:
            raise GkeError(
                f"The checkpoint bucket gs://{name} does not exist, so nothing was written. Fix: create it in the "
                f"cluster's region with uniform access (`gcloud storage buckets create gs://{name} --location={region} "
                f"--uniform-bucket-level-access --project {project}`), or let planb create it "
                "(gke_cluster_bucket_create: true; playbooks: -e planb_checkpoint_bucket_create=true)."
            )
        result: Body = {"changed": True, "actions": ["create"], "diff": {"before": {}, "after": desired}}
        result["bucket"] = desired if module.check_mode else _create(client, project, desired)
        result["msg"] = f"gs://{name} {'would be' if module.check_mode else 'was'} created in {region.upper()}"
        return result
    refused = refusals(current, name, region)
    if refused:
        raise GkeError(
            f"The checkpoint bucket gs://{name} cannot hold this cluster's checkpoints, so nothing was written: "
            + "; ".join(refused)
            + ". Or leave planb_checkpoint_bucket empty to skip the check."
        )
    warning = missing_labels(current, name, params.get("labels"))
    if warning:
        module.warn(warning)
    return {
        "changed": False,
        "actions": [],
        "bucket": current,
        "msg": f"gs://{name}: {current.get('location')} ({current.get('locationType')}), uniform bucket-level access",
    }
