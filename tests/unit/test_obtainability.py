"""planb's own obtainability model (planb.local.gke_emulator.obtainability): what capacity advice scores."""

from __future__ import annotations

from typing import Any

import pytest

from planb.local.gke_emulator.obtainability import HALF_LIFE_SECONDS, PRIOR_UPTIME_SECONDS, Signal, SignalError, score

NOW = 1_000_000.0


def _signal(outcome: str, age: float = 0.0, model: str = "FLEX_START", **extra: Any) -> Signal:
    return Signal("us-east5-b", "ct6e-standard-4t", model, outcome, NOW - age, **extra)


def test_grants_raise_and_stockouts_lower_the_score_and_old_signals_weigh_less() -> None:
    assert score([], "us-east5-b", "ct6e-standard-4t", ["FLEX_START"], NOW).obtainability == 0.5
    assert score([_signal("GRANT", count=2)], "us-east5-b", "ct6e-*", ["FLEX_START"], NOW).obtainability == 0.75
    fresh = score([_signal("STOCKOUT")], "us-east5-b", "ct6e-standard-4t", ["FLEX_START"], NOW)
    old = score([_signal("STOCKOUT", age=HALF_LIFE_SECONDS)], "us-east5-b", "ct6e-standard-4t", ["FLEX_START"], NOW)
    assert (fresh.obtainability, fresh.stockouts, old.stockouts) == (1 / 3, 1.0, 0.5)
    # Another zone, machine type or provisioning model is another score.
    assert score([_signal("STOCKOUT")], "us-east5-a", "ct6e-standard-4t", ["FLEX_START"], NOW).obtainability == 0.5
    assert score([_signal("STOCKOUT")], "us-east5-b", "ct5lp-*", ["FLEX_START"], NOW).obtainability == 0.5
    assert score([_signal("STOCKOUT")], "us-east5-b", "ct6e-standard-4t", ["SPOT"], NOW).obtainability == 0.5


def test_spot_uptime_is_the_mean_of_the_preemptions_seen_with_a_prior() -> None:
    preempted = [_signal("PREEMPTION", model="SPOT", uptime_seconds=0.0)]
    assert score([], "us-east5-b", "ct6e-standard-4t", ["SPOT"], NOW).estimated_uptime_seconds == PRIOR_UPTIME_SECONDS
    assert score(preempted, "us-east5-b", "ct6e-standard-4t", ["SPOT"], NOW).estimated_uptime_seconds == (
        PRIOR_UPTIME_SECONDS / 2
    )
    assert score(preempted, "us-east5-b", "ct6e-standard-4t", ["STANDARD"], NOW).estimated_uptime_seconds is None


@pytest.mark.parametrize(
    ("outcome", "model", "extra", "message"),
    [
        ("LOST", "SPOT", {}, "outcome 'LOST'"),
        ("GRANT", "PREEMPTIBLE", {}, "provisioningModel 'PREEMPTIBLE'"),
        ("GRANT", "SPOT", {"count": 0}, "count 0"),
        ("PREEMPTION", "STANDARD", {"uptime_seconds": 1.0}, "only SPOT"),
        ("PREEMPTION", "SPOT", {}, "uptimeSeconds"),
    ],
)
def test_a_signal_the_model_cannot_read_is_refused(
    outcome: str, model: str, extra: dict[str, Any], message: str
) -> None:
    with pytest.raises(SignalError, match=message):
        _signal(outcome, model=model, **extra)
