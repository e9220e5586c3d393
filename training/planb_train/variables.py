"""planb training job, reading one ``PLANB_*`` variable (a choice, an integer, a switch, a number, a location, the
run's identity), and ``ConfigError``, what a bad value raises (planb_train.config holds the table of them)."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence

SWITCH_ON, SWITCH_OFF = ("1", "true", "on", "yes"), ("0", "false", "off", "no")
RUN_ID_RE = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?/[a-z0-9]([-a-z0-9.]*[a-z0-9])?"


class ConfigError(ValueError):
    """A configuration value is invalid; ``variable`` names it, ``choices`` lists valid values."""

    def __init__(self, variable: str, message: str, choices: Sequence[str] = ()) -> None:
        self.variable = variable
        self.choices = tuple(choices)
        text = f"{variable}: {message}"
        if self.choices:
            text += f" (valid choices: {', '.join(self.choices)})"
        super().__init__(text)


def choice(env: Mapping[str, str], name: str, default: str, choices: Sequence[str]) -> str:
    value = env.get(name, "").strip().lower() or default
    if value not in choices:
        raise ConfigError(name, f"unknown value {value!r}", choices)
    return value


def integer(env: Mapping[str, str], name: str, default: int, minimum: int = 1) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(name, f"must be an integer, got {raw!r}") from None
    if value < minimum:
        kind = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        raise ConfigError(name, f"must be {kind}, got {value}")
    return value


def switch(env: Mapping[str, str], name: str, default: bool) -> bool:
    value = choice(env, name, "1" if default else "0", SWITCH_ON + SWITCH_OFF)
    return value in SWITCH_ON


def number(env: Mapping[str, str], name: str, default: float | None, share: bool = False) -> float | None:
    """A positive number; with ``share``, a share of a whole: 0 up to, not including, 1."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(name, f"must be a number, got {raw!r}") from None
    if not (0 <= value < 1 if share else math.isfinite(value) and value > 0):
        raise ConfigError(name, f"must be {'a share from 0 to below 1' if share else 'a positive number'}, got {raw!r}")
    return value


def location(env: Mapping[str, str], name: str, urls: bool = True) -> str:
    """An absolute path (or, with ``urls``, a URL such as gs://bucket/path); empty when unset."""
    where = env.get(name, "").strip()
    # A relative path would depend on where the process starts (the submitter, a retry).
    if where and not (urls and "://" in where) and not os.path.isabs(where):
        kind = "an absolute path or a URL such as gs://bucket/path" if urls else "an absolute path"
        raise ConfigError(name, f"must be {kind}, got {where!r}")
    return where


def run_id(env: Mapping[str, str]) -> str:
    run_id = env.get("PLANB_RUN_ID", "").strip()
    if run_id and not re.fullmatch(RUN_ID_RE, run_id):
        raise ConfigError("PLANB_RUN_ID", f"must be <namespace>/<name> (lower-case DNS names), got {run_id!r}")
    return run_id
