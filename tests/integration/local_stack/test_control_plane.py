"""The control plane kwokctl would start: every component on 127.0.0.1 (kwokctl's dry run, no processes)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml

from planb import paths
from planb.local.stack.control_plane import ControlPlane
from planb.local.stack.kwokctl_config import BIND_ADDRESS, KWOK_STAGES, PICKED_PORTS, kwok_stages, unused_ports


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
    # The API server runs with the small control plane's settings: GOGC=75 (or the environment's, as make test sets)
    # and no watch cache for CRDs.
    apiserver = next(line for line in commands.splitlines() if "kube-apiserver" in line and "--etcd-servers" in line)
    assert f"GOGC={os.environ.get('GOGC', '').strip() or '75'} " in apiserver, apiserver
    assert "--watch-cache-sizes=customresourcedefinitions.apiextensions.k8s.io#0" in apiserver.split(), apiserver
    # etcd's client and peer listeners are https with client certificates of the stack's own CA, and the API server
    # presents one: kwokctl's http URLs are replaced in place (override), each flag given once.
    etcd = next(line for line in commands.splitlines() if "--listen-client-urls" in line).split()
    pki = plane.etcd_pki
    for flag in ("listen-client-urls", "advertise-client-urls", "listen-peer-urls", "initial-advertise-peer-urls"):
        values = [arg.split("=", 1)[1] for arg in etcd if arg.startswith(f"--{flag}=")]
        assert len(values) == 1 and values[0].startswith("https://127.0.0.1:"), (flag, values)
    assert [arg for arg in etcd if arg.startswith("--initial-cluster=")] == [
        f"--initial-cluster=node0={next(a for a in etcd if a.startswith('--listen-peer-urls=')).split('=', 1)[1]}"
    ]
    for arg in (
        "--client-cert-auth=true",
        f"--trusted-ca-file={pki.ca_crt}",
        f"--cert-file={pki.server_crt}",
        f"--key-file={pki.server_key}",
        "--peer-client-cert-auth=true",
        f"--peer-trusted-ca-file={pki.ca_crt}",
        f"--peer-cert-file={pki.server_crt}",
        f"--peer-key-file={pki.server_key}",
    ):
        assert etcd.count(arg) == 1, (arg, etcd)
    assert "http://" not in " ".join(etcd), etcd
    client_url = next(a for a in etcd if a.startswith("--listen-client-urls=")).split("=", 1)[1]
    api_args = apiserver.split()
    assert [a for a in api_args if a.startswith("--etcd-servers=")] == [f"--etcd-servers={client_url}"], api_args
    for arg in (f"--etcd-cafile={pki.ca_crt}", f"--etcd-certfile={pki.client_crt}", f"--etcd-keyfile={pki.client_key}"):
        assert api_args.count(arg) == 1, (arg, api_args)
    # planb picks every port kwokctl would (kwokctl's own pick would give kwok-controller etcd's port): all distinct.
    options = next(d for d in yaml.safe_load_all(plane.config_file.read_text()) if d["kind"] == "KwokctlConfiguration")
    picked = [options["options"][name] for name in PICKED_PORTS]
    assert len({*picked, 26999}) == len(PICKED_PORTS) + 1, options["options"]
    assert client_url == f"https://127.0.0.1:{options['options']['etcdPort']}"
    assert f"--server-address=127.0.0.1:{options['options']['kwokControllerPort']}" in commands
    assert not plane.exists()  # a dry run creates no cluster
    # kwokctl's configuration is this user's alone, like everything under .state.
    assert plane.config_file.stat().st_mode & 0o777 == 0o600


def test_the_kwokctl_configuration_sets_the_bind_address(tmp_path: Path) -> None:
    plane = ControlPlane(tmp_path)
    assert plane.saved.bind_address() == "0.0.0.0"  # kwokctl's default when nothing says otherwise
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
    assert plane.saved.bind_address() == "127.0.0.1"
    assert plane.ports() == {32001: "etcd", 26443: "kube-apiserver"}
    assert not plane.saved.etcd_secured()  # no etcd component saved: nothing says it takes client certificates


@pytest.mark.parametrize(
    ("args", "secured"),
    [
        # as an older planb created it: kwokctl's plain http, no authentication
        (["--name=node0", "--listen-client-urls=http://127.0.0.1:32765"], False),
        (["--listen-client-urls=https://127.0.0.1:32765", "--client-cert-auth=true"], True),
        (["--listen-client-urls=http://127.0.0.1:32765", "--client-cert-auth=true"], False),
    ],
)
def test_a_saved_cluster_says_whether_its_etcd_takes_client_certificates(
    tmp_path: Path, args: list[str], secured: bool
) -> None:
    plane = ControlPlane(tmp_path)
    saved = plane.cluster_dir / "kwok.yaml"
    saved.parent.mkdir(parents=True)
    configuration = {
        "kind": "KwokctlConfiguration",
        "options": {"bindAddress": "127.0.0.1"},
        "components": [{"name": "kube-apiserver", "args": ["--client-cert-auth=true"]}, {"name": "etcd", "args": args}],
    }
    saved.write_text(yaml.safe_dump_all([configuration]))
    assert plane.saved.etcd_secured() is secured


def test_the_control_planes_ports_are_picked_below_kwokctls_start_each_once(tmp_path: Path) -> None:
    picked = unused_ports(5, exclude=(32766,))
    assert len(set(picked)) == 5 and all(10000 < port < 32767 for port in picked) and 32766 not in picked
    assert picked == sorted(picked, reverse=True)


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
