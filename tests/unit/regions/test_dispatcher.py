"""The keeper's dispatcher (planb.regions.dispatcher.tick) against fake manager and region API servers: what it
nominates, how it widens, what the ledger's ConfigMap holds. No sockets: the fakes answer in memory."""

from __future__ import annotations

from typing import Any

import pytest

from planb.errors import UsageError
from planb.regions.dispatcher import decide
from planb.regions.dispatcher import ledger_store as cs
from planb.regions.dispatcher.advise import no_advice
from planb.regions.dispatcher.google_advice import Advice, http_post
from planb.regions.dispatcher.job_dispatch import DispatchSettings, Seen
from planb.regions.dispatcher.ledger import FAILED, GRANTED, PENDING, WITHDRAWN, Key, Ledger
from planb.regions.dispatcher.tick import Dispatcher
from tests.support.unit.dispatcher_fakes import (
    CLUSTERS,
    CONFIG,
    KUEUE,
    LEDGER_CM,
    REGIONS,
    SHAPE,
    T0,
    WL,
    Clock,
    Fake,
    dispatching,
    outcomes,
    region,
    stored,
    tick,
    workload,
)


def test_the_best_region_is_nominated_first_as_kueue_admission_and_the_configmap_says_why() -> None:
    dispatcher, manager, _, _, said = dispatching({"us-east5": 0.2, "europe-west4": 0.9, "asia-northeast1": 0.5})
    tick(dispatcher, manager)
    path, body, query, content_type = manager.applies[-1]
    assert path == f"{WL}/status" and query == {"fieldManager": "kueue-admission", "force": "true"}
    assert content_type == "application/apply-patch+yaml"
    assert body["status"]["nominatedClusterNames"] == ["europe-west4"]
    ledger, advice = stored(manager)
    assert outcomes(ledger, "europe-west4") == [PENDING] and outcomes(ledger, "us-east5") == []
    assert advice.job == "default/job-1" and not advice.race
    offered = {p.key.region: (p.offered, p.source) for p in advice.pairs}
    assert offered["europe-west4"] == ("first", cs.GOOGLE)
    assert any("europe-west4 first" in line for line in said)
    tick(dispatcher, manager)  # nothing new: no second apply
    assert len(manager.applies) == 1


def test_a_stockout_said_in_the_best_region_widens_at_once_and_the_grant_elsewhere_closes_the_ledger() -> None:
    dispatcher, manager, regions, clock, said = dispatching(
        {"us-east5": 0.2, "europe-west4": 0.9, "asia-northeast1": 0.5}
    )
    tick(dispatcher, manager)
    copy_path = f"{KUEUE}/namespaces/default/workloads/job-1"
    regions["europe-west4"].objects[copy_path] = {"metadata": {"uid": "c1"}, "spec": {}, "status": {}}
    clock.now += 5
    tick(dispatcher, manager)  # the copy seen, waiting
    regions["europe-west4"].objects[copy_path]["status"] = {
        "admissionChecks": [{"name": "dws-prov", "state": "Retry", "message": "QueuingInfeasibleNoCapacity"}]
    }
    clock.now += 25
    tick(dispatcher, manager)
    assert manager.applies[-1][1]["status"]["nominatedClusterNames"] == ["asia-northeast1"]
    assert any("europe-west4/dws" in line and "failed (check dws-prov Retry" in line for line in said)
    ledger, _ = stored(manager)
    assert outcomes(ledger, "europe-west4") == [FAILED] and outcomes(ledger, "asia-northeast1") == [PENDING]
    # Kueue admits the asia copy: clusterName set, nominations cleared.
    regions["asia-northeast1"].objects[copy_path] = {
        "metadata": {"uid": "c2"},
        "status": {"admission": {"podSetAssignments": [{"flavors": {"google.com/tpu": "dws"}}]}},
    }
    manager.objects[WL]["status"] |= {"clusterName": "asia-northeast1", "nominatedClusterNames": None}
    clock.now += 60
    tick(dispatcher, manager)
    ledger, _ = stored(manager)
    assert outcomes(ledger, "asia-northeast1") == [GRANTED]
    assert not dispatcher.jobs and any("granted in asia-northeast1/dws" in line for line in said)


def test_a_silent_queue_keeps_its_place_and_the_next_region_joins_at_the_bound() -> None:
    dispatcher, manager, _, clock, _ = dispatching({"us-east5": 0.2, "europe-west4": 0.9, "asia-northeast1": 0.5})
    tick(dispatcher, manager)
    bound = next(iter(dispatcher.jobs.values())).plan.order[0].bound_s
    clock.now += bound
    tick(dispatcher, manager)
    assert manager.applies[-1][1]["status"]["nominatedClusterNames"] == ["europe-west4", "asia-northeast1"]
    manager.objects[WL]["status"] |= {"clusterName": "europe-west4", "nominatedClusterNames": None}
    tick(dispatcher, manager)
    ledger, _ = stored(manager)
    assert outcomes(ledger, "europe-west4") == [GRANTED] and outcomes(ledger, "asia-northeast1") == [WITHDRAWN]


