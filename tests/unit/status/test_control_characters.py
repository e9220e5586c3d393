"""Text from a cluster (the ledger ConfigMap's advice, a region's admission check messages, a KubeError) is printed
with its terminal control characters escaped: an OSC 52 sequence in a job name would write the operator's
clipboard."""

from __future__ import annotations

from typing import Any

import pytest

from planb.kube import KubeError
from planb.printable import printable
from planb.regions.dispatcher.ledger import Key
from planb.regions.dispatcher.ledger_store import LastAdvice, PairAdvice
from planb.status import gather, obtainability, regions

OSC52 = "\x1b]52;c;cm0gLXJmIH4=\x07"
CSI = "\x9b2J"
NOW = 1_800_000_000.0


def test_printable_escapes_c0_and_c1_but_not_newline_or_tab() -> None:
    assert printable(f"a{OSC52}\tb\nc{CSI}\x7f") == "a\\u001b]52;c;cm0gLXJmIH4=\\u0007\tb\nc\\u009b2J\\u007f"


def test_capacity_text_escapes_the_ledgers_strings() -> None:
    key = Key(f"us-east5{OSC52}", f"dws{CSI}", f"ct6e{OSC52}")
    pair = PairAdvice(key, 0.5, None, 0.5, f"GOOGLE{OSC52}", f"first{OSC52}", f"why{OSC52}")
    advice = LastAdvice(f"x{OSC52}", NOW - 60, False, f"note{OSC52}", (pair,))
    found = obtainability.Obtainability("kueue-system/planb-capacity", True, NOW, advice=advice, problems=[f"p{OSC52}"])
    out = obtainability.text(found)
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert "x\\u001b]52" in out


class RegionKube:
    """A region whose copy's admission check message carries an escape sequence."""

    def __init__(self, fail: bool) -> None:
        self.fail = fail

    def get(self, path: str, query: dict[str, str] | None = None) -> dict[str, Any]:
        if self.fail:
            raise KubeError(500, "Internal Server Error", f'{{"message": "boom{OSC52}"}}')
        check = {"name": "dws", "state": "Pending", "message": f"Waiting{OSC52}"}
        return {"status": {"admissionChecks": [check], "conditions": []}}


@pytest.mark.parametrize("fail", [False, True])
def test_region_copies_escape_messages_and_errors(monkeypatch: pytest.MonkeyPatch, fail: bool) -> None:
    monkeypatch.setattr(gather, "region_kube", lambda kube, region: RegionKube(fail))
    copy = regions._copy(gather.region_read(object(), f"us-east5{CSI}", "default", "job"))  # type: ignore[arg-type]
    shown = " ".join([copy.region, copy.state, *copy.checks, regions.Dispatch("", [copy]).line()])
    assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown


def test_line_separators_and_bidirectional_overrides_are_escaped_too() -> None:
    """U+2028/2029 split a line in log viewers; U+202E and U+2066-2069 reorder what a line shows:
    written as \\uXXXX, as the control characters are."""
    shown = printable("ok\u2028forged line \u202eevil\u2066x\u2069")
    assert not any(c in shown for c in "\u2028\u202e\u2066\u2069"), repr(shown)
    assert "\\u2028" in shown and "\\u202e" in shown and "\\u2066" in shown
