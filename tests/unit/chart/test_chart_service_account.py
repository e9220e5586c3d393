"""job.serviceAccountName: the identity a RayJob's pods write gs:// checkpoints as.

With Workload Identity Federation for GKE the pods reach Google APIs as their Kubernetes service account; the chart
puts head, workers and submitter on `job.serviceAccountName` and creates no ServiceAccount unless asked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.support.shared.chart.helm import Helm
from tests.support.shared.chart.objects import release_objects

Render = Callable[..., list[dict[str, Any]]]
RELEASE = "job-1"


def _pod_specs(objs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    (rayjob,) = [o for o in objs if o["kind"] == "RayJob"]
    spec = rayjob["spec"]
    cluster = spec["rayClusterSpec"]
    pods = {"submitter": spec["submitterPodTemplate"]["spec"], "head": cluster["headGroupSpec"]["template"]["spec"]}
    for group in cluster["workerGroupSpecs"]:
        pods[group["groupName"]] = group["template"]["spec"]
    return pods


def test_default_uses_the_namespace_default_account_and_creates_none(template: Render) -> None:
    objs = template()
    assert all("serviceAccountName" not in spec for spec in _pod_specs(objs).values())
    assert [o for o in objs if o["kind"] == "ServiceAccount"] == []


def test_every_pod_of_the_job_runs_as_the_named_account(template: Render) -> None:
    objs = template("--set", "job.serviceAccountName=trainer")
    specs = _pod_specs(objs)
    assert len(specs) == 3
    assert {name: spec["serviceAccountName"] for name, spec in specs.items()} == dict.fromkeys(specs, "trainer")
    assert [o for o in objs if o["kind"] == "ServiceAccount"] == []


def test_the_account_is_created_only_when_a_value_says_so(template: Render, helm: Helm) -> None:
    objs = template("--set", "job.serviceAccountName=trainer", "--set", "job.createServiceAccount=true")
    (account,) = [o for o in objs if o["kind"] == "ServiceAccount"]
    assert account["metadata"]["name"] == "trainer"
    nameless = helm("template", RELEASE, "charts/planb", "--set", "job.createServiceAccount=true")
    assert nameless.returncode != 0 and "job.createServiceAccount=true needs job.serviceAccountName" in nameless.stderr
    bad = helm("template", RELEASE, "charts/planb", "--set", "job.serviceAccountName=Trainer_1")
    assert bad.returncode != 0 and "serviceAccountName" in bad.stderr


def test_the_queues_release_makes_the_one_account_a_namespace_s_jobs_share(template: Render) -> None:
    objs = template("--set", "mode=queues", "--set", "queues.localQueue.namespace=team-a")
    (account,) = [o for o in release_objects(objs) if o["kind"] == "ServiceAccount"]  # not helm test's own
    assert (account["metadata"]["name"], account["metadata"]["namespace"]) == ("planb-job", "team-a")
    # Kept with the queues on uninstall, so running jobs keep their identity.
    assert account["metadata"]["annotations"] == {"helm.sh/resource-policy": "keep"}
    none = template("--set", "mode=queues", "--set", "queues.jobServiceAccount=")
    assert [o for o in release_objects(none) if o["kind"] == "ServiceAccount"] == []


def test_two_jobs_that_share_the_account_create_none_of_their_own(template: Render) -> None:
    for release in ("job-1", "job-2"):
        objs = template("--set", "job.serviceAccountName=planb-job", release=release)
        assert [o for o in objs if o["kind"] == "ServiceAccount"] == [], release
        assert {spec["serviceAccountName"] for spec in _pod_specs(objs).values()} == {"planb-job"}


def test_the_queues_notes_name_the_shared_account_and_how_to_delete_it(notes: Callable[..., str]) -> None:
    text = notes("--set", "mode=queues")
    assert "--set job.serviceAccountName=planb-job" in text, text
    assert "kubectl delete serviceaccount planb-job -n default" in text, text
    assert "serviceAccountName" not in notes("--set", "mode=queues", "--set", "queues.jobServiceAccount="), text