def test_without_an_advice_source_a_tpu_job_is_ordered_by_the_ledger_not_raced() -> None:
    """No --advice-url: a TPU pair has no advice by design (Google gives none for TPUs), as with a source, so the
    job is not raced; the ledger (empty here) and the reservations order it."""
    manager = Fake({WL: workload()})
    regions = {r: region(["dws"]) for r in REGIONS}
    said: list[str] = []
    dispatcher = Dispatcher(
        manager,
        DispatchSettings(),
        no_advice("no advice source"),
        said.append,
        Clock(),
        lambda m, r: regions[r],  # type: ignore[arg-type]
    )
    tick(dispatcher, manager)
    assert manager.applies[-1][1]["status"]["nominatedClusterNames"]
    _, advice = stored(manager)
    assert not advice.race
    assert not any(p.source == cs.RACE + "no advice source" for p in advice.pairs), advice.pairs
    assert not any("AllAtOnce" in line for line in said), said


def test_without_an_advice_source_a_pair_that_would_be_asked_has_none_and_says_why() -> None:
    advise = no_advice("no advice source")
    gpu = advise(Key("us-east5", "spot", "a3-highgpu-8g:2"))
    tpu = advise(Key("us-east5", "dws", SHAPE))
    assert (gpu.obtainability, gpu.missing, gpu.by_design) == (None, "no advice source", False)
    assert (tpu.obtainability, tpu.by_design) == (None, True) and "TPU" in tpu.missing


def test_a_region_whose_ladder_cannot_be_read_is_one_pair_ordered_by_the_ledger() -> None:
    dispatcher, manager, regions, _, _ = dispatching({"us-east5": 0.9, "europe-west4": 0.5, "asia-northeast1": 0.2})
    regions["us-east5"].objects.clear()
    tick(dispatcher, manager)
    _, advice = stored(manager)
    east = next(p for p in advice.pairs if p.key.region == "us-east5")
    assert east.key.rung == "ladder" and "us-east5 has no ClusterQueue" in east.source


def test_a_workload_that_goes_before_any_grant_withdraws_its_asks() -> None:
    dispatcher, manager, _, _, said = dispatching({"us-east5": 0.2, "europe-west4": 0.9, "asia-northeast1": 0.5})
    tick(dispatcher, manager)
    dispatcher.tick([], CLUSTERS, CONFIG)
    ledger, _ = stored(manager)
    assert outcomes(ledger, "europe-west4") == [WITHDRAWN] and not dispatcher.jobs
    assert any("its Workload is gone" in line for line in said)


def test_a_spot_rung_with_a_short_estimated_uptime_is_skipped_and_the_configmap_says_why() -> None:
    manager = Fake({WL: workload()})
    regions = {r: region(["dws", "spot"]) for r in REGIONS}
    said: list[str] = []

    def advise(key: Key) -> Advice:
        return Advice(0.9, 1800.0) if key.rung == "spot" else Advice(0.5)

    dispatcher = Dispatcher(manager, DispatchSettings(), advise, said.append, Clock(), lambda m, r: regions[r])  # type: ignore[arg-type]
    tick(dispatcher, manager)
    _, advice = stored(manager)
    spot = [p for p in advice.pairs if p.key.rung == "spot"]
    assert len(spot) == 3 and all(p.offered == "skipped" for p in spot)
    assert all(
        p.reason.startswith("Spot skipped: estimatedUptime 30 min < checkpoint interval + restore 55 min") for p in spot
    )
    assert sum("Spot skipped" in line for line in said) == 3
    ledger, _ = stored(manager)
    assert manager.applies[-1][1]["status"]["nominatedClusterNames"]
    assert ledger.asks and all(key.rung == "dws" for key in ledger.asks)


def test_a_nomination_kueues_own_dispatcher_rewrites_is_left_alone_and_said_once() -> None:
    dispatcher, manager, _, clock, said = dispatching({"us-east5": 0.2, "europe-west4": 0.9, "asia-northeast1": 0.5})
    tick(dispatcher, manager)
    manager.objects[WL]["status"]["nominatedClusterNames"] = list(REGIONS)  # AllAtOnce: the name was not set
    for _ in range(3):
        clock.now += 5
        tick(dispatcher, manager)
    assert len(manager.applies) == 1
    assert sum("rewritten" in line and "dispatcherName planb.dev/advice-ordered" in line for line in said) == 1


