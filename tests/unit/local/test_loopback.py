"""PLANB_PORT_OFFSET: every fixed port of the local stack moves by it, in every module that names one."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from planb.local import loopback

#: Each module-level port a stack's process binds or names, as `module:attribute`, with its port at offset 0.
PORTS = {
    "planb.local.apiserver:PORT": 26443,
    "planb.local.rayhead.address:PORT": 19085,
    "planb.local.stack.parts:KUBERAY_METRICS_PORT": 19082,
    "planb.local.stack.parts:KUBERAY_PROBE_PORT": 19083,
    "planb.local.failover_settings:METRICS_PORT": 19084,
}


def _read_ports(offset: str) -> dict[str, object]:
    """The ports as a fresh interpreter with PLANB_PORT_OFFSET=offset sees them (the constants are read at import)."""
    program = (
        "import importlib, json, sys\n"
        "from planb.local.stack.kueue_settings import KueueSettings\n"
        "from planb.local.gke_emulator.access import LOCAL_APISERVER\n"
        "from planb.local.stack.kwokctl_config import PORTS_BELOW\n"
        "names = json.loads(sys.argv[1])\n"
        "got = {n: getattr(importlib.import_module(n.split(':')[0]), n.split(':')[1]) for n in names}\n"
        "k = KueueSettings()\n"
        "got.update(kueue=[k.webhook_port, k.health_port, k.metrics_port], access=LOCAL_APISERVER, below=PORTS_BELOW)\n"
        "print(json.dumps(got))\n"
    )
    env = {**os.environ, loopback.ENV: offset}
    done = subprocess.run(
        [sys.executable, "-c", program, json.dumps(list(PORTS))], env=env, capture_output=True, text=True, check=True
    )
    return dict(json.loads(done.stdout))


def test_without_an_offset_the_stack_keeps_its_usual_ports() -> None:
    got = _read_ports("")
    assert {name: got[name] for name in PORTS} == PORTS
    assert got["kueue"] == [19443, 19081, 19080]
    assert got["access"] == "127.0.0.1:26443"
    assert got["below"] == 32767


def test_an_offset_moves_every_port_by_the_same_amount() -> None:
    got = _read_ports("100")
    assert {name: got[name] for name in PORTS} == {name: port + 100 for name, port in PORTS.items()}
    assert got["kueue"] == [19543, 19181, 19180]
    assert got["access"] == "127.0.0.1:26543"
    # The control plane's own ports are picked downwards from a start the offset moves the other way.
    assert got["below"] == 32667


@pytest.mark.parametrize("raw", ["-5", "ten", "2001", "1.5"])
def test_an_offset_that_is_not_a_small_whole_number_is_refused_naming_the_fix(raw: str) -> None:
    with pytest.raises(loopback.PortOffsetError) as refused:
        loopback.offset({loopback.ENV: raw})
    assert f"PLANB_PORT_OFFSET={raw!r} is not a whole number from 0 to 2000" in str(refused.value)
    assert "Fix: unset it" in str(refused.value)


def test_port_adds_the_offset_the_environment_names() -> None:
    assert loopback.port(19085, {}) == 19085
    assert loopback.port(19085, {loopback.ENV: " 7 "}) == 19092
