"""What a local Ray job's payload does, kept in a JSON file so `planb local rayhead set` can change it while the stack
runs.

KWOK pods execute nothing, so the Ray head stand-in (planb.local.rayhead) decides what "running the
entrypoint" means for each RayJob: by default a simulated payload that runs for a while and ends
SUCCEEDED (or FAILED with a given message); or the job's real entrypoint as a host process
(``run``), e.g. training/train.py on CPU.

A ``run`` payload executes code from the cluster on this machine with this user's rights, so it is
given to named RayJobs only: its key is an exact ``<namespace>/<name>``, never a pattern or the
default (`load` and `save` refuse anything else). Each RayJob's ``run`` payloads share one work
directory (`work_dir`), whatever the submission id, so a KubeRay retry finds what the first
submission left there.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from planb import paths
from planb.local.statefile import JsonSettings
from planb.local.statefile import SettingsError as SettingsError

MODES = ("simulate", "run")
#: What a file or directory name made of a namespace, a RayJob name and a submission id may hold.
SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]")
#: A simulated payload runs this long: long enough to see Running in `planb status`, short enough
#: that a demo's jobs end (and give their quota back) within a few minutes.
DEFAULT_SECONDS = 60.0
#: A host process has no TPU or GPU: train.py and JAX run on CPU unless the settings say otherwise
#: (train.py refuses a Ray accelerator type with PLANB_ACCELERATOR=cpu, so the chart's is cleared).
DEFAULT_RUN_ENV = {"PLANB_ACCELERATOR": "cpu", "PLANB_ACCELERATOR_TYPE": "", "JAX_PLATFORMS": "cpu"}
#: A RayJob named exactly: a namespace (a DNS-1123 label) and a RayJob name (a DNS-1123 subdomain), as the
#: API server validates them (https://kubernetes.io/docs/concepts/overview/working-with-objects/names/).
JOB_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?/[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")


@dataclass(frozen=True)
class Payload:
    """What one job's entrypoint does."""

    #: simulate: run for `seconds`, then SUCCEEDED (or FAILED with `fail`); run: the entrypoint itself.
    mode: str = "simulate"
    seconds: float = DEFAULT_SECONDS
    #: simulate only: non-empty ends the job FAILED with this message after `seconds`.
    fail: str = ""
    #: run only: environment variables set over the head container's (after it).
    env: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_RUN_ENV))
    #: run only: what stands in for the code inside the job's image (job.command, docs/your-code.md): a container
    #: path -> a folder on this machine, copied there for each launch (planb.local.rayhead.launch.image_folder).
    image: dict[str, str] = field(default_factory=dict)

    def validate(self, where: str) -> None:
        if self.mode not in MODES:
            raise SettingsError(f"{where}: mode {self.mode!r} is not one of {', '.join(MODES)}")
        if isinstance(self.seconds, bool) or not isinstance(self.seconds, (int, float)) or self.seconds < 0:
            raise SettingsError(f"{where}: seconds must be a number >= 0, got {self.seconds!r}")
        if not isinstance(self.fail, str):
            raise SettingsError(f"{where}: fail must be a string, got {self.fail!r}")
        if not isinstance(self.env, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in self.env.items()
        ):
            raise SettingsError(f"{where}: env must map names to strings, got {self.env!r}")
        if not isinstance(self.image, dict) or not all(
            isinstance(k, str) and k.startswith("/") and isinstance(v, str) and Path(v).is_absolute()
            for k, v in self.image.items()
        ):
            raise SettingsError(
                f"{where}: image must map absolute container paths to absolute folders, got {self.image!r}"
            )


