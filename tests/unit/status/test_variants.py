"""`planb status` on a concurrent-ladder job: the variants Kueue made (one per flavor, pursued or deactivated),
where the job runs, each migration with its time and the steps train.py reported lost on the resume after it.
The objects are shaped as Kueue v0.19.2 writes them (planb.status.variants cites where)."""

from __future__ import annotations

from typing import Any

from planb.kube import KubeError
from planb.status import gather, variants
from planb.status.render import explain, table
from planb.status.report import KUEUE, collect
from tests.support.shared.status_fakes import FakeKube

Obj = dict[str, Any]
ORDER = ["reserved", "dws", "spot"]
LOG = (
    "No checkpoint in /ckpt; starting at step 0\n"
    "resumed from checkpoint step 500; 37 step(s) lost\n"
    "resumed from checkpoint step 1000; 12 step(s) lost\n"
)


def _variant(flavor: str, uid: str, *, admitted: bool = False, active: bool = True) -> Obj:
    conds = [{"type": "Admitted", "status": "True" if admitted else "False"}]
    return {
        "metadata": {
            "namespace": "default",
            "name": f"rayjob-job-7-{flavor}",
            "uid": uid,
            "annotations": {variants.FLAVOR_ANNOTATION: flavor},
            "ownerReferences": [{"kind": "Workload", "name": "rayjob-job-7-parent"}],
        },
        "spec": {"active": active},
        "status": {"conditions": conds},
    }


def _admitted(variant: str, at: str) -> Obj:
    """Kueue's Event on a variant it admits (an events.k8s.io Event, as Kueue's recorder writes it)."""
    return {
        "reason": variants.ADMITTED_EVENT,
        "involvedObject": {"kind": "Workload", "namespace": "default", "name": f"rayjob-job-7-{variant}"},
        "eventTime": at,
        "message": "Admitted by ClusterQueue cluster-queue, wait time since reservation was 0s",
    }


def _evicted(victim: str, evictor_uid: str, at: str) -> Obj:
    return {
        "reason": variants.MIGRATION_EVENT,
        "involvedObject": {"kind": "Workload", "namespace": "default", "name": f"rayjob-job-7-{victim}"},
        "eventTime": at,
        "message": f"Evicted to accommodate a workload (UID: {evictor_uid}) due to migration to more favorable "
        "resource flavor",
    }


PARENT = {
    "metadata": {
        "namespace": "default",
        "name": "rayjob-job-7-parent",
        "labels": {gather.PARENT_LABEL: "true"},
        "ownerReferences": [{"kind": "RayJob", "name": "job-7"}],
    },
    "spec": {"active": True},
    "status": {
        "conditions": [{"type": "Admitted", "status": "True", "message": "The variant rayjob-job-7-dws is admitted"}],
        "admission": {
            "clusterQueue": "cluster-queue",
            "podSetAssignments": [{"name": "workers", "count": 4, "flavors": {"google.com/tpu": "dws"}}],
        },
    },
}
# Spot admitted first, DWS delivered (spot -> dws); the reservation is still pursued.
VARIANTS = [
    _variant("spot", "u-spot", active=False),
    _variant("dws", "u-dws", admitted=True),
    _variant("reserved", "u-res"),
]
WORKLOADS = [PARENT, *VARIANTS]
EVENTS = [
    _admitted("dws", "2026-11-29T10:02:00.000000Z"),
    _admitted("spot", "2026-11-29T10:00:01.000000Z"),
    {"reason": "Created", "involvedObject": {}},
]


def test_variants_in_flavor_order_and_each_migration_with_its_steps_lost() -> None:
    found = variants.collect(PARENT, VARIANTS, EVENTS, ORDER, LOG)
    assert [(v.flavor, v.state) for v in found.variants] == [
        ("reserved", "pursuing"),
        ("dws", "admitted"),
        ("spot", "deactivated"),
    ]
    assert found.running_on == "dws"
    assert found.pursued == ["reserved"]
    assert found.migrations == [variants.Migration("2026-11-29T10:02:00.000000Z", "spot", "dws", 37)]


