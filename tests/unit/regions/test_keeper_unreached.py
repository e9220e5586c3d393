"""A region Kueue does not reach because of the manager's side (its MultiKueue token expired, or Kueue
is answered 401) is not taken as lost: not quarantined, and it keeps blocking the release
(planb.regions.keeper.unreached). Fakes from tests/support/unit/keeper_fakes.py; the token is a real JWT shape in a real
region kubeconfig Secret."""

from __future__ import annotations

from planb.regions.keeper import release
from planb.regions.keeper.options import KeeperSettings
from planb.regions.keeper.unreached import token_expiry
from tests.support.unit.keeper_fakes import (
    CONFIG,
    KUEUE,
    FakeKube,
    keeper_state,
    make,
    manager,
    manager_workload,
    released,
    ticks,
)
from tests.support.unit.region_tokens import jwt, kubeconfig_data

SECRET = "/api/v1/namespaces/kueue-system/secrets/a-multikueue"


def with_token(kube: FakeKube, token: str, message: str = "dial tcp: connection refused") -> FakeKube:
    """Region a: not Active with `message`, its kubeconfig Secret holding `token`."""
    path = f"{KUEUE}/multikueueclusters/a"
    kube.objects[path]["spec"] = {
        "clusterSource": {"kubeConfig": {"locationType": "Secret", "location": "a-multikueue"}}
    }
    kube.objects[path]["status"]["conditions"][0].update(reason="ClientConnectionFailed", message=message)
    kube.objects[SECRET] = {"metadata": {"name": "a-multikueue"}, "data": kubeconfig_data(token)}
    return kube


def evicted(regions: dict[str, FakeKube], token: str, message: str = "dial tcp: connection refused") -> FakeKube:
    kube = manager(
        regions={"a": False, "b": True}, state=keeper_state(), workload=manager_workload("Evicted", "QuotaReserved")
    )
    regions["b"] = FakeKube({})
    return with_token(kube, token, message)


def test_a_region_whose_token_expired_is_not_quarantined_and_blocks_the_release(regions: dict[str, FakeKube]) -> None:
    """Fails on the code before planb.regions.keeper.unreached: region a was quarantined at 10 s and the job released at
    20 s, while a's nodes, out of the keeper's reach only because of the expired token, still ran it."""
    kube = evicted(regions, jwt(exp=1_000_000_000))
    said: list[str] = []
    clock = [0.0]
    ticks(make(kube, said, clock), clock, 0, 10, 20, 30)
    assert not [p for p, _ in kube.patches if p == CONFIG], said
    assert not released(kube), said
    line = (
        "not taking a as lost: its MultiKueue token (Secret kueue-system/a-multikueue) expired at 2001-09-09T01:46:40Z"
    )
    taken = [s for s in said if s.startswith(line)]
    assert len(taken) == 1 and "run playbooks/regions.yml" in taken[0], said  # said once
    assert any(
        "not releasing the quota of default/job-1 yet: a is not Active in Kueue, not taken as lost" in s for s in said
    )


def test_a_region_answering_401_is_not_quarantined(regions: dict[str, FakeKube]) -> None:
    kube = evicted(regions, "not-a-jwt", message="the server has asked for the client to provide credentials (401)")
    said: list[str] = []
    clock = [0.0]
    ticks(make(kube, said, clock), clock, 0, 10, 20)
    assert not [p for p, _ in kube.patches if p == CONFIG] and not released(kube), said
    taken = [
        s for s in said if s.startswith("not taking a as lost: Kueue's connection to it is refused as unauthorized")
    ]
    assert len(taken) == 1 and "run playbooks/regions.yml" in taken[0], said


def test_a_region_whose_token_is_valid_is_still_lost(regions: dict[str, FakeKube]) -> None:
    """The control: a token valid until 9999 and a refused connection: the region is lost, as before."""
    kube = evicted(regions, jwt(exp=253402300000))
    said: list[str] = []
    clock = [0.0]
    ticks(make(kube, said, clock), clock, 0, 10, 20)
    assert (CONFIG, {"metadata": {"resourceVersion": "7"}, "spec": {"clusters": ["b"]}}) in kube.patches, said
    assert released(kube), said


def test_a_tokens_expiry_is_read_only_from_a_jwt_with_a_numeric_exp() -> None:
    assert token_expiry(jwt(exp=1_000_000_000)) == 1_000_000_000.0
    for token in ["abc", "a.b.c", jwt(exp="soon"), jwt(exp=True), jwt(exp=None), "a.!!!.c"]:
        assert token_expiry(token) is None, token


def test_the_default_lost_after_is_kueues_worker_lost_timeout() -> None:
    assert KeeperSettings().lost_after == 900.0
    assert release.release_blocker({}, {}, "o", region_clusters={}) == ""
