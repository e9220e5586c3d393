"""Google's advice.capacity answer is read under planb's caps: an overall deadline and a decoded size
cap (planb.regions.dispatcher.google_advice.ADVICE_LIMITS, read as planb.kube_limits reads a region's answers). An
answer too large or too slow is no advice for the pair, with why, never a keeper held or its memory filled; one within
them is read as before. Servers on 127.0.0.1, run by the test (tests/support/integration/loopback_json.py)."""

from __future__ import annotations

import json
import time

import pytest

from planb.kube import KubeLimitError
from planb.kube_limits import Limits
from planb.regions.dispatcher import google_advice as ad
from planb.regions.dispatcher.ledger import Key
from tests.support.integration.loopback_json import Answer, json_server

#: A GPU shape: advice.capacity is never asked about a TPU one
#: (planb.regions.dispatcher.google_advice.no_tpu_advice).
KEY = Key("us-east5", "dws", "a3-highgpu-8g:2")
SCORES = {"recommendations": [{"scores": {"obtainability": 0.7}}]}
CAP = 64 * 1024
#: A generous sanity bound on an answer cut at a 1 s deadline (the trickle would last 30 s).
WELL_WITHIN_S = 10.0


def huge(path: str) -> Answer:
    """A valid answer padded to twice the default cap (1 MiB), its length undeclared (read until the server closes):
    before the fix it was read whole and its score used."""
    return Answer(body=json.dumps(SCORES).encode() + b" " * (2 << 20), declare_length=False)


def test_an_answer_past_the_size_cap_is_not_read_and_the_pair_has_no_advice() -> None:
    with json_server(None, huge) as url:
        post = ad.http_post(url)
        with pytest.raises(KubeLimitError) as caught:
            post("/compute/v1/projects/p/regions/us-east5/advice/capacity", {})
        got = ad.ask(post, "p", KEY, ["us-east5-a"])
    assert caught.value.limit == "size"
    assert f"answered more than {1 << 20} bytes, the most planb reads of an advice answer" in str(caught.value)
    assert got.obtainability is None
    assert got.missing.startswith("answer not read: 0 answer too large: --advice-url: POST /compute/v1/projects/p/")
    assert "Fix: see what the advice server answers" in got.missing


def test_an_answer_that_trickles_is_cut_at_the_deadline() -> None:
    def slow(path: str) -> Answer:
        return Answer(body=json.dumps(SCORES).encode() + b" " * 200, trickle_s=0.2)

    with json_server(None, slow) as url:
        start = time.monotonic()
        got = ad.ask(ad.http_post(url, limits=Limits(1.0, CAP)), "p", KEY, ["us-east5-a"])
        took = time.monotonic() - start
    assert took < WELL_WITHIN_S, took
    assert got.obtainability is None
    assert got.missing.startswith("answer not read: 0 answer too slow: --advice-url: POST ")
    assert "was not answered whole within 1 s" in got.missing


def test_an_answer_within_the_caps_is_read_and_the_default_caps_are_10_s_and_1_mib() -> None:
    assert (ad.ADVICE_LIMITS.deadline_s, ad.ADVICE_LIMITS.max_bytes) == (10.0, 1 << 20)
    with json_server(None, lambda path: Answer(body=json.dumps(SCORES).encode())) as url:
        assert ad.ask(ad.http_post(url), "p", KEY, ["us-east5-a"]) == ad.Advice(0.7)


def test_an_answer_nested_deeper_than_the_parser_goes_is_no_advice_for_the_pair() -> None:
    """200 KB of lists one inside the other: json.loads raises RecursionError (not ValueError), which went out of
    `ask` and stopped the dispatch before the fix; now it is an answer without a score, as one that is not JSON."""
    deep = b"[" * 100_000 + b"]" * 100_000
    with json_server(None, lambda path: Answer(body=deep)) as url:
        got = ad.ask(ad.http_post(url), "p", KEY, ["us-east5-a"])
    assert got == ad.Advice(None, None, "the answer holds no obtainability score")
