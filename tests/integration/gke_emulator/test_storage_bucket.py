"""Cloud Storage buckets.get and buckets.insert on the emulator, and planb.gke.gcp_storage_bucket against them.

The methods are held to ``storage.v1.json`` as google-api-python-client ships it (request and response ``Bucket``;
https://cloud.google.com/storage/docs/json_api/v1/buckets/get and .../insert), with the JSON API's error shape
(https://cloud.google.com/storage/docs/json_api/v1/status-codes). The module creates a missing bucket in the
cluster's region with uniform bucket-level access (nothing in check mode) and refuses an existing one without
uniform access or in another region (planb's policy), naming the bucket and the fix.
"""

from __future__ import annotations

from typing import Any

import pytest

from planb.cli import main as planb_main
from planb.local.gke_emulator import conformance, discovery
from planb.local.gke_emulator.background import BackgroundEmulator
from planb.local.gke_emulator.emulator import RunningEmulator
from tests.support.integration.gke.gke_api import call
from tests.support.integration.gke.modules import PROJECT, ModuleRunner

BUCKET = "planb-test-checkpoints"
#: ModuleRunner's location is us-east5-b: the bucket belongs in us-east5.
REGION = "us-east5"


class ProjectRunner(ModuleRunner):
    """gcp_iam_check takes no location."""

    def base_args(self) -> dict[str, Any]:
        return {k: v for k, v in super().base_args().items() if k != "location"}


def _insert(emulator: RunningEmulator, body: dict[str, Any], project: str = PROJECT) -> tuple[int, dict[str, Any]]:
    return call(emulator, "POST", f"/storage/v1/b?project={project}", body)


def test_the_methods_are_the_discovery_documents_and_errors_have_the_json_apis_shape(
    emulator: RunningEmulator,
) -> None:
    got = discovery.find_method("GET", f"/storage/v1/b/{BUCKET}")
    inserted = discovery.find_method("POST", "/storage/v1/b")
    assert got is not None and (got.id, got.response) == ("storage.buckets.get", "Bucket")
    assert inserted is not None and (inserted.id, inserted.request, inserted.response) == (
        "storage.buckets.insert", "Bucket", "Bucket",
    )  # fmt: skip
    assert discovery.version("storage") == "v1"
    missing = "The specified bucket does not exist."
    detail = {"message": missing, "domain": "global", "reason": "notFound"}
    assert call(emulator, "GET", f"/storage/v1/b/{BUCKET}") == (
        404, {"error": {"code": 404, "message": missing, "errors": [detail]}}
    )  # fmt: skip
    status, answer = _insert(emulator, {"name": BUCKET, "locationConstraint": "us-east5"})
    assert status == 400 and 'Unknown name "locationConstraint"' in answer["error"]["message"], answer
    assert _insert(emulator, {"name": "Not_A_Bucket"})[1]["error"]["message"] == "Invalid bucket name: 'Not_A_Bucket'"
    status, bucket = _insert(emulator, {"name": BUCKET, "location": "us-east5"})
    assert status == 200, bucket
    assert (bucket["location"], bucket["locationType"], bucket["storageClass"]) == ("US-EAST5", "region", "STANDARD")
    assert bucket["iamConfiguration"]["uniformBucketLevelAccess"] == {"enabled": False}
    assert call(emulator, "GET", f"/storage/v1/b/{BUCKET}") == (200, bucket)
    # Names are global: taken in this project and in another, each with Google's words.
    assert "you already own it" in _insert(emulator, {"name": BUCKET})[1]["error"]["message"]
    status, taken = _insert(emulator, {"name": BUCKET}, project="another-project")
    assert status == 409 and taken["error"]["errors"][0]["reason"] == "conflict"
    assert "The requested bucket name is not available" in taken["error"]["message"]
    assert conformance.state_dir_violations(emulator.store.root.parent) == []


