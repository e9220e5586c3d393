"""A kwokctl run that ends as soon as a component's log says its port was taken.

kwokctl's create starts each component and then holds until its ``--timeout`` (240 s by default in
planb.local.stack.control_plane) when the API server could not bind its port, although the API server's log says
so within seconds. `planb local up` refuses a port held before it starts (planb.local.stack.ports); this is for a
port taken between planb's pick and the bind (two clusters created at once), which held the create that long before
planb could try other ports. This run reads the components' logs while kwokctl works and stops kwokctl when one of
them says PORT_TAKEN; the caller then deletes the half-made cluster and tries other ports, or says which port was
taken, as it does when kwokctl returns by itself.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

#: What a component's log says when its port was taken (Go's net.Listen; etcd and the API server alike).
PORT_TAKEN = "address already in use"
#: How often the logs are read while kwokctl runs.
POLL_S = 0.5
#: How long the output of a killed kwokctl is read.
KILL_READ_S = 5.0
#: How much of each log's end is read (a port that cannot be bound is the log's last lines).
TAIL_BYTES = 16_384


@dataclass(frozen=True)
class KwokctlRun:
    """What a kwokctl run left: its exit code and output, and the components whose logs said PORT_TAKEN before it
    ended (kwokctl stopped then; returncode is None)."""

    returncode: int | None
    stdout: str
    stderr: str
    taken: tuple[str, ...]


def components_with_port_taken(logs: Path) -> tuple[str, ...]:
    """The components whose log (kwokctl's binary runtime: <cluster>/logs/<component>.log) says PORT_TAKEN."""
    taken = []
    for log in sorted(logs.glob("*.log")):
        try:
            with log.open("rb") as handle:
                size = handle.seek(0, 2)
                handle.seek(max(0, size - TAIL_BYTES))
                tail = handle.read().decode(errors="replace")
        except OSError:
            continue
        if PORT_TAKEN in tail:
            taken.append(log.stem)
    return tuple(taken)


def run_until_port_taken(
    argv: Sequence[str], *, env: Mapping[str, str], logs: Path | None, timeout: float, umask: int = 0o077
) -> KwokctlRun:
    """Run `argv` (a kwokctl command) to its end, or until a log under `logs` says PORT_TAKEN, then kill it (with
    `logs` None, to its end). Raises TimeoutExpired after `timeout` seconds, as subprocess.run does; the command is
    killed first."""
    with subprocess.Popen(
        list(argv),
        env=dict(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        umask=umask,
    ) as proc:
        deadline = time.monotonic() + timeout
        try:
            while True:
                try:
                    stdout, stderr = proc.communicate(timeout=POLL_S)
                except subprocess.TimeoutExpired:
                    taken = components_with_port_taken(logs) if logs is not None else ()
                    if not taken and time.monotonic() < deadline:
                        continue
                    stdout, stderr = _kill(proc)
                    if not taken:
                        raise subprocess.TimeoutExpired(list(argv), timeout, stdout, stderr) from None
                    return KwokctlRun(None, stdout, stderr, taken)
                return KwokctlRun(proc.returncode, stdout, stderr, ())
        except BaseException:
            # An interrupt or a test's timeout: kwokctl must not outlive its caller (subprocess.run kills too).
            if proc.poll() is None:
                _kill(proc)
            raise


def _kill(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """Kill `proc` and return what it wrote; the read gives up after KILL_READ_S, as a component that inherited the
    pipe (none does: kwokctl's binary runtime sends each component's output to its log) would hold it open."""
    proc.kill()
    try:
        return proc.communicate(timeout=KILL_READ_S)
    except subprocess.TimeoutExpired:
        proc.wait()
        return "", ""