def test_each_change_of_the_admitted_variant_is_one_migration() -> None:
    # spot first; dws admitted once its check is Ready (spot deactivated after it); the reservation after Kueue
    # evicted dws on several cycles; then the reservation's variant admitted again (the same flavor: no move).
    events = [
        _admitted("spot", "2026-11-29T10:00:01.000000Z"),
        _admitted("dws", "2026-11-29T10:02:00.000000Z"),
        *(_evicted("dws", "u-res", f"2026-11-29T10:09:0{i}.000000Z") for i in range(5)),
        _admitted("reserved", "2026-11-29T10:09:06.000000Z"),
        _admitted("reserved", "2026-11-29T10:20:00.000000Z"),
    ]
    found = variants.collect(PARENT, VARIANTS, events, ORDER, LOG)
    assert found.migrations == [
        variants.Migration("2026-11-29T10:02:00.000000Z", "spot", "dws", 37),
        variants.Migration("2026-11-29T10:09:06.000000Z", "dws", "reserved", 12),
    ]


def test_the_resume_line_is_parsed_in_its_spellings() -> None:
    assert variants.steps_lost(LOG) == [37, 12]
    assert variants.steps_lost("Resumed from checkpoint step 9; 1 step lost\nresumed from checkpoint step 9") == [1]
    assert variants.steps_lost("Resumed from checkpoint step 500 in /ckpt") == []


class _Kube(FakeKube):
    def get(self, path: str, query: dict[str, str] | None = None) -> Obj | None:
        if path == f"{KUEUE}/clusterqueues/cluster-queue":
            return {"spec": {"resourceGroups": [{"flavors": [{"name": f} for f in ORDER]}]}}
        return None

    def text(self, path: str, query: dict[str, str] | None = None) -> str:
        if path == "/api/v1/namespaces/default/pods/job-7-submitter/log":
            return LOG
        raise KubeError(404, "Not Found", "{}")


def test_status_shows_the_variants_and_migrations_of_a_concurrent_job() -> None:
    rayjob = {
        "metadata": {"namespace": "default", "name": "job-7", "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}},
        "spec": {"suspend": False},
        "status": {},
    }
    submitter = {
        "metadata": {"namespace": "default", "name": "job-7-submitter", "labels": {"job-name": "job-7"}},
        "spec": {},
        "status": {"phase": "Running"},
    }
    kube = _Kube({"/rayjobs": [rayjob], "/workloads": WORKLOADS, "/events": EVENTS, "/pods": [submitter]})
    [job] = collect(kube)  # type: ignore[arg-type]
    text = explain(job)
    assert "  concurrent ladder: runs on dws; pursues reserved" in text, text
    assert "    variant rayjob-job-7-spot: spot deactivated" in text, text
    assert "  migrated at 2026-11-29T10:02:00.000000Z: spot -> dws (37 step(s) lost)" in text, text
    assert table([job]).splitlines()[-1] == (
        "CONCURRENT default/job-7: runs on dws, pursues reserved, 1 migration(s), 37 step(s) lost"
    )


def test_a_sequential_job_shows_no_variants() -> None:
    plain = {**PARENT, "metadata": {**PARENT["metadata"], "labels": {}}}
    rayjob = {"metadata": {"namespace": "default", "name": "job-7"}, "spec": {}, "status": {}}
    [job] = collect(_Kube({"/rayjobs": [rayjob], "/workloads": [plain]}))  # type: ignore[arg-type]
    assert job.concurrent is None
    assert "concurrent ladder" not in explain(job)


class _Recording(_Kube):
    """The fake API above, remembering every path `get` is asked for."""

    def __init__(self, objects: dict[str, list[Obj]]) -> None:
        super().__init__(objects)
        self.asked: list[str] = []

    def get(self, path: str, query: dict[str, str] | None = None) -> Obj | None:
        self.asked.append(path)
        return super().get(path, query)


def test_a_cluster_queue_name_that_is_no_kubernetes_name_is_not_put_into_a_url() -> None:
    # Whoever may write a Workload's status chooses its admission's clusterQueue; '..' would reach another resource.
    for bad in ("../../../api/v1/namespaces/kube-system/secrets/x", "cluster-queue/../other", "Cluster_Queue"):
        parent = {**PARENT, "status": {"conditions": [], "admission": {"clusterQueue": bad}}}
        kube = _Recording({"/workloads": WORKLOADS, "/events": EVENTS})
        found = variants.of_parent(parent, gather.variant_reads(kube, parent), LOG)  # type: ignore[arg-type]
        assert kube.asked == [], kube.asked
        assert [v.flavor for v in found.variants] == ["dws", "reserved", "spot"]  # no ladder order: by name
    kube = _Recording({"/workloads": WORKLOADS, "/events": EVENTS})
    found = variants.of_parent(PARENT, gather.variant_reads(kube, PARENT), LOG)  # type: ignore[arg-type]
    assert kube.asked == [f"{KUEUE}/clusterqueues/cluster-queue"]
    assert [v.flavor for v in found.variants] == ORDER
