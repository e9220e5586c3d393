"""planb.regions.calendar.offers: a job's shape as calendar mode reserves it, the answer read, the reserve command."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from planb import cli
from planb.catalog import profiles
from planb.errors import EXIT_USAGE
from planb.regions.calendar.offers import CalendarOffer, calendar_request, reserve_command, tpu_spec


def test_a_multi_host_slice_is_batch_a_single_host_one_serving_and_a_gpu_shape_has_no_spec() -> None:
    big, one = profiles.get("tpu-v6e-4x4"), profiles.get("tpu-v6e-1x1")
    spec = tpu_spec(f"{big.machine_type}:{big.hosts_per_slice}")
    assert spec is not None and (spec.workload_type, spec.chips) == ("BATCH", big.chips_per_slice)
    single = tpu_spec(f"{one.machine_type}:1")
    assert single is not None and (single.workload_type, single.chips) == ("SERVING", 1)
    assert tpu_spec("a3-highgpu-8g:2") is None


def test_the_request_asks_for_whole_days_within_google_s_bounds() -> None:
    spec = tpu_spec("ct6e-standard-4t:4")
    assert spec is not None
    body = calendar_request(spec, 0.0, 3)
    assert body["futureResourcesSpecs"]["planb"]["timeRangeSpec"] == {
        "startTimeNotEarlierThan": "1970-01-01T00:00:00Z",
        "minDuration": "259200s",
    }
    for days in (0, 91):
        with pytest.raises(ValueError, match="1 to 90 days"):
            calendar_request(spec, 0.0, days)


def test_an_answer_without_a_location_says_the_other_zones_and_a_family_gcloud_lacks_gets_api_values() -> None:
    answer = {
        "recommendations": [
            {"recommendationsPerSpec": {"planb": {"otherLocations": {"zones/us-east5-a": {"status": "NO_CAPACITY"}}}}}
        ]
    }
    assert CalendarOffer.from_answer("us-east5", answer).why == "no zone recommended (us-east5-a NO_CAPACITY)"
    assert CalendarOffer.from_answer("us-east5", {}).why == "the answer holds no recommendation for the job's spec"
    offer = CalendarOffer("us-central1", "us-central1-c", "2027-01-01T00:00:00Z", "2027-01-03T00:00:00Z")
    assert offer.duration_s == 2 * 86400
    tpu7x = next(p for p in profiles.PROFILES.values() if p.generation == "tpu7x" and p.hosts_per_slice > 1)
    spec = tpu_spec(f"{tpu7x.machine_type}:{tpu7x.hosts_per_slice}")
    assert spec is not None
    command = reserve_command(offer, spec, "p", "planb-job")
    assert command.startswith("futureReservations.insert in projects/p/zones/us-central1-c")
    assert "VM_FAMILY_CLOUD_TPU_POD_SLICE_TPU7X" in command and "gcloud" not in command


def test_keep_refuses_the_calendar_bound_without_where_to_ask(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`planb regions keep --calendar-after` asks advice.calendarMode at --advice-url in --project: without them it
    is a usage error at start, before the keeper looks at anything."""
    config = {
        "current-context": "c",
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
    }
    (tmp_path / "kubeconfig").write_text(yaml.safe_dump(config))
    argv = ["regions", "keep", "--kubeconfig", str(tmp_path / "kubeconfig"), "--calendar-after", "3600", "--once"]
    assert cli.main(argv) == EXIT_USAGE
    assert "--calendar-after needs --advice-url and --project" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stopped:  # Google's bounds: 1 to 90 days
        cli.main([*argv, "--calendar-days", "91"])
    assert stopped.value.code == EXIT_USAGE
    assert "91: calendar mode reserves 1 to 90 days" in capsys.readouterr().err