def test_a_restarted_keeper_closes_the_open_asks_and_keeps_the_regions_already_nominated() -> None:
    earlier = Ledger()
    earlier.ask(Key("asia-northeast1", "dws", SHAPE), T0 - 60)
    body = cs.configmap(earlier, None)
    wl = workload()
    wl["status"]["nominatedClusterNames"] = ["asia-northeast1"]
    manager = Fake({WL: wl, LEDGER_CM: body})
    regions = {r: region(["dws"]) for r in REGIONS}
    said: list[str] = []
    scores = {"us-east5": 0.2, "europe-west4": 0.9, "asia-northeast1": 0.5}
    dispatcher = Dispatcher(
        manager,
        DispatchSettings(),
        lambda k: Advice(scores[k.region]),
        said.append,
        Clock(),
        lambda m, r: regions[r],  # type: ignore[arg-type]
    )
    tick(dispatcher, manager)
    assert not manager.applies  # asia-northeast1 keeps its copy and its request: taken as asked now
    ledger, _ = stored(manager)
    assert outcomes(ledger, "asia-northeast1") == [WITHDRAWN, PENDING]
    job = next(iter(dispatcher.jobs.values()))
    bound = next(r.bound_s for r in job.plan.order if r.key.region == "asia-northeast1")
    dispatcher.wall = lambda: T0 + bound  # type: ignore[method-assign]
    tick(dispatcher, manager)
    assert manager.applies[-1][1]["status"]["nominatedClusterNames"] == ["europe-west4", "asia-northeast1"]
    assert any("closed 1 ask(s)" in line for line in said) and any("kept asia-northeast1" in line for line in said)


def test_a_copy_admitted_after_an_eviction_keeps_its_region_nominated() -> None:
    """A copy evicted from one DWS rung and admitted on the next between two looks is Admitted, so Kueue
    converges on it and sets clusterName, which its webhook refuses unless the region is still nominated."""
    dispatcher, manager, regions, clock, said = dispatching(
        {"us-east5": 0.2, "europe-west4": 0.9, "asia-northeast1": 0.5}
    )
    tick(dispatcher, manager)
    copy_path = f"{KUEUE}/namespaces/default/workloads/job-1"
    regions["europe-west4"].objects[copy_path] = {"metadata": {"uid": "c1"}, "spec": {}, "status": {}}
    clock.now += 5
    tick(dispatcher, manager)  # the copy seen: uid c1, no eviction
    admitted = {
        "metadata": {"uid": "c1"},
        "spec": {},
        "status": {
            "conditions": [{"type": "Admitted", "status": "True"}],
            "schedulingStats": {"evictions": [{"reason": "PodsReadyTimeout", "count": 1}]},
            "admission": {"podSetAssignments": [{"flavors": {"google.com/tpu": "dws"}}]},
        },
    }
    regions["europe-west4"].objects[copy_path] = admitted
    clock.now += 5
    tick(dispatcher, manager)
    assert "europe-west4" in manager.objects[WL]["status"]["nominatedClusterNames"], manager.applies[-1]
    assert not any(" failed (" in line for line in said), said
    assert decide.copy_outcome(admitted, Seen("c1", 0))[0] != FAILED


def test_the_advice_token_goes_over_plain_http_only_to_a_loopback_host() -> None:
    """The URL is checked before anything is sent (no socket: http_post only builds the poster)."""
    with pytest.raises(UsageError, match="not https: planb's policy"):
        http_post("http://advice.example.com", "secret")
    http_post("http://127.0.0.1:8080", "secret")
    http_post("http://localhost:8080", "secret")
    http_post("http://[::1]:8080", "secret")
    http_post("https://compute.googleapis.com", "secret")
    http_post("http://advice.example.com")  # no token: nothing to leak


class Asked(Fake):
    """A region's fake API server that records each path asked."""

    def __init__(self, objects: dict[str, dict[str, Any]]) -> None:
        super().__init__(objects)
        self.asked: list[str] = []

    def get(self, path: str) -> dict[str, Any] | None:
        self.asked.append(path)
        return super().get(path)


@pytest.mark.parametrize("cq_name", ["..", "../../../api/v1/namespaces/kube-system/secrets/x", "CQ", "a?watch=1"])
def test_a_clusterqueue_name_that_is_not_a_kubernetes_name_is_not_put_into_a_url(cq_name: str) -> None:
    """The region's LocalQueue names its ClusterQueue, and that name went into the URL unquoted. Now it
    is read only when it is a DNS-1123 subdomain (then quoted); else the ladder is unread, and the pair says why."""
    dispatcher, manager, regions, _, _ = dispatching({"us-east5": 0.9, "europe-west4": 0.5, "asia-northeast1": 0.2})
    east = Asked(regions["us-east5"].objects)
    east.objects[f"{KUEUE}/namespaces/default/localqueues/user-queue"] = {"spec": {"clusterQueue": cq_name}}
    regions["us-east5"] = east
    tick(dispatcher, manager)
    assert east.asked == [f"{KUEUE}/namespaces/default/localqueues/user-queue"], east.asked
    _, advice = stored(manager)
    pair = next(p for p in advice.pairs if p.key.region == "us-east5")
    assert pair.key.rung == "ladder"
    assert f"us-east5's ladder could not be read: {cq_name!r} is not a Kubernetes name" in pair.source, pair.source
