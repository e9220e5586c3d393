"""planb.kube_limits without a socket: the capped read, the deadline's clock and what it does to the sockets handed
to it, and what a limited planb.kube client refuses. The sockets and servers themselves:
tests/integration/regions/test_region_answer_limits.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from planb.kube import MAX_ERROR_TEXT, Kube, KubeError, KubeLimitError
from planb.kube_limits import Deadline, Limits, declared_too_large, read_capped, watched_pool_classes
from planb.kubeconfig import Connection
from planb.regions.access import kueue_objects as ko


def chunks(sizes: list[int], taken: list[int]) -> Iterator[bytes]:
    for i, size in enumerate(sizes):
        taken.append(i)
        yield b"x" * size


def test_an_answer_within_the_cap_is_joined_whole() -> None:
    taken: list[int] = []
    assert read_capped(chunks([3, 4, 3], taken), 10) == b"x" * 10
    assert read_capped(iter([]), 10) == b""


def test_reading_stops_at_the_first_chunk_past_the_cap() -> None:
    taken: list[int] = []
    assert read_capped(chunks([4, 4, 4, 4, 4], taken), 10) is None
    assert taken == [0, 1, 2]  # the third chunk passed it: the fourth and fifth were never asked for


@pytest.mark.parametrize(
    ("header", "too_large"), [(None, False), ("10", False), ("11", True), ("x", False), ("", False)]
)
def test_a_declared_length_over_the_cap_is_refused_before_the_body(header: str | None, too_large: bool) -> None:
    assert declared_too_large(header, 10) is too_large


class Timer:
    """In place of threading.Timer: started by hand (`fire`), no thread."""

    made: ClassVar[list[Timer]] = []

    def __init__(self, seconds: float, function: Callable[[], None]) -> None:
        self.seconds, self.function = seconds, function
        self.daemon = False
        self.started = self.cancelled = False
        Timer.made.append(self)

    def start(self) -> None:
        self.started = True

    def cancel(self) -> None:
        self.cancelled = True

    def fire(self) -> None:
        self.function()


class Sock:
    """A socket's two calls the deadline makes."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def shutdown(self, how: int) -> None:
        self.calls.append("shutdown")

    def close(self) -> None:
        self.calls.append("close")


def deadline() -> tuple[Deadline, Timer]:
    clock = Deadline(1.5, timer=Timer)  # type: ignore[arg-type]
    return clock, Timer.made[-1]


def test_at_the_deadline_every_socket_held_is_shut_down_and_closed_when_the_request_ends() -> None:
    clock, timer = deadline()
    assert timer.seconds == 1.5 and timer.started and timer.daemon
    first, second = Sock(), Sock()
    clock.hold(first)
    clock.hold(second)
    assert first.calls == []
    timer.fire()
    assert clock.expired and first.calls == second.calls == ["shutdown"]
    assert clock.finish() is True
    assert timer.cancelled and first.calls == second.calls == ["shutdown", "close"]
    assert clock.finish() is True and first.calls == ["shutdown", "close"]  # once


def test_a_socket_held_after_the_deadline_is_shut_down_at_once() -> None:
    clock, timer = deadline()
    timer.fire()
    late = Sock()
    clock.hold(late)
    assert late.calls == ["shutdown"]


def test_a_request_ended_in_time_is_not_expired_by_a_timer_that_fires_after() -> None:
    clock, timer = deadline()
    sock = Sock()
    clock.hold(sock)
    assert clock.finish() is False and sock.calls == ["close"]
    timer.fire()  # a timer already running when finish cancelled it
    assert not clock.expired and sock.calls == ["close"]
    after = Sock()
    clock.hold(after)  # nothing is held past the end: closed at once
    assert after.calls == ["close"]


def test_a_failed_shutdown_does_not_stop_the_others() -> None:
    class Gone(Sock):
        def shutdown(self, how: int) -> None:
            raise OSError("Bad file descriptor")

    clock, timer = deadline()
    gone, live = Gone(), Sock()
    clock.hold(gone)
    clock.hold(live)
    timer.fire()
    assert live.calls == ["shutdown"]


def test_a_limited_error_message_is_cut_and_says_so() -> None:
    long = "x" * (MAX_ERROR_TEXT + 500)
    cut = str(KubeError(500, "Internal Server Error", '{"message": "' + long + '"}', MAX_ERROR_TEXT))
    assert cut.endswith(f"... (cut: {MAX_ERROR_TEXT + 500} characters)") and len(cut) < MAX_ERROR_TEXT + 100
    assert str(KubeError(500, "Internal Server Error", long)).endswith("x")  # the operator's own server: whole


def test_the_keeper_says_why_a_region_passed_a_limit() -> None:
    """KubeLimitError is an UnreachableError, so the keeper's line carries its reason (planb's own words)."""
    exc = KubeLimitError("deadline", "answer too slow", "Secret kueue-system/r (https://x): GET /p was not ...")
    assert ko.unreadable("us-east5", exc) == f"us-east5 answers Kueue but not planb: {exc}"
    assert str(exc).startswith("0 answer too slow: Secret kueue-system/r") and exc.status == 0


def client(limits: Limits | None) -> Kube:
    conn = Connection(server="https://203.0.113.7", ca_data="-----BEGIN CERTIFICATE-----\n", token="t")
    return Kube(Path("Secret kueue-system/r"), conn, limits)


def test_a_limited_client_watches_its_sockets_and_does_not_watch_a_collection() -> None:
    limited = client(Limits(1.0, 1024))
    assert limited.http.pool_classes_by_scheme == watched_pool_classes()
    with pytest.raises(NotImplementedError, match="does not watch"):
        next(limited.watch("/api/v1/pods", "1"))
    plain: Any = client(None).http.pool_classes_by_scheme
    assert plain != watched_pool_classes()
