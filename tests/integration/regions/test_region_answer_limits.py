"""A region's API server that answers slowly or hugely costs that region one tick, never the keeper or `planb status`
(before, a slow or huge answer from a region stalled both). Each request to a region has an overall deadline and a
size cap (planb.kube_limits, set by $PLANB_REGION_DEADLINE_S and $PLANB_REGION_MAX_BYTES; here 1 s and 64 KiB for the
region a test makes slow or huge); urllib3's read timeout alone bounds each socket read, so a server sending a byte
every 0.2 s never timed out.

The servers are on 127.0.0.1, run by the test: one trickles (its body, its status line and headers, or its TLS
handshake) or answers more than the cap; the other answers as a region with nothing of the job. The manager is in
memory: the keeper and `planb status` reach each region through planb.regions.access.connection.region_kube,
as they do.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import yaml

from planb.kube import Kube, KubeLimitError
from planb.kube_limits import Limits
from planb.kubeconfig import Connection
from planb.local.tls import ServingCert, ensure_serving_cert
from planb.regions.access import kueue_objects as ko
from planb.regions.access.connection import DEADLINE_ENV, KUEUE, MAX_BYTES_ENV, region_kube
from planb.regions.keeper import origin as origin_mod
from planb.regions.keeper import quarantine, reads
from planb.regions.keeper.tick import Keeper, KeeperSettings
from planb.status import gather
from planb.status import regions as status_regions
from tests.support.integration.loopback_json import Answer, handshake_trickler, json_server

Obj = dict[str, Any]
RAY = "/apis/ray.io/v1"
ORIGIN = "planb-mgr"
CAP = 64 * 1024
WORKLOAD = "rayjob-job-1-abcde"
MANAGER_JOB = f"{RAY}/namespaces/default/rayjobs/job-1"
CONFIG = f"{KUEUE}/multikueueconfigs/planb-regions"
STATE = "/api/v1/namespaces/kueue-system/configmaps/planb-regions-keeper"
#: A generous sanity bound on an answer cut at a 1 s deadline (the trickle would last 30 s).
WELL_WITHIN_S = 10.0


def slow(path: str) -> Answer:
    """One byte every 0.2 s: 30 s for the body, each byte well within any read timeout."""
    return Answer(body=b'{"items": []}' + b" " * 200, trickle_s=0.2)


def huge(path: str) -> Answer:
    """A valid list padded to four times the cap, its length undeclared (read until the server closes)."""
    return Answer(body=b'{"items": []}' + b" " * (4 * CAP), declare_length=False)


def region_copy() -> Obj:
    check = {"name": "dws-prov", "state": "Pending", "message": "Waiting for resources"}
    meta = {"namespace": "default", "name": WORKLOAD, "uid": "copy-uid", "labels": {ko.ORIGIN: ORIGIN}}
    return {"metadata": meta, "status": {"admissionChecks": [check]}}


def clean(path: str) -> Answer:
    """A region with nothing of the job: its lists empty, the job's RayJob gone (404), the Workload's copy waiting."""
    bare = path.split("?", 1)[0]
    if bare == f"{KUEUE}/namespaces/default/workloads/{WORKLOAD}":
        return Answer(body=json.dumps(region_copy()).encode())
    if bare.rsplit("/", 1)[-1] in ("workloads", "rayjobs", "rayclusters"):
        return Answer(body=b'{"kind": "List", "items": []}')
    return Answer(404, json.dumps({"kind": "Status", "code": 404, "message": "not found"}).encode())


@pytest.fixture
def cert(tmp_path: Path) -> ServingCert:
    return ensure_serving_cert(tmp_path / "region-pki", common_name="planb-test-region")


@pytest.fixture
def limits_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DEADLINE_ENV, "1")
    monkeypatch.setenv(MAX_BYTES_ENV, "64Ki")


#: A region that answers as it should is given time to, however loaded the machine (this tier may run at
#: SCHED_IDLE beside the e2e stack): only the regions a test makes slow get the 1 s deadline, or the small cap.
GENEROUS = Limits(60.0, 64 << 20, DEADLINE_ENV, MAX_BYTES_ENV)
SHORT = Limits(1.0, 64 << 20, DEADLINE_ENV, MAX_BYTES_ENV)
SMALL = Limits(60.0, CAP, DEADLINE_ENV, MAX_BYTES_ENV)


def kube(url: str, cert: ServingCert, limits: Limits = SHORT) -> Kube:
    conn = Connection(server=url, ca_data=cert.ca_crt.read_text(), token="region-token")
    return Kube(Path("Secret kueue-system/us-east5-multikueue"), conn, limits)


def timed(call: Callable[[], object]) -> tuple[KubeLimitError, float]:
    start = time.monotonic()
    with pytest.raises(KubeLimitError) as caught:
        call()
    return caught.value, time.monotonic() - start


def assert_too_slow(exc: KubeLimitError, path: str) -> None:
    assert exc.limit == "deadline" and exc.status == 0, exc
    assert f"GET {path} was not answered whole within 1 s" in str(exc)
    assert "us-east5-multikueue" in str(exc) and "https://127.0.0.1:" in str(exc)  # the region's Secret and server
    assert f"Fix: see why its API server or the network to it is slow, or raise {DEADLINE_ENV}" in str(exc)


# ---------------------------------------------------------------------------------------------- the client alone
def test_a_body_trickled_a_byte_at_a_time_on_a_kept_connection_is_cut_at_the_deadline(cert: ServingCert) -> None:
    with json_server(cert, lambda path: slow(path) if path == "/slow" else clean(path)) as url:
        client = kube(url, cert, GENEROUS)
        assert client.items(f"{RAY}/rayclusters") == []  # read whole; the connection is kept for the next request
        client.limits = SHORT
        exc, took = timed(lambda: client.get("/slow"))
        assert client.http.connection_from_url(url).num_connections == 1  # the trickle came on the kept one
    assert_too_slow(exc, "/slow")
    assert took < WELL_WITHIN_S


def test_a_status_line_and_headers_trickled_are_cut_at_the_deadline(cert: ServingCert) -> None:
    with json_server(cert, lambda path: Answer(trickle_s=0.2, trickle_headers=True)) as url:
        exc, took = timed(lambda: kube(url, cert).get("/headers"))
    assert_too_slow(exc, "/headers")
    assert took < WELL_WITHIN_S


def test_a_tls_handshake_trickled_is_cut_at_the_deadline(cert: ServingCert) -> None:
    with handshake_trickler(every_s=0.2) as url:
        exc, took = timed(lambda: kube(url, cert).get("/handshake"))
    assert_too_slow(exc, "/handshake")
    assert took < WELL_WITHIN_S


@pytest.mark.parametrize("declare_length", [True, False], ids=["declared", "undeclared"])
def test_an_answer_over_the_cap_is_refused_without_reading_it_whole(cert: ServingCert, declare_length: bool) -> None:
    answer = Answer(body=b" " * (16 * CAP), declare_length=declare_length)
    with json_server(cert, lambda path: answer) as url:
        exc, _ = timed(lambda: kube(url, cert, SMALL).get("/huge"))
    assert exc.limit == "size" and exc.status == 0, exc
    assert f"GET /huge answered more than {CAP} bytes" in str(exc)
    assert f"raise {MAX_BYTES_ENV}" in str(exc) and "us-east5-multikueue" in str(exc)


# -------------------------------------------------------------------------------- the keeper and planb status
class Manager:
    """The manager's API in memory, as the keeper and `planb status` read it: each region an Active
    MultiKueueCluster whose kubeconfig Secret reaches its loopback server; the keeper's ConfigMap (asia-northeast1
    quarantined); the MultiKueueConfig; one Workload evicted while holding its quota, and its RayJob Suspending."""

    def __init__(self, servers: dict[str, str], cert: ServingCert) -> None:
        ca = base64.b64encode(cert.ca_crt.read_bytes()).decode()
        self.objects: dict[str, Obj] = {}
        self.clusters: list[Obj] = []
        for region, url in servers.items():
            source = {"kubeConfig": {"locationType": "Secret", "location": f"{region}-multikueue"}}
            active = {"conditions": [{"type": "Active", "status": "True"}]}
            cluster = {"metadata": {"name": region}, "spec": {"clusterSource": source}, "status": active}
            self.clusters.append(cluster)
            self.objects[f"{KUEUE}/multikueueclusters/{region}"] = cluster
            config = {
                "clusters": [{"name": region, "cluster": {"server": url, "certificate-authority-data": ca}}],
                "users": [{"name": region, "user": {"token": "region-token"}}],
                "contexts": [{"name": region, "context": {"cluster": region, "user": region}}],
                "current-context": region,
            }
            secret = {"data": {"kubeconfig": base64.b64encode(yaml.safe_dump(config).encode()).decode()}}
            self.objects[f"/api/v1/namespaces/kueue-system/secrets/{region}-multikueue"] = secret
        data = {origin_mod.ORIGIN_KEY: ORIGIN, quarantine.QUARANTINED_KEY: json.dumps(["asia-northeast1"])}
        self.objects[STATE] = {"metadata": {"resourceVersion": "3"}, "data": data}
        listed = [r for r in servers if r != "asia-northeast1"]
        self.objects[CONFIG] = {"metadata": {"resourceVersion": "7"}, "spec": {"clusters": listed}}
        self.objects[MANAGER_JOB] = {
            "metadata": {"namespace": "default", "name": "job-1", "uid": "rj-uid", "resourceVersion": "41"},
            "spec": {"suspend": True, "managedBy": "kueue.x-k8s.io/multikueue"},
            "status": {"jobDeploymentStatus": "Suspending"},
        }
        owner = {"apiVersion": "ray.io/v1", "kind": "RayJob", "name": "job-1", "uid": "rj-uid", "controller": True}
        conditions = [{"type": c, "status": "True"} for c in ("Evicted", "QuotaReserved")]
        self.workload: Obj = {
            "metadata": {"namespace": "default", "name": WORKLOAD, "uid": "wl-1", "ownerReferences": [owner]},
            "status": {
                "conditions": conditions,
                "admissionChecks": [{"name": "planb-regions", "state": "Retry"}],
                "nominatedClusterNames": listed,
            },
        }
        self.patches: list[tuple[str, Obj]] = []

    def get(self, path: str, query: dict[str, str] | None = None) -> Obj | None:
        return self.objects.get(path)

    def items(self, path: str, query: dict[str, str] | None = None) -> list[Obj]:
        return {f"{KUEUE}/multikueueclusters": self.clusters, f"{KUEUE}/workloads": [self.workload]}.get(path, [])

    def merge_patch(self, path: str, body: Obj) -> Obj:
        self.patches.append((path, body))
        return body

    def released(self) -> bool:
        return any(path == f"{MANAGER_JOB}/status" for path, _ in self.patches)

    def let_back(self) -> bool:
        return any("asia-northeast1" in body["spec"]["clusters"] for path, body in self.patches if path == CONFIG)


def one_tick(manager: Manager) -> list[str]:
    """One keeper tick, release_after 0: a region read clean lets the quota go, and a quarantined one back, at once."""
    said: list[str] = []
    settings = KeeperSettings(lost_after=300, release_after=0)
    Keeper(manager, settings, say=said.append, clock=lambda: 1000.0).tick()  # type: ignore[arg-type]
    return said


class Regions:
    """The regions' servers: europe-west4 clean; us-east5 and asia-northeast1 on one answering as `start` says."""

    def __init__(self, stack: ExitStack, cert: ServingCert) -> None:
        self.stack, self.cert = stack, cert
        self.seen: dict[str, list[tuple[str, str]]] = {"europe-west4": [], "us-east5": []}
        self.servers = {"europe-west4": stack.enter_context(json_server(cert, clean, self.seen["europe-west4"]))}

    def start(self, bad: Callable[[str], Answer], *names: str) -> dict[str, str]:
        """The servers of `names`, us-east5 and asia-northeast1 answering `bad`, in that order."""
        url = self.stack.enter_context(json_server(self.cert, bad, self.seen["us-east5"]))
        self.servers.update({"us-east5": url, "asia-northeast1": url})
        return {name: self.servers[name] for name in names}


