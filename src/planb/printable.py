"""Text from a cluster made safe to print: a region's messages, an object's names and reasons, a ledger ConfigMap are
anyone's who writes them, and a terminal acts on the control characters in them. planb.status's views and the
regions keeper's log lines pass such text through `printable`."""

from __future__ import annotations

import re

#: C0 and C1 control characters (and DEL) but newline and tab: a terminal acts on them (ESC starts a sequence; OSC 52
#: writes the clipboard). Also the line and paragraph separators and the bidirectional overrides and isolates
#: (U+2028-2029, U+202A-202E, U+2066-2069), which split a line in log viewers or reorder what a line shows (the
#: "Trojan Source" characters).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028-\u202e\u2066-\u2069]")
_LINE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028-\u202e\u2066-\u2069]")


def printable(text: str, one_line: bool = False) -> str:
    """`text` with each control character but newline and tab written as \\uXXXX, safe to print to a terminal; with
    `one_line`, a newline too (a log line that cluster text cannot split)."""
    return (_LINE if one_line else _CONTROL).sub(lambda m: f"\\u{ord(m.group()):04x}", text)
