"""Calendar mode for the long wait: a TPU job waiting past the keeper's bound is shown, by
``planb status JOB``, what ``advice.calendarMode`` offers for its shape in each region, with the command that would
reserve it.

The keeper's calendar watch (planb.regions.calendar.watch) reads the manager's Workloads on a real kube-apiserver (the
regions folder's shared one, Kueue's CRDs in it) and asks the GKE emulator's ``advice.calendarMode`` over HTTP with
the product's client (planb.regions.dispatcher.google_advice.http_post); ``planb status`` reads what it kept. The
request planb sends and the emulator's answer are held to compute v1's discovery document
(``CalendarModeAdviceRequest``, ``CalendarModeAdviceResponse``, revision 20261106;
https://cloud.google.com/compute/docs/reference/rest/v1/advice/ calendarMode).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from planb import cli
from planb.catalog import profiles
from planb.kube import Kube, KubeError
from planb.local.gke_emulator import contract, discovery
from planb.local.gke_emulator.emulator import RunningEmulator
from planb.regions.access.connection import KUEUE
from planb.regions.calendar.offers import CalendarOffer, ask_calendar, calendar_request, tpu_spec
from planb.regions.calendar.watch import CONFIGMAP, JOBS_KEY, CalendarSettings, CalendarWatch
from planb.regions.dispatcher.google_advice import http_post
from tests.support.integration.gke.gke_api import call
from tests.support.integration.gke.modules import PROJECT

pytestmark = [pytest.mark.tools]

PROFILE = profiles.get("tpu-v6e-4x4")
SHAPE = f"{PROFILE.machine_type}:{PROFILE.hosts_per_slice}"
CONFIG = "calendar-test"
EAST, WEST = "us-east5", "europe-west4"
CALENDAR_PATH = f"/compute/v1/projects/{PROJECT}/regions/{EAST}/advice/calendarMode"
WORKLOADS = f"{KUEUE}/namespaces/default/workloads"
AFTER_S = 3600.0


@pytest.fixture(scope="module")
def kube(module_kube: Kube, regions_api_server: Path) -> Iterator[Kube]:
    """The folder's shared API server, with a MultiKueueConfig of two regions and Kueue's namespace; the config and
    the calendar ConfigMap go when the module ends."""
    with contextlib.suppress(KubeError):  # another module of the folder may have made it
        module_kube.create(
            "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kueue-system"}}
        )
    config = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "MultiKueueConfig",
        "metadata": {"name": CONFIG},
        "spec": {"clusters": [EAST, WEST]},
    }
    module_kube.create(f"{KUEUE}/multikueueconfigs", config)
    yield module_kube
    module_kube.delete(f"{KUEUE}/multikueueconfigs/{CONFIG}")
    module_kube.delete(f"/api/v1/namespaces/kueue-system/configmaps/{CONFIGMAP}")


def _violations(schema: str, body: dict[str, Any], request: bool) -> list[str]:
    """What compute v1's ``schema`` refuses in ``body``: as a request (Google's parse), or as an answer (canonical
    JSON, every value as Google writes it)."""
    root = contract.body_root("compute") if request else ""
    _, found = contract.conform("compute", schema, body, root=root, output=not request, request=request)
    return [v.description for v in found]


def test_the_request_and_the_answer_are_the_discovery_document_s(emulator: RunningEmulator) -> None:
    """planb's request for a v6e 4x4 slice is a CalendarModeAdviceRequest (aggregate resources: the VM family, BATCH
    for a multi-host slice, its 16 chips; a day from now), and the emulator's answer a CalendarModeAdviceResponse
    whose recommendation planb reads as a zone and a window of a day."""
    method = discovery.find_method("POST", CALENDAR_PATH)
    assert method is not None and (method.id, method.request, method.response) == (
        "compute.advice.calendarMode", "CalendarModeAdviceRequest", "CalendarModeAdviceResponse",
    )  # fmt: skip
    spec = tpu_spec(SHAPE)
    assert spec is not None and (spec.vm_family, spec.workload_type, spec.chips) == (
        "VM_FAMILY_CLOUD_TPU_LITE_POD_SLICE_CT6E", "BATCH", 16,
    )  # fmt: skip
    body = calendar_request(spec, time.time(), 1)
    assert _violations("CalendarModeAdviceRequest", body, request=True) == []
    status, answer = call(emulator, "POST", CALENDAR_PATH, body)
    assert status == 200, answer
    assert _violations("CalendarModeAdviceResponse", answer, request=False) == []
    offer = CalendarOffer.from_answer(EAST, answer)
    assert offer.zone.startswith(f"{EAST}-") and offer.duration_s == 86400.0, (offer, answer)
    # A spec the schema refuses is Google's 400, before the emulator reads it.
    bad = json.loads(json.dumps(body))
    bad["futureResourcesSpecs"]["planb"]["targetResources"]["aggregateResources"]["workloadType"] = "TRAINING"
    status, answer = call(emulator, "POST", CALENDAR_PATH, bad)
    assert status == 400 and "(TYPE_ENUM)" in answer["error"]["message"], answer


def _status(kubeconfig: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``planb status job-cal``: its exit code, stdout and stderr; asked again while the API server answers 429
    "storage is (re)initializing" for a list status makes first (a resource's watch cache still filling)."""
    for _ in range(100):
        capsys.readouterr()
        code = cli.main(["status", "job-cal", "-n", "default", "--kubeconfig", str(kubeconfig)])
        out, err = capsys.readouterr()
        if "storage is (re)initializing" not in err:
            break
        time.sleep(0.2)
    return code, out, err


