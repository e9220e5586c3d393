"""`planb status` shows the cluster's profile beside the job's, and says in one line why a job of another shape
never gets admitted (`-f values/tpu-v6e-2x4.yaml` on a 4x4 cluster).

The queue objects and the RayJobs are the chart's own, rendered by `helm template` (queues mode as the kueue_queues
role installs it, job mode as a user installs it). The Workload is written as Kueue v0.19.2 writes one that no flavor
fits: QuotaReserved=False, reason Pending, and the message Assignment.Message() builds from the flavor checks'
sorted reasons (pkg/scheduler/flavorassigner/flavorassigner.go: checkFlavorForPodSets' "flavor %s doesn't match
node affinity" for each plan flavor, fitsResourceQuota's "insufficient quota ..." for the CPU flavor, whose
accelerator quota is 0).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from planb.build import golden
from planb.kube import KubeError
from planb.status.render import explain, table
from planb.status.report import collect, why_it_cannot_run
from tests.support.shared.status_fakes import FakeKube

Obj = dict[str, Any]
Render = Callable[..., list[Obj]]

#: What Kueue v0.19.2 writes for the tpu-v6e-2x4 job's workers (2 hosts x 4 chips) on the 4x4 queues.
NO_FIT = (
    "couldn't assign flavors to pod set tpu-group: flavor dws doesn't match node affinity, flavor on-demand doesn't "
    "match node affinity, insufficient quota for google.com/tpu in flavor default-cpu, previously considered podsets "
    "requests (0) + current podset request (8) > maximum capacity (0)"
)
#: What it writes while the plan flavors fit but their quota is in use.
NO_QUOTA = (
    "couldn't assign flavors to pod set tpu-group: insufficient quota for google.com/tpu in flavor default-cpu, "
    "previously considered podsets requests (0) + current podset request (16) > maximum capacity (0), insufficient "
    "unused quota for google.com/tpu in flavor dws, 16 more needed, insufficient unused quota for google.com/tpu in "
    "flavor on-demand, 16 more needed"
)


def _values(profile: str) -> str:
    return str(golden.CHART_DIR / "values" / f"{profile}.yaml")


def _pending_workload(message: str) -> Obj:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {
            "namespace": "default",
            "name": "rayjob-job-1-3f9c2",
            "ownerReferences": [{"apiVersion": "ray.io/v1", "kind": "RayJob", "name": "job-1", "controller": True}],
        },
        "spec": {"active": True, "queueName": "user-queue"},
        "status": {
            "conditions": [{"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": message}]
        },
    }


class _Forbidden(FakeKube):
    """Cluster-scoped ClusterQueues answer 403, as they do to a user who may only read their namespace's objects."""

    def items(self, path: str, query: dict[str, str] | None = None) -> list[Obj]:
        if path.endswith("/clusterqueues"):
            raise KubeError(403, "Forbidden", "{}")
        return super().items(path, query)


def _cluster(
    template: Render, job_profile: str, message: str, queues: list[Obj] | None = None, kube: type[FakeKube] = FakeKube
) -> FakeKube:
    if queues is None:
        queues = template("-f", _values("tpu-v6e-4x4"), "--set", "mode=queues", release="planb-queues")
    (rayjob,) = [o for o in template("-f", _values(job_profile)) if o["kind"] == "RayJob"]
    rayjob["metadata"]["namespace"] = "default"  # helm template leaves it to the install
    rayjob["spec"]["suspend"] = True  # Kueue keeps a job it has not admitted suspended
    return kube(
        {
            "/namespaces/default/rayjobs": [rayjob],
            "/namespaces/default/workloads": [_pending_workload(message)],
            "/namespaces/default/localqueues": [o for o in queues if o["kind"] == "LocalQueue"],
            "/clusterqueues": [o for o in queues if o["kind"] == "ClusterQueue"],
            "/resourceflavors": [o for o in queues if o["kind"] == "ResourceFlavor"],
        }
    )


def test_a_job_of_another_shape_is_shown_beside_the_cluster_s_and_why_it_waits(template: Render) -> None:
    (job,) = collect(_cluster(template, "tpu-v6e-2x4", NO_FIT), "default")  # type: ignore[arg-type]
    assert (job.state, job.profile, job.cluster_profile) == ("Pending", "tpu-v6e-2x4", "tpu-v6e-4x4")
    assert job.cluster_queue == "cluster-queue"
    lines = explain(job).splitlines()
    assert "    profile tpu-v6e-2x4 (the job's workers), tpu-v6e-4x4 (ClusterQueue cluster-queue)" in lines
    (why,) = [line for line in lines if "wrong shape" in line]
    assert why == (
        "  wrong shape: the job is tpu-v6e-2x4 but ClusterQueue cluster-queue's flavors select tpu-v6e-4x4, so no "
        f'flavor matches its workers and Kueue never admits it (Kueue: "{NO_FIT}"); install it with '
        "-f charts/planb/values/tpu-v6e-4x4.yaml (or `planb values tpu-v6e-4x4`)"
    )
    # Not "waits for quota": quota is not what it waits for.
    assert not any("no pods yet" in line for line in lines)
    # `planb status --expect` gives up at once: waiting cannot change it.
    assert why_it_cannot_run(job, "on-demand") == f"job-1: {why.strip()}"
    assert table([job]).splitlines()[1].split()[:2] == ["default/job-1", "Pending"]