@pytest.fixture
def regions(cert: ServingCert) -> Iterator[Regions]:
    with ExitStack() as stack:
        yield Regions(stack, cert)


ALL = ("us-east5", "europe-west4", "asia-northeast1")


@pytest.fixture
def limited(monkeypatch: pytest.MonkeyPatch) -> dict[str, Limits]:
    """The keeper and `planb status` reach each region with planb.regions.access.connection.region_kube and
    the limits this mapping gives it (GENEROUS for a region it leaves out); the environment's way in: the last test
    below."""
    by_region: dict[str, Limits] = {}

    def reach(manager: Kube, region: str) -> Kube:
        return region_kube(manager, region, by_region.get(region, GENEROUS))

    monkeypatch.setattr(reads, "region_kube", reach)  # the keeper reaches a region in its one reading step
    monkeypatch.setattr(gather, "region_kube", reach)
    return by_region


def test_a_clean_region_set_releases_and_lets_the_quarantined_region_back(
    regions: Regions, cert: ServingCert, limited: dict[str, Limits]
) -> None:
    """The control: the same tick with every region answering clean releases the quota and lets asia back."""
    manager = Manager(regions.start(clean, *ALL), cert)
    said = one_tick(manager)
    assert manager.released() and manager.let_back(), said


@pytest.mark.parametrize("bad", [slow, huge], ids=["trickled", "over-the-cap"])
def test_a_slow_or_huge_region_is_unreadable_for_the_tick_and_the_others_are_read(
    regions: Regions, cert: ServingCert, limited: dict[str, Limits], bad: Callable[[str], Answer]
) -> None:
    limited.update({"us-east5": SHORT if bad is slow else SMALL, "asia-northeast1": SHORT if bad is slow else SMALL})
    manager = Manager(regions.start(bad, *ALL), cert)
    start = time.monotonic()
    said = one_tick(manager)
    assert time.monotonic() - start < 3 * WELL_WITHIN_S  # three reads of the bad server, each cut at 1 s
    limit = "answer too slow" if bad is slow else "answer too large"
    # The release path: us-east5 unreadable, so the quota stays held; europe-west4 read (both its RayJob and its
    # RayClusters asked for) and never said unreadable.
    assert any(line.startswith(f"us-east5 answers Kueue but not planb: 0 {limit}: ") for line in said), said
    assert not manager.released(), manager.patches
    assert "not releasing the quota of default/job-1 yet: us-east5 answers Kueue but was not read by planb" in said
    asked = [path for path, _ in regions.seen["europe-west4"]]
    assert f"{RAY}/namespaces/default/rayjobs/job-1" in asked and f"{RAY}/namespaces/default/rayclusters" in asked
    assert not any("europe-west4" in line for line in said), said
    # The rejoin path: the quarantined asia-northeast1 answers the same way, so it stays out of the config.
    prefix = f"asia-northeast1 answers Kueue again but not planb yet: 0 {limit}: "
    assert any(line.startswith(prefix) for line in said), said
    assert not manager.let_back(), manager.patches


