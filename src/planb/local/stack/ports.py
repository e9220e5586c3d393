"""Who listens where: the sockets of the stack's processes, and who holds a port `up` needs.

Read from ``/proc/net/{tcp,tcp6,udp,udp6}`` (this network namespace) and ``/proc/<pid>/fd``
(which socket inode belongs to which process). Processes of another user show their sockets but
not their owner, so a holder may be unknown; the port is still reported as taken.

Why `up` refuses a taken port instead of moving to a free one: the ports are part of the contract
with what runs against the stack. The GKE emulator's address is in ``inventories/local`` and the
molecule scenarios, Kueue's webhook port is written into the webhook configurations, and the kube
API port is in kubeconfigs that site.yml copies. A stack that silently moved would leave those
pointing at whatever holds the port (with two checkouts: the other checkout's stack, which fails
later with ``x509: certificate signed by unknown authority``). Refusing up front, naming the holder
and how to stop it, is the one answer that is never wrong.
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import os
import re
import socket
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from planb.local.stack.errors import LocalStackError

_LISTEN = "0A"  # TCP_LISTEN in /proc/net/tcp
_UDP_CLOSE = "07"  # a bound, unconnected UDP socket
#: A control-plane binary kwokctl runs from a stack's state directory.
_KWOK_BINARY = re.compile(r"^(?P<state>/\S*?)/local/kwok/clusters/[^/\s]+/bin/\S+")
#: Kueue or the KubeRay operator, run from a checkout's pinned tools.
_TOOL_BINARY = re.compile(r"^(?P<root>/\S*?)/\.tools/bin/(kueue|kuberay-operator)\b")


@dataclass(frozen=True)
class Socket:
    """A listening TCP socket or a bound UDP socket."""

    proto: str  # tcp, tcp6, udp, udp6
    address: str
    port: int
    inode: int

    @property
    def loopback(self) -> bool:
        return ipaddress.ip_address(self.address).is_loopback

    def __str__(self) -> str:
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"{self.proto} {host}:{self.port}"


@dataclass(frozen=True)
class Holder:
    """A process holding a port, as far as this user can see it."""

    pid: int
    command: str

    def __str__(self) -> str:
        return f"pid {self.pid} ({self.command})"


class PortInUseError(LocalStackError):
    """A port the stack needs is held by a process that is not part of this stack."""


def _decode_address(hex_addr: str) -> str:
    """/proc/net's address: 32-bit words in host byte order (little-endian here)."""
    raw = bytes.fromhex(hex_addr)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return str(ipaddress.ip_address(words))


def all_sockets() -> list[Socket]:
    """Every listening TCP socket and bound UDP socket in this network namespace."""
    out: list[Socket] = []
    for proto in ("tcp", "tcp6", "udp", "udp6"):
        try:
            lines = Path(f"/proc/net/{proto}").read_text().splitlines()[1:]
        except FileNotFoundError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10:
                continue
            state = fields[3]
            if state != (_LISTEN if proto.startswith("tcp") else _UDP_CLOSE):
                continue
            hex_addr, _, hex_port = fields[1].partition(":")
            out.append(Socket(proto, _decode_address(hex_addr), int(hex_port, 16), int(fields[9])))
    return out


def socket_inodes(pid: int) -> set[int]:
    """Inodes of the sockets a process has open (empty if it is gone or not this user's)."""
    found: set[int] = set()
    fd_dir = Path(f"/proc/{pid}/fd")
    try:
        entries = list(fd_dir.iterdir())
    except OSError:
        return found
    for fd in entries:
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            found.add(int(target[8:-1]))
    return found


def descendants(pids: Iterable[int]) -> set[int]:
    """The pids and every process below them (children a component may have started)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        parents.setdefault(ppid, []).append(int(entry.name))
    out: set[int] = set()
    todo = list(pids)
    while todo:
        pid = todo.pop()
        if pid not in out:
            out.add(pid)
            todo.extend(parents.get(pid, ()))
    return out


def sockets_of(pids: Iterable[int]) -> dict[int, list[Socket]]:
    """The listening sockets of these processes and their children, by pid."""
    by_inode = {s.inode: s for s in all_sockets()}
    out: dict[int, list[Socket]] = {}
    for pid in sorted(descendants(pids)):
        mine = [by_inode[i] for i in socket_inodes(pid) if i in by_inode]
        if mine:
            out[pid] = sorted(mine, key=lambda s: (s.port, s.proto))
    return out


def command_of(pid: int) -> str:
    """The process's command line, or its name; '?' when not visible."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        text = " ".join(" ".join(a.decode(errors="replace").split()) for a in argv if a)
        if text:
            return text if len(text) <= 200 else text[:197] + "..."
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"


