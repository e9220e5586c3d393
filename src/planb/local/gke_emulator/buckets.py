"""Cloud Storage's buckets, as the gke_cluster role's checkpoint-bucket check reads and creates them.

The emulator serves three methods of the Cloud Storage JSON API v1 at Google's own paths (the API's root URL is
``https://storage.googleapis.com/`` and its service path ``storage/v1/``, so a client whose Storage endpoint is the
emulator's root URL sends the same paths):

* ``GET  /storage/v1/b/{bucket}``          buckets.get (https://cloud.google.com/storage/docs/json_api/v1/buckets/get)
* ``POST /storage/v1/b?project=P``         buckets.insert (https://cloud.google.com/storage/docs/json_api/v1/buckets/insert)
* ``DELETE /storage/v1/b/{bucket}``        buckets.delete (https://cloud.google.com/storage/docs/json_api/v1/buckets/delete):
  HTTP 204 with an empty body ("If successful, this method returns an empty response body"), 404 for a missing
  bucket. The emulator holds no objects, so it never answers Google's 409 for a bucket that is not empty ("The
  bucket you tried to delete is not empty.", https://cloud.google.com/storage/docs/json_api/v1/status-codes#409);
  ``POST /planb/v1/http-faults`` injects that status for a test.

Both are held to ``storage.v1.json`` as google-api-python-client ships it (request and response schema ``Bucket``,
``gke_emulator.discovery``). What the emulator fills in, as Google answers a bucket:

* ``location`` upper-case (``us-east5`` is answered ``US-EAST5``; default ``US``) and ``locationType``: ``region``,
  ``dual-region`` (the predefined ASIA1, EUR4, EUR5, EUR7, EUR8, NAM4) or ``multi-region`` (ASIA, EU, US)
  (https://cloud.google.com/storage/docs/locations). A region is any name of a region's form: the emulator cannot
  know which regions Google offers. Anything else is 400 "The specified location constraint is not valid.";
* ``storageClass`` STANDARD unless given (https://cloud.google.com/storage/docs/storage-classes);
* ``iamConfiguration.uniformBucketLevelAccess.enabled`` as asked, off unless asked (the JSON API's default; an
  organisation policy may force it, which the emulator does not model), mirrored in ``bucketPolicyOnly`` as the
  discovery document says Google does, with ``lockedTime`` 90 days after creation when on ("you have 90 days to
  disable it", https://cloud.google.com/storage/docs/uniform-bucket-level-access); ``publicAccessPrevention``
  ``inherited`` unless given (https://cloud.google.com/storage/docs/public-access-prevention);
* ``softDeletePolicy`` of 7 days (604800 s), Google's default (https://cloud.google.com/storage/docs/soft-delete);
* ``id`` = ``name``, ``kind``, ``selfLink``, ``projectNumber`` (the emulator's own, derived from the project ID),
  ``metageneration`` 1, ``etag``, ``timeCreated`` and ``updated``.

A bucket name follows https://cloud.google.com/storage/docs/buckets#naming (3-63 characters, or up to 222 with dots
and at most 63 between two; lowercase letters, digits, ``-``, ``_`` and ``.``; a letter or digit first and last; no
``goog`` prefix, no ``google``); another is 400 "Invalid bucket name: 'NAME'". Bucket names are global: inserting one
that exists is 409, "Your previous request to create the named bucket succeeded and you already own it." in its own
project, "The requested bucket name is not available. ..." in another. A missing bucket is 404 "The specified bucket
does not exist.". Errors have the JSON API's shape, ``{"error": {"code", "message", "errors": [{"message",
"domain": "global", "reason"}]}}`` (https://cloud.google.com/storage/docs/json_api/v1/status-codes), not GKE's.

There is no emulator-only switch: a bucket in another location or without uniform access, which the role refuses, is
made with buckets.insert itself (``planb local gke-emulator bucket create NAME --location L --no-uniform-access``).
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, unquote

from planb.local.gke_emulator.errors import ApiError
from planb.local.gke_emulator.store import Store

Body = dict[str, Any]

STORAGE = "/storage/v1/"
#: https://cloud.google.com/storage/docs/locations: the multi-regions and the predefined dual-regions.
MULTI_REGIONS = frozenset({"ASIA", "EU", "US"})
DUAL_REGIONS = frozenset({"ASIA1", "EUR4", "EUR5", "EUR7", "EUR8", "NAM4"})
_REGION = re.compile(r"^[a-z]+-[a-z]+[0-9]+$")
#: https://cloud.google.com/storage/docs/storage-classes (and the legacy classes the JSON API still takes).
STORAGE_CLASSES = frozenset(
    {"STANDARD", "NEARLINE", "COLDLINE", "ARCHIVE", "MULTI_REGIONAL", "REGIONAL", "DURABLE_REDUCED_AVAILABILITY"}
)
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*[a-z0-9]$")
#: Uniform bucket-level access can be turned off again for 90 days after it was turned on.
UBLA_LOCK = timedelta(days=90)
#: Google's default soft-delete retention, in seconds (7 days).
SOFT_DELETE_SECONDS = 604800


class NoContent(dict[str, Any]):
    """An answer without a body: the server sends HTTP 204 No Content (buckets.delete's success)."""


class StorageError(ApiError):
    """An answer in the Cloud Storage JSON API's error shape (a ``reason`` per error, no ``status``)."""

    def __init__(self, code: int, message: str, reason: str) -> None:
        super().__init__(code, message)
        self.reason = reason

    def body(self) -> Body:
        detail = {"message": self.message, "domain": "global", "reason": self.reason}
        return {"error": {"code": self.code, "message": self.message, "errors": [detail]}}


def location_type(location: str) -> str:
    """``region``, ``dual-region`` or ``multi-region`` for an upper-case location; 400 for none of them."""
    if location in MULTI_REGIONS:
        return "multi-region"
    if location in DUAL_REGIONS:
        return "dual-region"
    if _REGION.fullmatch(location.lower()):
        return "region"
    raise StorageError(400, "The specified location constraint is not valid.", "invalid")


def valid_name(name: str) -> bool:
    """Whether Cloud Storage takes ``name`` for a bucket (https://cloud.google.com/storage/docs/buckets#naming)."""
    limit = 222 if "." in name else 63
    if not 3 <= len(name) <= limit or not _NAME.fullmatch(name):
        return False
    if any(len(part) > 63 or not part for part in name.split(".")):
        return False
    return not name.startswith("goog") and "google" not in name


def project_number(project: str) -> str:
    """The emulator's project number for a project ID: 12 digits, the same each time (Google's are its own)."""
    return str(int(hashlib.sha256(project.encode()).hexdigest(), 16) % 10**12).rjust(12, "1")


def _rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class Buckets:
    """buckets.get and buckets.insert over the emulator's store (``state["buckets"]``: name -> Bucket)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    @property
    def table(self) -> dict[str, Body]:
        return self.store.buckets

    def get(self, name: str) -> Body:
        """storage.buckets.get: the bucket, or 404."""
        bucket = self.table.get(name)
        if bucket is None:
            raise StorageError(404, "The specified bucket does not exist.", "notFound")
        return {key: value for key, value in bucket.items() if not key.startswith("_")}

    def insert(self, project: str, request: Body) -> Body:
        """storage.buckets.insert: a new bucket in ``project``; 400 for a bad name or location, 409 for a taken one."""
        if not project:
            raise StorageError(400, "Required parameter: project", "required")
        name = str(request.get("name") or "")
        if not valid_name(name):
            raise StorageError(400, f"Invalid bucket name: '{name}'", "invalid")
        location = str(request.get("location") or "US").upper()
        kind = location_type(location)
        storage_class = str(request.get("storageClass") or "STANDARD").upper()
        if storage_class not in STORAGE_CLASSES:
            raise StorageError(400, "The specified storage class is not valid.", "invalid")
        existing = self.table.get(name)
        if existing is not None:
            if existing.get("_project") == project:
                message = "Your previous request to create the named bucket succeeded and you already own it."
            else:
                message = (
                    "The requested bucket name is not available. The bucket namespace is shared by all users of the "
                    "system. Please select a different name and try again."
                )
            raise StorageError(409, message, "conflict")
        now = datetime.now(UTC)
        stamp = _rfc3339(now)
        iam = dict(request.get("iamConfiguration") or {})
        asked = iam.get("uniformBucketLevelAccess") or iam.get("bucketPolicyOnly") or {}
        uniform: Body = {"enabled": bool(asked.get("enabled"))}
        if uniform["enabled"]:
            uniform["lockedTime"] = _rfc3339(now + UBLA_LOCK)
        iam.update(
            uniformBucketLevelAccess=uniform,
            bucketPolicyOnly=dict(uniform),
            publicAccessPrevention=iam.get("publicAccessPrevention") or "inherited",
        )
        bucket: Body = {
            **request,
            "kind": "storage#bucket",
            "selfLink": f"https://www.googleapis.com/storage/v1/b/{name}",
            "id": name,
            "name": name,
            "projectNumber": project_number(project),
            "metageneration": "1",
            "location": location,
            "locationType": kind,
            "storageClass": storage_class,
            "etag": "CAE=",
            "timeCreated": stamp,
            "updated": stamp,
            "iamConfiguration": iam,
            "softDeletePolicy": {"retentionDurationSeconds": str(SOFT_DELETE_SECONDS), "effectiveTime": stamp},
            "_project": project,
        }
        if kind == "dual-region":
            bucket.setdefault("rpo", "DEFAULT")
        self.table[name] = bucket
        return self.get(name)

    def route(self, method: str, path: str, query: str, request: Body) -> Body | None:
        """The answer for a Cloud Storage path (``/storage/v1/...``), None for any other path."""
        if not path.startswith(STORAGE):
            return None
        rest = path[len(STORAGE) :]
        if rest == "b" and method == "POST":
            project = (parse_qs(query).get("project") or [""])[0]
            answer = self.insert(project, request)
            self.store.save()
            return answer
        match = re.fullmatch(r"b/([^/]+)", rest)
        if match and method == "GET":
            return self.get(unquote(match.group(1)))
        if match and method == "DELETE":
            self.get(unquote(match.group(1)))  # 404 when there is none
            del self.table[unquote(match.group(1))]
            self.store.save()
            return NoContent()
        raise StorageError(405, f"{method} {path} is not implemented by the planb GKE emulator", "notImplemented")
