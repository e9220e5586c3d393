# planb.gke: the checkpoint bucket deleted at teardown, when the operator asks (gcp_storage_bucket state=absent).
"""The checkpoint bucket deleted over the Cloud Storage JSON API, only when the operator asked (the teardown play's
planb_teardown_bucket; planb's policy: checkpoints outlive the cluster unless asked, because they are the training's
only copy of its progress).

* ``GET storage/v1/b/B`` first: no bucket, nothing to do (a re-run of teardown changes nothing).
* ``DELETE storage/v1/b/B`` (buckets.delete, https://cloud.google.com/storage/docs/json_api/v1/buckets/delete)
  answers 204 with no body. Cloud Storage refuses a bucket that still holds objects with 409 ("The bucket you tried
  to delete is not empty.", https://cloud.google.com/storage/docs/json_api/v1/status-codes#409): planb deletes no
  checkpoint one by one, so the refusal names the command that empties and deletes the bucket. It needs
  ``storage.buckets.delete`` (``roles/storage.admin``). A deleted bucket stays restorable for its soft-delete
  retention, 7 days by default (https://cloud.google.com/storage/docs/soft-delete).
"""

from __future__ import annotations

from typing import Any

from ansible_collections.planb.gke.plugins.module_utils.client import api_path
from ansible_collections.planb.gke.plugins.module_utils.credentials import check_auth
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError
from ansible_collections.planb.gke.plugins.module_utils.storage import StorageClient, bucket_name, storage_endpoint

Body = dict[str, Any]

DOC_DELETE = "https://cloud.google.com/storage/docs/json_api/v1/buckets/delete"
DOC_SOFT_DELETE = "https://cloud.google.com/storage/docs/soft-delete"


def remove_storage_bucket(module: Any) -> Body:
    """gcp_storage_bucket with state=absent: the bucket is gone (deleted here when it existed and was empty)."""
    params = module.params
    name = bucket_name(params["name"])
    check_auth(params)
    client = StorageClient(params, storage_endpoint(params), "Cloud Storage JSON API")
    current = client.request("GET", api_path("b", name), allow_404=True)
    if current is None:
        return {"changed": False, "actions": [], "bucket": {}, "msg": f"gs://{name} does not exist"}
    result: Body = {"changed": True, "actions": ["delete"], "diff": {"before": current, "after": {}}, "bucket": {}}
    if module.check_mode:
        return {**result, "msg": f"gs://{name} would be deleted"}
    try:
        client.request("DELETE", api_path("b", name))
    except GkeError as exc:
        if exc.code == 409:
            raise GkeError(
                f"{exc} The checkpoint bucket gs://{name} still holds objects (checkpoints), so it was not deleted; "
                f"planb does not delete them one by one. Fix: delete the bucket and everything in it yourself "
                f"(`gcloud storage rm --recursive gs://{name}`), or keep it: leave planb_teardown_bucket false "
                "(gke_cluster_teardown_bucket)."
            ) from exc
        if exc.code == 403:
            raise GkeError(
                f"{exc} Deleting gs://{name} needs storage.buckets.delete on it (role roles/storage.admin). Grant it, "
                "or keep the bucket: leave planb_teardown_bucket false (gke_cluster_teardown_bucket)."
            ) from exc
        raise
    restore = f"it can be restored for its soft-delete retention ({DOC_SOFT_DELETE})"
    return {**result, "msg": f"gs://{name} was deleted; {restore}"}
