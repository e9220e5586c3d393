"""`planb local up --regions N`: a MultiKueue manager and N worker regions, each a local stack of its own.

The regions' local emulation (docs/regions.md, "Local emulation"): every member is the ordinary local stack (kwok
control plane, the host Kueue v0.19.2, KubeRay, the GKE emulator, the capacity simulator and the Ray head
stand-in), started by `planb local up` in a process of its own with

* its own state directory, ``<state>/regions/<member>`` (PLANB_STATE_DIR), so each region has its own etcd, its
  own GKE emulator store and its own capacity switches: a test stocks out one region with ``planb local capacity set``
  under that region's PLANB_STATE_DIR and grants another;
* its own ports, every fixed port moved by ``OFFSET_STEP`` times its place (PLANB_PORT_OFFSET, planb.local.loopback;
  the manager keeps the usual ports, so a plain `planb local up` and this cannot run at once, and `up` says so).

What differs from Google Cloud: each region's GKE emulator is its own process and its own endpoint, where Google
serves every region from container.googleapis.com; and a region's "network" is loopback, so a lost region is a
stopped API server (docs/regions.md says what only Google can test).

The wiring between them (the workers' ServiceAccount tokens in Secrets on the manager, MultiKueueCluster,
MultiKueueConfig, the AdmissionCheck) is the product's, not the stand-in's: the regions playbook and the multikueue
role (docs/regions.md, "Ansible").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from planb import paths
from planb.errors import PlanbError
from planb.local import loopback
from planb.local.gke_emulator.address import DEFAULT_PORT as EMULATOR_PORT
from planb.local.statefile import open_private, private_dir, write_json

#: The regions a local run takes, in order: each with the v6e zone its TPU pools use (planb.catalog.zones lists
#: v6e in all three), so a region's site.yml converge passes the TPU-zone check as on Google Cloud.
REGIONS = (("us-east5", "us-east5-b"), ("europe-west4", "europe-west4-a"), ("asia-northeast1", "asia-northeast1-b"))
#: How far each member's ports move from the one before (two stacks' ports never meet: planb.local.loopback).
OFFSET_STEP = 100
MANAGER = "manager"
#: Seconds one member's `planb local up` may take before the whole start is undone.
UP_TIMEOUT = 300.0


class RegionsError(PlanbError):
    """The regions asked for cannot be laid out or started."""


@dataclass(frozen=True)
class Member:
    """One local stack of the regions: the manager or a worker region."""

    name: str
    place: int
    zone: str = ""

    @property
    def offset(self) -> int:
        return self.place * OFFSET_STEP

    @property
    def state(self) -> Path:
        return paths.state_dir() / "regions" / self.name

    @property
    def kubeconfig(self) -> Path:
        return self.state / "local" / "kubeconfig"

    def env(self) -> dict[str, str]:
        """The variables that make `planb`, ansible-playbook and the stack's processes act on this member."""
        region = {"REGION": self.name, "ZONE": self.zone} if self.zone else {}
        return {
            "PLANB_STATE_DIR": str(self.state),
            loopback.ENV: str(self.offset),
            "PLANB_GKE_EMULATOR_PORT": str(EMULATOR_PORT + self.offset),
            **region,
        }


def layout(count: int) -> list[Member]:
    """The manager and the first `count` regions of REGIONS."""
    if not 1 <= count <= len(REGIONS):
        raise RegionsError(
            f"--regions {count}: a local run has 1 to {len(REGIONS)} regions ({', '.join(r for r, _ in REGIONS)}). "
            f"Fix: --regions 3"
        )
    regions = [Member(name, place, zone) for place, (name, zone) in enumerate(REGIONS[:count], start=1)]
    return [Member(MANAGER, 0), *regions]


def _record() -> Path:
    return paths.state_dir() / "regions" / "layout.json"


def recorded() -> list[Member]:
    """The members the last `up --regions` started (none when it never ran or `down` removed them)."""
    try:
        count = int(json.loads(_record().read_text())["regions"])
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return layout(count)


def _say(msg: str) -> None:
    print(f"[planb regions] {msg}", file=sys.stderr, flush=True)


def _planb(member: Member, *args: str) -> subprocess.Popen[bytes]:
    # planb's policy: a member's state and its logs are this user's alone (0700, 0600), whatever the umask, because
    # they hold what the stack says; each start's log is its own (the last one removed first).
    log_file = private_dir(member.state) / f"{args[0]}.log"
    log_file.unlink(missing_ok=True)
    with open_private(log_file, "ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "planb.cli", "local", *args],
            env={**os.environ, **member.env()},
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=paths.REPO,
        )


def _tail(member: Member, verb: str, lines: int = 15) -> str:
    try:
        return "\n".join((member.state / f"{verb}.log").read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def up(count: int) -> list[Member]:
    """Start the manager and `count` regions side by side; on any failure take every member down again."""
    members = layout(count)
    previous = recorded()
    if previous and len(previous) != len(members):
        raise RegionsError(
            f"{len(previous) - 1} region(s) run already ({_record()}). Fix: planb local down --regions, then up again"
        )
    private_dir(_record().parent)
    write_json(_record(), {"regions": count})
    start(members)  # on a failure it takes them all down, the record with them
    return members


def start(members: Sequence[Member]) -> None:
    """Start `members` side by side (no layout record: the caller stops them with `down(members)`); on any failure
    take every one of them down again. The e2e tests start two regions beside their own stack, the manager."""
    _say(f"starting {', '.join(m.name for m in members)} (each a local stack; logs: <state>/regions/*/up.log) ...")
    begun = time.monotonic()
    running = {m.name: (m, _planb(m, "up")) for m in members}
    failed: list[str] = []
    while running:
        time.sleep(0.5)
        for name, (member, process) in list(running.items()):
            elapsed = time.monotonic() - begun
            if process.poll() is None and elapsed < UP_TIMEOUT:
                continue
            if process.returncode is None:
                process.kill()
                process.wait()
            del running[name]
            if process.returncode == 0:
                _say(f"{name} up after {elapsed:.1f} s (ports +{member.offset}; KUBECONFIG={member.kubeconfig})")
            else:
                failed.append(f"{name} (exit {process.returncode}):\n{_tail(member, 'up')}")
    if failed:
        _say("a member did not start; taking every member down again ...")
        down(members)
        raise RegionsError("`planb local up` failed for " + "\n".join(failed))
    _say(f"all {len(members)} up in {time.monotonic() - begun:.1f} s")


def down(members: Sequence[Member] | None = None) -> None:
    """Stop every member (those recorded, unless named) and forget the layout."""
    members = list(members if members is not None else recorded())
    processes = [(m, _planb(m, "down")) for m in members]
    for member, process in processes:
        if process.wait() != 0:
            _say(f"{member.name}: `planb local down` exit {process.returncode}:\n{_tail(member, 'down')}")
    _record().unlink(missing_ok=True)
    if members:
        _say(f"down: {', '.join(m.name for m in members)}")


def status() -> list[tuple[Member, bool]]:
    """Each recorded member and whether its whole stack runs (`planb local status`)."""
    out = []
    for member in recorded():
        done = subprocess.run(
            [sys.executable, "-m", "planb.cli", "local", "status"],
            env={**os.environ, **member.env()},
            capture_output=True,
            check=False,
        )
        out.append((member, done.returncode == 0))
    return out