def _workload(kube: Kube, name: str, rayjob: str) -> None:
    """A manager's Workload of a v6e 4x4 RayJob, nominated to both regions and placed in neither."""
    pod_set = {
        "name": "workers",
        "count": PROFILE.hosts_per_slice,
        "template": {"spec": {"nodeSelector": PROFILE.node_selector, "containers": [{"name": "w", "image": "x"}]}},
    }
    owner = {"apiVersion": "ray.io/v1", "kind": "RayJob", "name": rayjob, "uid": "00000000-0000-0000-0000-00000000ca1e"}
    body = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": name, "ownerReferences": [owner]},
        "spec": {"queueName": "user-queue", "podSets": [pod_set]},
    }
    kube.create(WORKLOADS, body)
    kube.merge_patch(f"{WORKLOADS}/{name}/status", {"status": {"nominatedClusterNames": [EAST, WEST]}})


def test_planb_status_shows_calendar_mode_for_a_tpu_job_waiting_past_the_bound(
    kube: Kube, regions_api_server: Path, emulator: RunningEmulator, capsys: pytest.CaptureFixture[str]
) -> None:
    rayjob = {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": "job-cal"}, "spec": {"suspend": True}}
    kube.create("/apis/ray.io/v1/namespaces/default/rayjobs", rayjob)
    _workload(kube, "rayjob-job-cal-1", "job-cal")
    # europe-west4 has stocked out in every zone for v6e; us-east5 has nothing against it.
    for zone in ("a", "b", "c"):
        signal = {"zone": f"{WEST}-{zone}", "machineType": PROFILE.machine_type, "provisioningModel": "FLEX_START"}
        assert (
            call(emulator, "POST", "/planb/v1/capacity-signals", {**signal, "outcome": "STOCKOUT", "count": 3})[0]
            == 200
        )
    post = http_post(emulator.url)
    said: list[str] = []
    settings = CalendarSettings(AFTER_S, PROJECT, CONFIG)
    clock = {"now": 0.0}
    watch = CalendarWatch(
        kube, settings, lambda r, s, t, d: ask_calendar(post, PROJECT, r, s, t, d), said.append, lambda: clock["now"]
    )
    created = kube.get(f"{WORKLOADS}/rayjob-job-cal-1")["metadata"]["creationTimestamp"]  # type: ignore[index]
    born = datetime.fromisoformat(created.replace("Z", "+00:00")).timestamp()
    clock["now"] = born + AFTER_S - 60  # within the bound: nothing asked, nothing kept
    watch.tick()
    assert said == [] and kube.get(f"/api/v1/namespaces/kueue-system/configmaps/{CONFIGMAP}") is None
    clock["now"] = born + AFTER_S + 60
    watch.tick()
    assert said and "calendar mode for default/job-cal" in said[0], said
    kept = json.loads(kube.get(f"/api/v1/namespaces/kueue-system/configmaps/{CONFIGMAP}")["data"][JOBS_KEY])  # type: ignore[index]
    offers = {o["region"]: o for o in kept["default/job-cal"]["offers"]}
    assert offers[EAST]["zone"].startswith(f"{EAST}-") and offers[WEST]["zone"] == "", offers
    code, out, err = _status(regions_api_server, capsys)
    assert code == 0, out + err
    east = offers[EAST]
    assert "61 min in, over the keeper's bound of 60 min, advice.calendarMode offered for 16 chips of " in out, out
    assert "ct6e-standard-4t (BATCH), 1 day(s) from then:" in out, out
    assert f"{EAST}: zone {east['zone']}, from {east['start']} for 1 day (to {east['end']})" in out, out
    assert (
        f"to reserve it: gcloud beta compute future-reservations create planb-default-job-cal --project={PROJECT} "
        f"--zone={east['zone']} --tpu-version=V6E --chip-count=16 --workload-type=BATCH --start-time={east['start']} "
        f"--end-time={east['end']} --reservation-mode=CALENDAR" in out
    ), out
    assert f"{WEST}: no zone recommended ({WEST}-a NO_CAPACITY, {WEST}-b NO_CAPACITY, {WEST}-c NO_CAPACITY)" in out
    # Placed in a region, the job leaves the ConfigMap and status shows no calendar mode for it.
    kube.merge_patch(
        f"{WORKLOADS}/rayjob-job-cal-1/status", {"status": {"clusterName": EAST, "nominatedClusterNames": None}}
    )
    clock["now"] += settings.look_every_s
    watch.tick()
    kept = json.loads(kube.get(f"/api/v1/namespaces/kueue-system/configmaps/{CONFIGMAP}")["data"][JOBS_KEY])  # type: ignore[index]
    assert kept == {}
    code, out, err = _status(regions_api_server, capsys)
    assert code == 0 and "Calendar mode" not in out and "job-cal" in out, out + err


@pytest.mark.parametrize(
    ("days", "ahead_days", "chips", "said"),
    [
        (91, 0, None, "lasts 1 to 90 days"),
        (1, 121, None, "up to 120 days ahead"),
        (1, 0, "12", "acceleratorCount 12"),
    ],
)
def test_a_spec_outside_what_calendar_mode_reserves_meets_no_zone_s_conditions(
    emulator: RunningEmulator, days: int, ahead_days: int, chips: str | None, said: str
) -> None:
    """Google's pages: 1 to 90 days, up to 120 days ahead, 1, 4, 8, ..., 1,024 chips a request; outside them every
    zone is CONDITIONS_NOT_MET with details, and no location (the emulator's reading: the status the schema gives)."""
    spec = tpu_spec(SHAPE)
    assert spec is not None
    body = calendar_request(spec, time.time() + ahead_days * 86400, 1)
    planb = body["futureResourcesSpecs"]["planb"]
    planb["timeRangeSpec"]["minDuration"] = f"{days * 86400}s"
    if chips is not None:
        planb["targetResources"]["aggregateResources"]["acceleratorCount"] = chips
    status, answer = call(emulator, "POST", CALENDAR_PATH, body)
    assert status == 200, answer
    found = answer["recommendations"][0]["recommendationsPerSpec"]["planb"]
    assert "location" not in found and found["otherLocations"], found
    assert all(v["status"] == "CONDITIONS_NOT_MET" and said in v["details"] for v in found["otherLocations"].values())
    assert CalendarOffer.from_answer(EAST, answer).why.startswith("no zone recommended (us-east5-a CONDITIONS_NOT_MET")
