"""The control plane kwokctl would start: every component on 127.0.0.1 (kwokctl's dry run, no processes)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from planb import paths
from planb.local.stack.control_plane import BIND_ADDRESS, KWOK_STAGES, ControlPlane, kwok_stages


@pytest.mark.tools
def test_every_component_is_told_to_listen_on_loopback_only(tmp_path: Path) -> None:
    plane = ControlPlane(tmp_path / "local", apiserver_port=26999)
    commands = plane.create(tmp_path / "local" / "kubeconfig", dry_run=True)
    flags = re.findall(
        r"--(bind-address|listen-client-urls|listen-peer-urls|advertise-client-urls|"
        r"initial-advertise-peer-urls|server-address|address|insecure-bind-address)=(\S+)",
        commands,
    )
    by_flag: dict[str, set[str]] = {}
    for flag, value in flags:
        host = re.sub(r"^https?://", "", value).rsplit(":", 1)[0] if ":" in value else value
        by_flag.setdefault(flag, set()).add(host)
    # etcd (client and peer), kube-apiserver, controller-manager, scheduler, kwok-controller.
    assert by_flag == {
        "bind-address": {BIND_ADDRESS},
        "listen-client-urls": {BIND_ADDRESS},
        "listen-peer-urls": {BIND_ADDRESS},
        "advertise-client-urls": {BIND_ADDRESS},
        "initial-advertise-peer-urls": {BIND_ADDRESS},
        "server-address": {BIND_ADDRESS},
    }, commands
    assert commands.count("--bind-address=") == 3  # kube-apiserver, controller-manager, scheduler
    # kwok serves pod logs from Logs objects (the Ray head stand-in's submitter output), at a node address the
    # API server reaches on loopback: the last --node-ip is the one kwok-controller takes.
    kwok = next(line for line in commands.splitlines() if "kwok-controller" in line and "--node-ip" in line)
    assert "--enable-crds=Logs" in kwok, kwok
    assert re.findall(r"--node-ip=(\S*)", kwok)[-1] == BIND_ADDRESS, kwok
    # The API server runs with the small control plane's settings: GOGC=75 and no watch cache for CRDs.
    apiserver = next(line for line in commands.splitlines() if "kube-apiserver" in line and "--etcd-servers" in line)
    assert "GOGC=75 " in apiserver, apiserver
    assert "--watch-cache-sizes=customresourcedefinitions.apiextensions.k8s.io#0" in apiserver.split(), apiserver
    assert not plane.exists()  # a dry run creates no cluster
    # kwokctl's configuration is this user's alone, like everything under .state.
    assert plane.config_file.stat().st_mode & 0o777 == 0o600


def test_the_kwokctl_configuration_sets_the_bind_address(tmp_path: Path) -> None:
    plane = ControlPlane(tmp_path)
    assert plane.bind_address() == "0.0.0.0"  # kwokctl's default when nothing says otherwise
    saved = plane.cluster_dir / "kwok.yaml"
    saved.parent.mkdir(parents=True)
    saved.write_text(
        yaml.safe_dump_all(
            [
                {"kind": "KwokConfiguration", "options": {}},
                {
                    "kind": "KwokctlConfiguration",
                    "options": {"bindAddress": "127.0.0.1", "etcdPort": 32001, "kubeApiserverPort": 26443},
                },
            ]
        )
    )
    assert plane.bind_address() == "127.0.0.1"
    assert plane.ports() == {32001: "etcd", 26443: "kube-apiserver"}


@pytest.mark.tools
def test_kwok_keeps_its_default_stages_but_leaves_submitter_pods_running() -> None:
    stages = kwok_stages()
    shipped = [yaml.safe_load((paths.manifests_dir() / "kwok" / "stages" / name).read_text()) for name in KWOK_STAGES]
    assert [s["metadata"]["name"] for s in stages] == [s["metadata"]["name"] for s in shipped]
    for ours, theirs in zip(stages, shipped, strict=True):
        if ours["metadata"]["name"] != "pod-complete":
            assert ours == theirs
    complete = next(s for s in stages if s["metadata"]["name"] == "pod-complete")
    expressions = complete["spec"]["selector"]["matchExpressions"]
    assert {"key": ".spec.containers.[].name", "operator": "NotIn", "values": ["ray-job-submitter"]} in expressions
    assert (
        len(expressions)
        == len(
            next(s for s in shipped if s["metadata"]["name"] == "pod-complete")["spec"]["selector"]["matchExpressions"]
        )
        + 1
    )
