"""planb smoke job: one small object written, read back and deleted under the checkpoint root, before any TPU.

The chart's ``job.smoke.enabled=true`` renders a RayJob of a head and one small CPU worker on the CPU pool,
through the same LocalQueue and as the same Kubernetes service account as a training job, with this script as
its entrypoint. A PASS shows, in order: Kueue admitted the job (on the CPU flavor), KubeRay started its Ray
cluster, the worker joined the head (the write runs there as a Ray task: the head offers no CPU to tasks), and
the pods may create, read and delete objects under ``PLANB_CHECKPOINT_DIR``, the release's directory under
``job.training.checkpointDir``. On GKE that is a ``gs://`` URL, reached as the Kubernetes service account
through Workload Identity Federation for GKE; locally it is a path. The write goes through ``etils.epath``
(``gcsfs`` for ``gs://``), the libraries train.py's checkpoints use. Create, read and delete are the three
rights train.py needs: it writes checkpoints and its run record, reads them to resume, and Orbax deletes old
ones.

The last line printed is ``planb smoke: PASS ...`` (exit status 0) or ``planb smoke: FAIL ...`` naming the
step that failed and the error (exit status 1), so the submitter's log and the RayJob's status both say it.

Without ``RAY_ADDRESS`` (no Ray cluster: the local Ray head stand-in runs the entrypoint as a host process)
this process writes the object itself. Like train.py, the script imports nothing of the planb package.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import sys
import time
from collections.abc import Mapping

#: Seconds the driver waits for the worker to run the write (the worker pod may still be pulling its image).
DEFAULT_TIMEOUT_S = 600.0
#: What a failure says to look at, by where the object lives.
GS_HINT = (
    "on GKE the job's Kubernetes service account (job.serviceAccountName) reaches gs:// through Workload "
    "Identity Federation for GKE: grant its principal roles/storage.objectUser on the bucket "
    "(docs/first-run.md, section 7), and check the node pool runs the GKE metadata server"
)
PATH_HINT = "check that the directory exists or can be created, and that the job's user (uid 1000) may write it"


class SmokeError(RuntimeError):
    """A step of the smoke test failed; the message names the step."""


def write_object(path: str, body: str) -> str:
    """Write `body` to `path` (creating its directory); the host name of the pod (or machine) that wrote it."""
    from etils import epath

    target = epath.Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(body)
    return socket.gethostname()


def write_on_worker(path: str, body: str, timeout: float) -> str:
    """Run `write_object` as a Ray task on a worker when a Ray cluster runs (RAY_ADDRESS), else in this process."""
    if not os.environ.get("RAY_ADDRESS"):
        print("planb smoke: no Ray cluster (RAY_ADDRESS is unset): this process writes the object")
        return write_object(path, body)
    import ray

    ray.init()
    try:
        ref = ray.remote(num_cpus=1)(write_object).remote(path, body)
        try:
            return str(ray.get(ref, timeout=timeout))
        except ray.exceptions.GetTimeoutError as exc:
            raise SmokeError(
                f"no Ray worker ran the write within {timeout:.0f} s: the worker pod did not join the head "
                "(its image or packages still loading, or the job's NetworkPolicy)"
            ) from exc
    finally:
        ray.shutdown()


def smoke(env: Mapping[str, str]) -> str:
    """Write, read back and delete one object under PLANB_CHECKPOINT_DIR; what was proven, or SmokeError."""
    root = env.get("PLANB_CHECKPOINT_DIR", "").rstrip("/")
    if not root:
        raise SmokeError(
            "PLANB_CHECKPOINT_DIR is empty: set job.training.checkpointDir (gs://BUCKET/checkpoints on GKE)"
        )
    timeout = float(env.get("PLANB_SMOKE_TIMEOUT") or DEFAULT_TIMEOUT_S)
    path = f"{root}/planb-smoke-{secrets.token_hex(4)}.json"
    body = json.dumps({"run": env.get("PLANB_RUN_ID", ""), "token": secrets.token_hex(16), "at": time.time()})
    hint = GS_HINT if path.startswith("gs://") else PATH_HINT
    step = "write"
    try:
        writer = write_on_worker(path, body, timeout)
        print(f"planb smoke: wrote {path} from {writer}")
        from etils import epath

        step = "read back"
        found = epath.Path(path).read_text()
        if found != body:
            raise SmokeError(f"read back {path}, but it holds other bytes than were written")
        step = "delete"
        epath.Path(path).unlink()
        if epath.Path(path).exists():
            raise SmokeError(f"{path} is still there after its delete")
    except SmokeError as exc:
        raise SmokeError(f"{step}: {exc}") from exc
    except Exception as exc:  # any library's error is the step's failure, reported in its words
        raise SmokeError(f"{step} of {path} failed: {type(exc).__name__}: {exc} ({hint})") from exc
    return f"wrote {path} from {writer}, read it back from {socket.gethostname()} and deleted it"


def main() -> int:
    try:
        done = smoke(os.environ)
    except SmokeError as exc:
        print(f"planb smoke: FAIL: {exc}", flush=True)
        return 1
    print(f"planb smoke: PASS: {done}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