def test_a_missing_bucket_is_created_in_the_clusters_region_with_uniform_access_and_check_mode_writes_nothing(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    args = {"name": f"gs://{BUCKET}", "create": True}
    preview = modules.run("gcp_storage_bucket", args, check_mode=True, diff=True)
    assert preview["changed"] is True and preview["actions"] == ["create"], preview
    assert preview["diff"]["after"]["location"] == "US-EAST5" and preview["diff"]["before"] == {}
    assert emulator.writes() == [] and call(emulator, "GET", f"/storage/v1/b/{BUCKET}")[0] == 404
    done = modules.run("gcp_storage_bucket", args)
    assert done["changed"] is True and [w["path"] for w in emulator.writes()] == ["/storage/v1/b"]
    status, bucket = call(emulator, "GET", f"/storage/v1/b/{BUCKET}")
    assert status == 200 and (bucket["location"], bucket["locationType"]) == ("US-EAST5", "region")
    assert bucket["iamConfiguration"]["uniformBucketLevelAccess"]["enabled"] is True
    assert bucket["projectNumber"] and done["bucket"] == bucket
    again = modules.run("gcp_storage_bucket", args)
    assert again["changed"] is False and again["actions"] == [] and len(emulator.writes()) == 1
    # Without create, a missing bucket stops the run naming the command that makes it.
    msg = modules.fail("gcp_storage_bucket", {"name": "planb-test-other"})["msg"]
    assert "gs://planb-test-other does not exist" in msg and f"--location={REGION} --uniform-bucket-level-access" in msg


def test_a_bucket_without_uniform_access_or_in_another_region_is_refused_naming_the_fix(
    modules: ModuleRunner,
    emulator: RunningEmulator,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(BackgroundEmulator, "running", lambda self: (0, emulator.url))
    create = ["local", "gke-emulator", "bucket", "create"]
    knob = [*create, BUCKET, "--location", REGION, "--no-uniform-access", "--project", PROJECT]
    assert planb_main(knob) == 0
    assert f"bucket gs://{BUCKET} in US-EAST5, uniform bucket-level access off" in capsys.readouterr().out
    before = len(emulator.writes())
    msg = modules.fail("gcp_storage_bucket", {"name": BUCKET, "create": True})["msg"]
    assert f"planb's policy: the checkpoint bucket gs://{BUCKET} does not have uniform bucket-level access" in msg
    assert f"`gcloud storage buckets update gs://{BUCKET} --uniform-bucket-level-access`" in msg
    assert "https://cloud.google.com/storage/docs/uniform-bucket-level-access" in msg and "in US-EAST5" not in msg
    # Both reasons at once for a bucket elsewhere; the knob refuses what Cloud Storage refuses.
    assert planb_main([*create, "planb-test-eu", "--location", "europe-west4", "--no-uniform-access"]) == 0
    msg = modules.fail("gcp_storage_bucket", {"name": "planb-test-eu"})["msg"]
    assert "is in EUROPE-WEST4 (region), not in the cluster's region us-east5" in msg
    assert "because checkpoints would cross a region boundary: egress cost and latency" in msg
    assert "does not have uniform bucket-level access" in msg
    assert len(emulator.writes()) == before + 1  # the knob's insert, nothing of the module
    assert planb_main([*create, "planb-test-x", "--location", "mars"]) != 0
    assert "the specified location constraint is not valid" in capsys.readouterr().err.lower()


def test_a_bad_name_is_refused_before_any_request_and_the_rights_check_asks_for_storage(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    msg = modules.fail("gcp_storage_bucket", {"name": "gs://Checkpoints/run-1"})["msg"]
    assert "is not a Cloud Storage bucket name" in msg and emulator.store.request_log() == []
    withheld = {"permission": "storage.buckets.create", "granted": False}
    assert call(emulator, "POST", "/planb/v1/permissions", withheld)[0] == 200
    msg = ProjectRunner(emulator).fail("gcp_iam_check", {"needs": ["cluster", "create_bucket"]})["msg"]
    assert "storage.buckets.create (role roles/storage.admin) to create the checkpoint bucket" in msg, msg


def test_deleting_the_bucket_is_buckets_delete_once_and_one_still_holding_checkpoints_is_refused_naming_the_fix(
    modules: ModuleRunner, emulator: RunningEmulator
) -> None:
    deleted = discovery.find_method("DELETE", f"/storage/v1/b/{BUCKET}")
    assert deleted is not None and (deleted.id, deleted.request, deleted.response) == (
        "storage.buckets.delete",
        None,
        None,
    )
    assert _insert(emulator, {"name": BUCKET, "location": REGION})[0] == 200
    # Cloud Storage's 409 for a bucket with objects (the emulator holds none, so the test injects it).
    assert call(emulator, "POST", "/planb/v1/http-faults", {"status": 409, "method": "DELETE"})[0] == 200
    msg = modules.fail("gcp_storage_bucket", {"name": f"gs://{BUCKET}", "state": "absent"})["msg"]
    assert f"gs://{BUCKET} still holds objects" in msg and f"`gcloud storage rm --recursive gs://{BUCKET}`" in msg, msg
    assert "leave planb_teardown_bucket false" in msg and call(emulator, "GET", f"/storage/v1/b/{BUCKET}")[0] == 200
    preview = modules.run("gcp_storage_bucket", {"name": BUCKET, "state": "absent"}, check_mode=True)
    assert preview["actions"] == ["delete"] and call(emulator, "GET", f"/storage/v1/b/{BUCKET}")[0] == 200
    done = modules.run("gcp_storage_bucket", {"name": BUCKET, "state": "absent"})
    assert done["changed"] and done["actions"] == ["delete"], done
    log = [(r["method"], r["status"]) for r in emulator.store.request_log() if r["method"] == "DELETE"]
    assert log == [("DELETE", 409), ("DELETE", 204)], log
    assert call(emulator, "GET", f"/storage/v1/b/{BUCKET}")[0] == 404 and emulator.store.buckets == {}
    again = modules.run("gcp_storage_bucket", {"name": BUCKET, "state": "absent"})
    assert again["changed"] is False and len([r for r in emulator.writes() if r["method"] == "DELETE"]) == 2