@dataclass(frozen=True)
class Settings(JsonSettings):
    """The default payload and per-job ones, by a pattern on `<namespace>/<rayjob>` (fnmatch)."""

    OWNER = "the Ray head stand-in's"
    ON_DELETE = "jobs go back to the simulated default"

    default: Payload = field(default_factory=Payload)
    jobs: dict[str, Payload] = field(default_factory=dict)

    def payload_for(self, namespace: str, rayjob: str) -> Payload:
        """The first pattern (in the order they were set) that matches, else the default; a `run` payload
        applies to the one RayJob its key names."""
        name = f"{namespace}/{rayjob}"
        for pattern, payload in self.jobs.items():
            if payload.mode == "run":
                if pattern == name:
                    return payload
            elif fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(rayjob, pattern):
                return payload
        return self.default

    def validate(self) -> None:
        self.default.validate("default")
        if self.default.mode == "run":
            raise SettingsError(RUN_NEEDS_NAMES)
        for pattern, payload in self.jobs.items():
            payload.validate(f"jobs[{pattern!r}]")
            if payload.mode == "run" and not JOB_NAME.fullmatch(pattern):
                raise SettingsError(f"jobs[{pattern!r}]: {RUN_NEEDS_NAMES}")

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Settings:
        jobs = data.get("jobs", {})
        if not isinstance(jobs, dict):
            raise TypeError("jobs is not an object")
        return cls(
            default=_payload(data.get("default", {}), "default"),
            jobs={str(k): _payload(v, f"jobs[{k!r}]") for k, v in jobs.items()},
        )

    def to_json(self) -> dict[str, Any]:
        return {"default": asdict(self.default), "jobs": {k: asdict(v) for k, v in self.jobs.items()}}


#: Why a `run` payload is given to named RayJobs only, and how to name one.
RUN_NEEDS_NAMES = (
    "planb's policy: a run payload names each RayJob it applies to, as <namespace>/<name> (no pattern, no "
    "default), because it executes the job's entrypoint as a process on this machine with your rights. "
    "Fix: planb local rayhead set --run default/job-2 (repeat --run for each job)"
)


def settings_file(state_dir: Path | None = None) -> Path:
    return (state_dir or paths.state_dir()) / "rayhead" / "settings.json"


def work_dir(namespace: str, rayjob: str, state_dir: Path | None = None) -> Path:
    """Where a RayJob's `run` payloads run (their ConfigMap files, cwd and HOME): one per RayJob, so every
    submission of it (a KubeRay retry has a new submission id) starts where the last one left off."""
    return (state_dir or paths.state_dir()) / "rayhead" / "work" / SAFE_NAME.sub("_", f"{namespace}_{rayjob}")


def payloads_dir(state_dir: Path | None = None) -> Path:
    """The `run` payloads' pid records (planb.local.rayhead.payloads), which `planb local down` stops."""
    return (state_dir or paths.state_dir()) / "rayhead" / "payloads"


def logs_dir(state_dir: Path | None = None) -> Path:
    """Where each job's output goes: <namespace>_<rayjob>_<submission id>.log."""
    return (state_dir or paths.state_dir()) / "rayhead" / "logs"


def _payload(data: Any, where: str) -> Payload:
    if not isinstance(data, dict):
        raise TypeError(f"{where} is not an object")
    known = {k: v for k, v in data.items() if k in Payload.__dataclass_fields__}
    payload = Payload(**known)
    payload.validate(where)
    return payload


def load(state_dir: Path | None = None) -> Settings:
    """The saved settings (defaults when there is no file); a SettingsError names a file it cannot use."""
    return Settings.load(settings_file(state_dir))


def save(settings: Settings, state_dir: Path | None = None) -> None:
    settings.save(settings_file(state_dir))


def set_payload(pattern: str | None, payload: Payload | None, state_dir: Path | None = None) -> Settings:
    """Set (or, with payload None, clear) the default or one pattern's payload; returns the new settings."""
    current = load(state_dir)
    if pattern is None:
        new = replace(current, default=payload or Payload())
    else:
        jobs = dict(current.jobs)
        jobs.pop(pattern, None)
        if payload is not None:
            jobs[pattern] = payload
        new = replace(current, jobs=jobs)
    save(new, state_dir)
    return new