def test_planb_status_shows_a_slow_region_unreadable_with_the_reason_and_the_other_region_as_it_stands(
    regions: Regions, cert: ServingCert, limited: dict[str, Limits]
) -> None:
    limited["us-east5"] = SHORT
    manager = Manager(regions.start(slow, "us-east5", "europe-west4"), cert)
    start = time.monotonic()
    dispatch = status_regions.dispatch(manager.workload, gather.dispatch_reads(manager, manager.workload))  # type: ignore[arg-type]
    assert time.monotonic() - start < WELL_WITHIN_S
    states = {copy.region: copy for copy in dispatch.regions}
    east = states["us-east5"].state
    assert east.startswith("unreadable: 0 answer too slow: Secret kueue-system/us-east5-multikueue (https://"), east
    assert "was not answered whole within 1 s" in east and DEADLINE_ENV in east
    west = states["europe-west4"]
    assert (west.state, west.checks) == ("waiting", ["dws-prov=Pending: Waiting for resources"])
    assert "europe-west4 waiting (dws-prov=Pending: Waiting for resources)" in dispatch.line()


def test_region_kube_takes_its_limits_from_the_environment(cert: ServingCert, limits_env: None) -> None:
    with json_server(cert, clean) as url:
        manager = Manager({"us-east5": url}, cert)
        limits = region_kube(manager, "us-east5").limits  # type: ignore[arg-type]
    assert limits is not None and (limits.deadline_s, limits.max_bytes) == (1.0, CAP)
