"""The Kubernetes control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok) by kwokctl.

kwokctl's binary runtime runs the pinned binaries as host processes. Admission plugins are on
(``--kube-admission``): kwokctl turns them off by default, which silently disables webhooks.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from planb import paths
from planb.localstack.errors import LocalStackError, ToolMissingError
from planb.process import is_alive, terminate

CLUSTER_NAME = "planb"
BINARIES = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "etcd", "kwokctl")


@dataclass(frozen=True)
class ControlPlane:
    """A kwokctl cluster whose work directory lives under planb's state directory."""

    state: Path
    apiserver_port: int = 26443

    @property
    def workdir(self) -> Path:
        return self.state / "kwok"

    @property
    def cluster_dir(self) -> Path:
        return self.workdir / "clusters" / CLUSTER_NAME

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["KWOK_WORKDIR"] = str(self.workdir)
        # kwokctl reads KWOK_* variables as defaults; keep stray ones out.
        for key in list(env):
            if key.startswith("KWOK_") and key != "KWOK_WORKDIR":
                del env[key]
        return env

    def _kwokctl(self, *args: str, timeout: float = 300) -> str:
        binary = paths.tool("kwokctl")
        proc = subprocess.run(
            [str(binary), "--name", CLUSTER_NAME, *args],
            env=self._env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if proc.returncode != 0:
            raise LocalStackError(
                f"kwokctl {' '.join(args[:2])} failed (exit {proc.returncode}):\n{proc.stderr.strip()[-3000:]}"
            )
        return proc.stdout

    def check_tools(self) -> None:
        for name in BINARIES:
            if not paths.tool(name).is_file():
                raise ToolMissingError(f"the pinned binary {paths.tool(name)}")

    def exists(self) -> bool:
        return (self.cluster_dir / "kwok.yaml").is_file()

    def create(self, kubeconfig: Path) -> None:
        """Create and start the cluster, writing an admin kubeconfig to `kubeconfig`."""
        self.check_tools()
        kubeconfig.parent.mkdir(parents=True, exist_ok=True)
        self._kwokctl(
            "create",
            "cluster",
            "--runtime=binary",
            f"--kubeconfig={kubeconfig}",
            f"--kube-apiserver-port={self.apiserver_port}",
            f"--kube-apiserver-binary={paths.tool('kube-apiserver')}",
            f"--kube-controller-manager-binary={paths.tool('kube-controller-manager')}",
            f"--kube-scheduler-binary={paths.tool('kube-scheduler')}",
            f"--kwok-controller-binary={paths.tool('kwok')}",
            f"--etcd-binary={paths.tool('etcd')}",
            "--kube-admission",
            "--kube-authorization",
            "--wait=120s",
            "--timeout=240s",
        )

    def start(self) -> None:
        self._kwokctl("start", "cluster", "--wait=120s")

    def delete(self) -> None:
        """Delete the cluster by kwokctl, then make sure every component is gone, by pid.

        The pids are read before kwokctl removes its pid files: it signals the components and
        returns without waiting for them to exit.
        """
        pids = self.component_pids()
        if self.exists():
            # A failed delete falls through to the pid sweep below.
            with contextlib.suppress(LocalStackError):
                self._kwokctl("delete", "cluster", timeout=120)
        for pid in (*pids.values(), *self.component_pids().values()):
            terminate(pid)

    def component_pids(self) -> dict[str, int]:
        """Pids of the running components, from kwokctl's pid files."""
        out: dict[str, int] = {}
        pids = self.cluster_dir / "pids"
        if not pids.is_dir():
            return out
        for f in sorted(pids.glob("*.pid")):
            try:
                pid = int(f.read_text().strip())
            except ValueError:
                continue
            if is_alive(pid) and self._runs_our_binary(pid):
                out[f.stem] = pid
        return out

    def _runs_our_binary(self, pid: int) -> bool:
        """kwokctl's pid files carry no start time: check the executable is one of ours instead."""
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            return False
        roots = (str(self.cluster_dir.resolve()), str((paths.tools_dir() / "bin").resolve()))
        return exe.startswith(roots)
