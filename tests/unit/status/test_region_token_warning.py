"""`planb status` on a MultiKueue manager warns before a region's MultiKueue token lapses: the
token in each region's kubeconfig Secret (a TokenRequest JWT, decoded unverified) that lapses within 24 h, or within
a quarter of its lifetime when that is less, or has lapsed, is named with its region, its Secret and the fix, in the
text report and in ``-o json`` (planb.status.regions.token_warnings). In-memory manager: the job-m fakes
(tests/support/shared/status_job.py) plus MultiKueueClusters and their Secrets, the kubeconfigs as the multikueue role
writes them."""

from __future__ import annotations

import argparse
import json
from typing import Any

import jsonschema
import pytest

from planb import paths
from planb.kube import KubeError
from planb.kube_objects import parse_time
from planb.status import cli as status_cli
from planb.status import gather
from planb.status import regions as status_regions
from tests.support.shared import status_job
from tests.support.unit.region_tokens import jwt, kubeconfig_data

Obj = dict[str, Any]
KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
T = parse_time(status_job.NOW)
DAY, HOUR = 86400.0, 3600.0
FIX = "Fix: run playbooks/regions.yml, which renews the region tokens"


#: Region -> (iat, exp): the role's 7-day tokens 5 h and 3 days from lapsing, one lapsed 1 h ago, and two 600-s tokens
#: (the role's least) with 100 s and 200 s left: a quarter of 600 s is 150 s.
TOKENS = {
    "us-east5": (T + 5 * HOUR + 30 - 7 * DAY, T + 5 * HOUR + 30),
    "europe-west4": (T + 3 * DAY - 7 * DAY, T + 3 * DAY),
    "asia-northeast1": (T - HOUR - 7 * DAY, T - HOUR),
    "us-central1": (T + 100 - 600, T + 100),
    "us-west4": (T + 200 - 600, T + 200),
}


class ManagerKube(status_job.JobKube):
    """job-m's manager, also a MultiKueue manager of the regions of TOKENS."""

    def get(self, path: str, query: dict[str, str] | None = None) -> Obj | None:
        for region, (iat, exp) in TOKENS.items():
            if path == f"{KUEUE}/multikueueclusters/{region}":
                source = {"kubeConfig": {"locationType": "Secret", "location": f"{region}-multikueue"}}
                return {"metadata": {"name": region}, "spec": {"clusterSource": source}}
            if path == f"/api/v1/namespaces/kueue-system/secrets/{region}-multikueue":
                return {"data": kubeconfig_data(jwt(iat=int(iat), exp=int(exp)))}
        return super().get(path, query)


def manager() -> ManagerKube:
    clusters = [{"metadata": {"name": region}} for region in TOKENS]
    return ManagerKube({**status_job.objects(), "/multikueueclusters": clusters})


def args(**over: Any) -> argparse.Namespace:
    base = {"all_namespaces": False, "namespace": "default", "job": None, "output": None, "timeline": None}
    return argparse.Namespace(**{**base, **over})


EXPECTED = [
    "WARNING region asia-northeast1: the MultiKueue token in Secret kueue-system/asia-northeast1-multikueue expired at "
    f"2026-11-29T09:15:00Z: Kueue and the regions keeper cannot reach asia-northeast1. {FIX}",
    "WARNING region us-central1: the MultiKueue token in Secret kueue-system/us-central1-multikueue expires at "
    f"2026-11-29T10:16:40Z, in 1 min: then Kueue and the regions keeper lose us-central1. {FIX}",
    "WARNING region us-east5: the MultiKueue token in Secret kueue-system/us-east5-multikueue expires at "
    f"2026-11-29T15:15:30Z, in 5 h 0 min: then Kueue and the regions keeper lose us-east5. {FIX}",
]


def test_status_warns_of_each_region_token_that_lapses_within_24_h_or_a_quarter_of_its_life(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    status_job.job_m(monkeypatch)  # the clock: NOW
    assert status_cli._once(manager(), args()) == 0  # type: ignore[arg-type]
    lines = capsys.readouterr().out.splitlines()
    assert lines[: len(EXPECTED) + 1] == [*EXPECTED, ""], lines[:5]
    assert not any("europe-west4" in line or "us-west4" in line for line in lines)
    assert lines[len(EXPECTED) + 1].startswith("JOB ")  # then the table, as before


def test_status_capacity_warns_first_too(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`planb status --capacity`, the manager's own view, says the same warnings before the ledger (stderr with -o)."""
    status_job.job_m(monkeypatch)
    assert status_cli._once(manager(), args(capacity=True)) == 0  # type: ignore[arg-type]
    lines = capsys.readouterr().out.splitlines()
    assert lines[: len(EXPECTED) + 1] == [*EXPECTED, ""], lines[:5]
    assert status_cli._once(manager(), args(capacity=True, output="json")) == 0  # type: ignore[arg-type]
    out, err = capsys.readouterr()
    assert err.splitlines() == EXPECTED and json.loads(out), err


def test_status_json_carries_the_warnings_and_stays_valid(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    status_job.job_m(monkeypatch)
    schema = json.loads((paths.REPO / "docs" / "status.schema.json").read_text())
    for job in (None, "job-m"):
        assert status_cli._once(manager(), args(job=job, output="json")) == 0  # type: ignore[arg-type]
        out, err = capsys.readouterr()
        doc = json.loads(out)
        jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(doc)
        assert [w["region"] for w in doc["warnings"]] == ["asia-northeast1", "us-central1", "us-east5"]
        assert doc["warnings"][2] == {
            "region": "us-east5",
            "secret": "kueue-system/us-east5-multikueue",
            "expires": "2026-11-29T15:15:30Z",
            "leftSeconds": 5 * 3600 + 30,
            "message": EXPECTED[2].removeprefix("WARNING "),
        }
        assert doc["warnings"][0]["leftSeconds"] == -3600
        assert err.splitlines() == EXPECTED, err  # beside the document, on stderr


def test_no_warning_without_multikueue_clusters_or_without_the_right_to_read_their_secrets(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    status_job.job_m(monkeypatch)
    assert status_regions.token_warnings(gather.region_tokens(status_job.JobKube(status_job.objects()))) == []  # type: ignore[arg-type]

    class Forbidden(ManagerKube):
        def get(self, path: str, query: dict[str, str] | None = None) -> Obj | None:
            if "/secrets/" in path:
                raise KubeError(403, "Forbidden", '{"message": "secrets is forbidden"}')
            return super().get(path, query)

    kube = Forbidden({**status_job.objects(), "/multikueueclusters": [{"metadata": {"name": "us-east5"}}]})
    assert status_regions.token_warnings(gather.region_tokens(kube)) == []  # type: ignore[arg-type]


def test_the_documents_give_the_warning_threshold_as_the_code_has_it() -> None:
    assert (status_regions.TOKEN_WARN_S, status_regions.TOKEN_WARN_FRACTION) == (24 * HOUR, 0.25)
    for doc in ("security.md", "regions.md", "pending-jobs.md"):
        text = " ".join((paths.REPO / "docs" / doc).read_text().split())
        assert "lapses within 24 h" in text, doc
    security = " ".join((paths.REPO / "docs" / "security.md").read_text().split())
    assert "within a quarter of its lifetime (`exp` - `iat`)" in security
