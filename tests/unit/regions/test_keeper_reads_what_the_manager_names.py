"""The keeper reads only the reservations the manager's own configuration names, in projects it allows.

planb's policy: a region's objects do not choose what the keeper reads with the manager's token, because whoever
administers a region could otherwise send that token's requests to any project's reservation and steer dispatch (a
reservation read with room scores 0.95). A region's ResourceFlavor may still carry ``planb.dev/reservation`` (the chart
writes it); the keeper does not read it. And the keeper's TPU path: no advice asked (Google shows no TPU availability
in advice.capacity), no race, the ledger's order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planb import cli
from planb.regions.dispatcher import ledger_store as cs
from planb.regions.dispatcher.advise import google_advise
from planb.regions.dispatcher.google_advice import NO_TPU_ADVICE, Advice
from planb.regions.dispatcher.job_dispatch import DispatchSettings
from planb.regions.dispatcher.ledger import FAILED, GRANTED, Key, Ledger
from planb.regions.dispatcher.reservation_reads import ReservationSpecError, google_read, parse_reservation
from planb.regions.dispatcher.reservation_room import ReservationRef, RoomUnread
from planb.regions.dispatcher.tick import Dispatcher
from tests.support.unit.dispatcher_fakes import (
    KUEUE,
    REGIONS,
    SHAPE,
    T0,
    WL,
    Clock,
    Fake,
    region,
    stored,
    tick,
    workload,
)

PROJECT = "planb-local"


def test_a_regions_flavor_naming_another_projects_reservation_causes_no_request_there() -> None:
    """Every region's reservation flavor names a reservation of ``victim-project``; the manager names none. No
    request goes to Compute Engine at all, and none to that project."""
    manager, said, asked = Fake({WL: workload()}), [], []
    regions = {}
    for name in REGIONS:
        regions[name] = region(["reserved", "dws"])
        annotated = {
            "name": "reserved",
            "annotations": {"planb.dev/reservation": "projects/victim-project/reservations/x"},
        }
        regions[name].objects[f"{KUEUE}/resourceflavors"] = {"items": [{"metadata": annotated}]}

    def get(path: str) -> tuple[int, dict[str, Any]]:
        asked.append(path)
        return 200, {"specificReservation": {"count": "8", "instanceProperties": {"machineType": "ct6e-standard-4t"}}}

    dispatcher = Dispatcher(
        manager,
        DispatchSettings(),
        lambda key: Advice(0.5),
        said.append,
        Clock(),
        lambda m, r: regions[r],  # type: ignore[arg-type,return-value]
        read=google_read(get, PROJECT),
    )
    tick(dispatcher, manager)
    assert manager.applies, said  # the job was dispatched
    assert not [path for path in asked if "victim-project" in path], asked
    assert asked == [], asked


def test_the_keeper_reads_the_reservation_the_manager_names_in_its_pools_zone_and_nowhere_else() -> None:
    """``--reservation us-east5/reserved=zones/us-east5-b/reservations/res``: one GET, in that zone (GKE matches a
    reservation only in the pool's own zone), whatever the region's flavors say."""
    manager, said, asked = Fake({WL: workload()}), [], []
    regions = {name: region(["reserved", "dws"]) for name in REGIONS}
    named = dict([parse_reservation("us-east5/reserved=zones/us-east5-b/reservations/res", PROJECT)])

    def get(path: str) -> tuple[int, dict[str, Any]]:
        asked.append(path)
        return 404, {}

    dispatcher = Dispatcher(
        manager,
        DispatchSettings(reservations=named),
        lambda key: Advice(0.5),
        said.append,
        Clock(),
        lambda m, r: regions[r],  # type: ignore[arg-type,return-value]
        read=google_read(get, PROJECT),
    )
    tick(dispatcher, manager)
    assert asked == [f"/compute/v1/projects/{PROJECT}/zones/us-east5-b/reservations/res"]
    assert any("is not there: a pool consumes a reservation of its own zone" in line for line in said), said


def test_a_reservation_in_a_project_the_manager_does_not_allow_is_refused_before_any_request() -> None:
    assert parse_reservation("eu/reserved=zones/europe-west4-a/reservations/r", PROJECT) == (
        ("eu", "reserved"),
        ReservationRef(PROJECT, "europe-west4-a", "r"),
    )
    shared = "eu/reserved=projects/shared-project/zones/europe-west4-a/reservations/r"
    with pytest.raises(ReservationSpecError, match="in project shared-project, which the keeper may not read in"):
        parse_reservation(shared, PROJECT)
    assert parse_reservation(shared, PROJECT, ["shared-project"])[1].project == "shared-project"
    for bad in ("eu=zones/europe-west4-a/reservations/r", "eu/reserved=r", "eu/reserved=zones/../reservations/r"):
        with pytest.raises(ReservationSpecError, match="is not REGION/RUNG="):
            parse_reservation(bad, PROJECT)
    asked: list[str] = []

    def get(path: str) -> tuple[int, dict[str, Any]]:
        asked.append(path)
        return 200, {}

    read = google_read(get, PROJECT)
    with pytest.raises(RoomUnread, match="not one the manager allows"):
        read(Key("eu", "reserved", "a3-highgpu-8g:2"), ReservationRef("shared-project", "europe-west4-a", "r"))
    assert asked == []


def test_a_tpu_job_is_planned_without_advice_by_design_and_not_raced() -> None:
    """The keeper asks Google nothing for a TPU shape (no TPU availability in advice.capacity): no POST is sent, the
    plan is no race, and the ledger orders the regions (europe-west4 granted this shape before)."""
    manager, said, posts = Fake({WL: workload()}), [], []
    regions = {name: region(["dws"]) for name in REGIONS}

    def post(path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        posts.append(path)
        return 200, {"recommendations": [{"scores": {"obtainability": 0.9}}]}

    dispatcher = Dispatcher(
        manager,
        DispatchSettings(),
        google_advise(post, PROJECT),
        said.append,
        Clock(),
        lambda m, r: regions[r],  # type: ignore[arg-type,return-value]
    )
    ledger = Ledger()
    for _ in range(3):
        ledger.record(Key("europe-west4", "dws", SHAPE), T0 - 600.0, GRANTED, T0 - 540.0)
        ledger.record(Key("us-east5", "dws", SHAPE), T0 - 600.0, FAILED, T0 - 590.0)
    dispatcher.ledger = ledger
    tick(dispatcher, manager)
    assert posts == []
    _, advice = stored(manager)
    assert not advice.race, advice
    assert manager.applies[-1][1]["status"]["nominatedClusterNames"][0] == "europe-west4"
    assert {p.source for p in advice.pairs} == {f"{cs.LEDGER} (no advice: {NO_TPU_ADVICE})"}, advice.pairs
    assert any("ordered by the reservation reads and planb's ledger" in line for line in said), said


def test_planb_regions_keep_refuses_a_reservation_in_a_project_it_does_not_allow_before_any_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:9'}}]\n"
        "users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
    )
    shared = "us-east5/reserved=projects/victim-project/zones/us-east5-b/reservations/x"
    argv = ["regions", "keep", "--once", "--dispatch", "--kubeconfig", str(kubeconfig), "--advice-url"]
    code = cli.main([*argv, "http://127.0.0.1:9", "--project", PROJECT, "--reservation", shared])
    said = capsys.readouterr().err
    assert code != 0 and "is in project victim-project, which the keeper may not read in" in said, said
    assert "Fix: add --reservation-project victim-project" in said