def holders(port: int) -> list[Holder]:
    """The processes listening on TCP `port` on any address, as far as they are visible."""
    inodes = {s.inode for s in all_sockets() if s.port == port and s.proto.startswith("tcp")}
    if not inodes:
        return []
    found: list[Holder] = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and socket_inodes(int(entry.name)) & inodes:
            found.append(Holder(int(entry.name), command_of(int(entry.name))))
    return found


def port_free(port: int, host: str = "127.0.0.1") -> bool:
    """True if a server could listen on host:port now (SO_REUSEADDR, as Go and Python servers set it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
    return True


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on at host now, chosen by the kernel (for a throwaway server or a test's emulator;
    another process may take it before the caller binds it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """`count` distinct ports nothing listens on at host now, chosen by the kernel (all bound at once, so none
    repeats; another process may take one before the caller binds it)."""
    with contextlib.ExitStack() as held:
        socks = [held.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) for _ in range(count)]
        for sock in socks:
            sock.bind((host, 0))
        return [int(sock.getsockname()[1]) for sock in socks]


def _environ(pid: int) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    pairs = (item.decode(errors="replace").partition("=") for item in raw.split(b"\0") if item)
    return {key: value for key, _, value in pairs}


def _down_in(state: str) -> str:
    """How to take down the stack whose state directory is `state`."""
    path = Path(state)
    if path.name == ".state":
        return f"run 'planb local down' in {path.parent}"
    return f"run 'PLANB_STATE_DIR={path} planb local down'"


def how_to_stop(holder: Holder) -> str:
    """What to run to free the port: `planb local down` for another planb stack, or a kill."""
    kwok = _KWOK_BINARY.match(holder.command)
    if kwok:
        return f"a planb stack (state {kwok['state']}); {_down_in(kwok['state'])}"
    tool = _TOOL_BINARY.match(holder.command)
    if tool:
        return f"a planb stack of the checkout {tool['root']}; {_down_in(tool['root'] + '/.state')}"
    if "planb.cli" in holder.command:
        state = _environ(holder.pid).get("PLANB_STATE_DIR")
        if state:
            return f"a planb process of the stack with state {state}; {_down_in(state)}, or 'kill {holder.pid}'"
        return f"a planb process outside this stack; stop it with 'kill {holder.pid}'"
    return f"stop it (e.g. 'kill {holder.pid}') or free the port"


#: Seconds a port held by no visible process may take to be released before it counts as taken.
INVISIBLE_HOLDER_GRACE_S = 15.0


def check_ports(needed: Mapping[int, str], ours: Iterable[int] = ()) -> None:
    """Refuse, naming each holder and how to stop it, if a port in `needed` is taken by another process.

    `needed` maps port -> the component that will listen on it; `ours` are pids of this stack
    (a port one of them holds is not a conflict).
    """
    own = descendants(ours)
    problems: list[str] = []
    for port, component in sorted(needed.items()):
        if port_free(port):
            continue
        found = [h for h in holders(port) if h.pid not in own]
        if not found and any(h.pid in own for h in holders(port)):
            continue
        # A listener whose process just exited (a stack stopped a moment ago) has no holder left
        # but can keep the port for a few seconds: wait for it before calling it someone else's.
        deadline = time.monotonic() + INVISIBLE_HOLDER_GRACE_S
        while not found and not port_free(port) and time.monotonic() < deadline:
            time.sleep(0.2)
            found = [h for h in holders(port) if h.pid not in own]
        if not found and port_free(port):
            continue
        if not found:
            problems.append(
                f"  port {port} ({component}) is in use by a process this user cannot see "
                f"(another user's); stop it or free the port (ss -ltnp 'sport = :{port}' shows it as root)"
            )
            continue
        for holder in found:
            problems.append(f"  port {port} ({component}) is in use by {holder}: {how_to_stop(holder)}")
    if problems:
        raise PortInUseError(
            "the local stack cannot start: ports it needs are taken (its clients would reach the other "
            "server instead):\n" + "\n".join(problems)
        )
