"""Google's capacity advice as planb asks and reads it (planb.regions.dispatcher.google_advice): the request per
pair, the scores, and why there is none when Google refuses or does not answer. The emulator's own answers:
tests/integration/regions."""

from __future__ import annotations

from typing import Any

from planb import paths
from planb.regions.dispatcher import google_advice as ad
from planb.regions.dispatcher.ledger import Key, shape_parts

#: A3 Spot: a GPU shape, which advice.capacity serves (a TPU shape is never asked about: see below).
SPOT = Key("us-east5", "spot", "a3-highgpu-8g:4")


def _post(status: int, body: dict[str, Any], sent: list[tuple[str, dict[str, Any]]]) -> ad.Post:
    def post(path: str, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        sent.append((path, request))
        return status, body

    return post


def test_ask_sends_the_pair_s_machine_type_count_and_model_and_reads_the_scores() -> None:
    sent: list[tuple[str, dict[str, Any]]] = []
    answer = {"recommendations": [{"scores": {"obtainability": 0.8, "estimatedUptime": "7200s"}}]}
    got = ad.ask(_post(200, answer, sent), "p", SPOT, ["us-east5-a"])
    assert got == ad.Advice(0.8, 7200.0)
    ((path, body),) = sent
    assert path == "/compute/v1/projects/p/regions/us-east5/advice/capacity"
    assert body["size"] == 4 and body["instanceProperties"]["scheduling"]["provisioningModel"] == "SPOT"
    assert body["instanceFlexibilityPolicy"]["instanceSelections"]["spot"]["machineTypes"] == ["a3-highgpu-8g"]


def test_a_refusal_is_missing_advice_with_google_s_code_status_and_message() -> None:
    error = {"error": {"code": 403, "status": "PERMISSION_DENIED", "message": "Required 'compute.advice.capacity'"}}
    got = ad.ask(_post(403, error, []), "p", SPOT, [])
    assert got.obtainability is None
    assert got.missing == "403 PERMISSION_DENIED: Required 'compute.advice.capacity'"
    assert ad.ask(_post(404, {}, []), "p", SPOT, []).missing == "404"


def test_no_answer_at_all_is_missing_advice_too() -> None:
    def down(path: str, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        raise ConnectionRefusedError(111, "Connection refused")

    assert ad.ask(down, "p", SPOT, []).missing.startswith("no answer: ")


def test_a_tpu_pair_is_not_asked_and_has_no_advice_by_design_not_a_failed_call() -> None:
    """Google: "When you send a request to the advice.capacity API, you can't view the availability of TPUs"
    (view-vm-availability, Limitations). So nothing is sent for a TPU shape, and the advice says so, by design."""
    for machine_type in ("ct6e-standard-4t", "ct5lp-hightpu-4t", "ct5p-hightpu-4t", "tpu7x-standard-4t"):
        sent: list[tuple[str, dict[str, Any]]] = []
        got = ad.ask(_post(200, {}, sent), "p", Key("us-east5", "dws", f"{machine_type}:4"), ["us-east5-a"])
        assert sent == [] and got.by_design and got.obtainability is None, (machine_type, got)
        assert got.missing == ad.NO_TPU_ADVICE and "view-vm-availability" in got.missing
    assert not ad.Advice.absent("403 PERMISSION_DENIED").by_design  # a failed call is no design


def test_a_reservation_rung_is_asked_about_as_standard_vms_not_reservation_bound_ones() -> None:
    """A pool consuming an ordinary specific reservation makes STANDARD VMs; RESERVATION_BOUND is the model of VMs
    made from a future reservation in calendar mode (about-reservation-bound-vms)."""
    assert ad.PROVISIONING_MODELS == {
        "reservation": "STANDARD",
        "on-demand": "STANDARD",
        "dws": "FLEX_START",
        "spot": "SPOT",
    }
    sent: list[tuple[str, dict[str, Any]]] = []
    ad.ask(_post(200, {}, sent), "p", Key("us-east5", "reservation", "a3-highgpu-8g:2"), [])
    assert sent[0][1]["instanceProperties"]["scheduling"]["provisioningModel"] == "STANDARD"


def test_a_shape_without_a_count_is_one_vm() -> None:
    assert shape_parts("ct6e-standard-4t:4") == ("ct6e-standard-4t", 4)
    assert shape_parts("n2-standard-8") == ("n2-standard-8", 1)


def test_a_region_or_project_that_is_not_a_dns_name_is_not_asked_about() -> None:
    """A region (a MultiKueueCluster's name, from the MultiKueueConfig) or project went into the
    request's path unquoted; ``..`` there reaches another resource. Now nothing is sent, and the advice says why."""
    for region, project in (("..", "p"), ("us-east5/../x", "p"), ("us-east5", "../p"), ("us-east5", "p?x=1")):
        sent: list[tuple[str, dict[str, Any]]] = []
        got = ad.ask(_post(200, {}, sent), project, Key(region, "spot", SPOT.shape), ["us-east5-a"])
        assert sent == [], sent
        what, name = ("region", region) if region != "us-east5" else ("project", project)
        assert got == ad.Advice.absent(
            f"not asked: the {what} {name!r} is not a DNS-1123 name, as a Google Cloud {what} is"
        )


def test_the_documents_give_the_advice_answer_caps_as_the_code_has_them() -> None:
    limits = ad.ADVICE_LIMITS
    for doc in ("security.md", "regions.md"):
        text = " ".join((paths.REPO / "docs" / doc).read_text().split())
        assert f"within {limits.deadline_s:g} s" in text and f"{limits.max_bytes >> 20} MiB" in text, doc
