"""The simulator's switches, kept in a JSON file so `planb capacity set` can flip them while it runs."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from planb import paths
from planb.errors import PlanbError


class SettingsError(PlanbError):
    """A switch was given a value the simulator cannot use, or the settings file cannot be read."""


@dataclass(frozen=True)
class Settings:
    """How GKE's autoscaler and DWS behave in local mode."""

    #: Seconds between a ProvisioningRequest appearing and its nodes arriving (DWS's queueing).
    provisioning_delay_seconds: float = 3.0
    #: The next N ProvisioningRequests are answered Failed=True instead of provisioned.
    fail_next: int = 0
    #: Pools whose on-demand scale-up finds no capacity (a stockout): pods stay pending.
    stockout: tuple[str, ...] = ()
    #: Seconds an autoscaled node (or slice) stays idle before it is removed.
    scale_down_after_seconds: float = 30.0
    #: Seconds between two reconcile passes.
    interval_seconds: float = 0.5
    extra: dict[str, Any] = field(default_factory=dict)

    def validate(self) -> None:
        for name in ("provisioning_delay_seconds", "scale_down_after_seconds"):
            if getattr(self, name) < 0:
                raise SettingsError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.interval_seconds <= 0:
            raise SettingsError(f"interval_seconds must be > 0, got {self.interval_seconds}")
        if self.fail_next < 0:
            raise SettingsError(f"fail_next must be >= 0, got {self.fail_next}")


def settings_file(state_dir: Path | None = None) -> Path:
    return (state_dir or paths.state_dir()) / "capacity" / "settings.json"


def load(state_dir: Path | None = None) -> Settings:
    """The saved switches (defaults when there is no file); a SettingsError names a file it cannot use."""
    path = settings_file(state_dir)
    if not path.is_file():
        return Settings()
    try:
        data = json.loads(path.read_text())
        if not isinstance(data, dict):
            raise TypeError(f"a JSON {type(data).__name__} instead of an object")
        stockout = data.get("stockout", ())
        if isinstance(stockout, str) or not all(isinstance(p, str) for p in stockout):
            raise TypeError("stockout is not a list of pool names")
        data["stockout"] = tuple(stockout)
        known = {k: v for k, v in data.items() if k in Settings.__dataclass_fields__}
        settings = Settings(**known)
        for name in ("provisioning_delay_seconds", "scale_down_after_seconds", "interval_seconds", "fail_next"):
            value = getattr(settings, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{name} is {value!r}, not a number")
        settings.validate()
    except (ValueError, TypeError, UnicodeDecodeError, SettingsError) as exc:
        raise SettingsError(
            f"the capacity simulator's settings file {path} is unreadable ({exc}). "
            f"Fix: delete it (the simulator goes back to its defaults; 'planb capacity set ...' writes a new one): "
            f"rm {path}"
        ) from exc
    return settings


def save(settings: Settings, state_dir: Path | None = None) -> None:
    settings.validate()
    path = settings_file(state_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = asdict(settings)
    data["stockout"] = list(settings.stockout)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    tmp.replace(path)


def update(state_dir: Path | None = None, **changes: Any) -> Settings:
    """Change some switches and save; returns the new settings."""
    new = replace(load(state_dir), **changes)
    save(new, state_dir)
    return new
