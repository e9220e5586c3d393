"""Argument types of planb's command lines that argparse's own do not give.

`finite` reads a number of seconds as ``float`` does, except ``nan`` and the infinities, which ``float``
accepts and which no delay, window or timeout means: a nan delay never compares as reached, an infinite
one never ends.
"""

from __future__ import annotations

import argparse
import math


def finite(text: str) -> float:
    """A finite number (argparse ``type=``); argparse reports the error against the option's name."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def positive_float(text: str) -> float:
    """A finite number above zero (argparse ``type=``): a number of seconds to wait or poll."""
    value = finite(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not above zero")
    return value


def non_negative_float(text: str) -> float:
    """A finite number, zero or more (argparse ``type=``): a margin of seconds that may be none."""
    value = finite(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is below zero")
    return value