def test_a_job_of_the_cluster_s_shape_waiting_for_quota_is_not_called_the_wrong_shape(template: Render) -> None:
    (job,) = collect(_cluster(template, "tpu-v6e-4x4", NO_QUOTA), "default")  # type: ignore[arg-type]
    assert (job.profile, job.cluster_profile, job.wrong_shape) == ("tpu-v6e-4x4", "tpu-v6e-4x4", False)
    text = explain(job)
    assert "    profile tpu-v6e-4x4 (the job's workers), tpu-v6e-4x4 (ClusterQueue cluster-queue)" in text
    assert "wrong shape" not in text
    assert "no pods yet: the job waits for admission" in text
    assert why_it_cannot_run(job, "on-demand") == ""


@pytest.mark.parametrize("profile", ["tpu-v5e-2x4", "tpu7x-2x2x2", "gpu-a4-b200-8"])
def test_another_accelerator_is_the_wrong_shape_too(template: Render, profile: str) -> None:
    (job,) = collect(_cluster(template, profile, NO_FIT), "default")  # type: ignore[arg-type]
    assert (job.profile, job.wrong_shape) == (profile, True)
    assert f"wrong shape: the job is {profile} but ClusterQueue cluster-queue's flavors select tpu-v6e-4x4" in explain(
        job
    )


def test_without_the_right_to_read_cluster_queues_every_flavor_is_the_cluster_s(template: Render) -> None:
    (job,) = collect(_cluster(template, "tpu-v6e-2x4", NO_FIT, kube=_Forbidden), "default")  # type: ignore[arg-type]
    assert (job.cluster_queue, job.cluster_profile) == ("", "tpu-v6e-4x4")
    text = explain(job)
    assert "    profile tpu-v6e-2x4 (the job's workers), tpu-v6e-4x4 (the cluster's flavors)" in text
    assert "wrong shape: the job is tpu-v6e-2x4 but the cluster's flavors select tpu-v6e-4x4" in text


def test_flavors_that_select_no_accelerator_claim_no_shape(template: Render) -> None:
    """Queues installed before their flavors selected the profile (the plan label only): nothing to compare."""
    queues = template("-f", _values("tpu-v6e-4x4"), "--set", "mode=queues", release="planb-queues")
    for flavor in (o for o in queues if o["kind"] == "ResourceFlavor"):
        flavor["spec"]["nodeLabels"] = {k: v for k, v in flavor["spec"]["nodeLabels"].items() if "accelerator" not in k}
        flavor["spec"]["nodeLabels"].pop("cloud.google.com/gke-tpu-topology", None)
    (job,) = collect(_cluster(template, "tpu-v6e-2x4", NO_QUOTA, queues=queues), "default")  # type: ignore[arg-type]
    assert (job.profile, job.cluster_profile, job.wrong_shape) == ("tpu-v6e-2x4", "-", False)
    assert "wrong shape" not in explain(job)
    assert why_it_cannot_run(job, "on-demand") == ""


def test_a_gpu_profile_is_named_by_the_chart_s_label_where_gke_s_labels_cannot_tell(template: Render) -> None:
    """GKE labels every H100 80GB node alike, whatever the GPUs per VM: the chart's planb.dev/profile names which."""
    queues = template("-f", _values("gpu-a3-h100-8"), "--set", "mode=queues", release="planb-queues")
    (job,) = collect(_cluster(template, "gpu-a3-h100-8", NO_QUOTA, queues=queues), "default")  # type: ignore[arg-type]
    assert (job.profile, job.cluster_profile, job.wrong_shape) == ("gpu-a3-h100-8", "gpu-a3-h100-8", False)


def test_a_profile_label_that_contradicts_the_selector_is_not_believed(template: Render) -> None:
    """The shape is what the workers select; a label edited by hand does not make a 2x4 job a 4x4 one."""
    kube = _cluster(template, "tpu-v6e-2x4", NO_FIT)
    (rayjob,) = kube.objects["/namespaces/default/rayjobs"]
    rayjob["metadata"]["labels"]["planb.dev/profile"] = "tpu-v6e-4x4"
    (job,) = collect(kube, "default")  # type: ignore[arg-type]
    assert (job.profile, job.wrong_shape) == ("tpu-v6e-2x4", True)
