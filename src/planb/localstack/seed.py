"""An etcd seed for the local control plane: the stack's CRDs already taken in, made once per toolchain.

Why: the API server spends most of `up` taking in the CRDs (5 MB of schemas: decoding, the naming and
establishing controllers' status writes, the OpenAPI models; BENCHMARKS.md, "The local loop"). From an etcd
that already holds them Established, it reads them once at start instead.

What a seed is: the etcd data directory of a throwaway control plane, kwokctl's binary runtime like the
stack's, with only etcd and kube-apiserver (no controller-manager, scheduler or kwok: none of their leader
leases, service accounts or nodes, whose holders would not exist in the next stack), into which the same CRD
files went by the same apply. Its API server is stopped first and etcd second, each by SIGTERM, so etcd
closes its database and write-ahead log cleanly before the directory is copied; then the throwaway cluster
is deleted.

How `up` uses one: the seed is copied into the new cluster's etcd directory before kwokctl starts etcd,
the swap `kwokctl snapshot restore` makes itself (sigs.k8s.io/kwok pkg/kwokctl/runtime/binary/
cluster_snapshot.go). Then `up` applies every CRD as before and waits until each is served, so a seed that
differed from the files would cost time, never correctness. The API server reconciles what a seed holds of
the throwaway one (the `kubernetes` Service's endpoints, its identity lease, the bootstrap RBAC) at its start.

A seed is keyed by the bytes of the CRD files, their names, the pinned versions and SEED_FORMAT: a new
toolchain or CRD set makes a new one. Seeds live in the tool cache, next to the binaries they were made with.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import shutil
import socket
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from planb import paths
from planb.kube import Kube
from planb.localstack import crds
from planb.localstack.control_plane import ControlPlane
from planb.localstack.errors import LocalStackError
from planb.process import terminate
from planb.statefile import open_private, write_json

#: Bump when what a seed holds, or how it is made, changes: every older seed is then left unused.
SEED_FORMAT = "1"
#: kwokctl's components the throwaway control plane runs without (`kwokctl create cluster --disable`).
WITHOUT = ("kube-controller-manager", "kube-scheduler", "kwok-controller")
#: Seeds kept per toolchain; older ones (of other CRD sets) are removed when a new one is made.
KEEP = 3
#: etcd's database inside its data directory: a seed without it is not one.
DATABASE = Path("member") / "snap" / "db"
#: The names of the CRDs a seed holds, beside its data directory.
NAMES = "crds.json"


def seeds_dir() -> Path:
    """Where a toolchain's seeds live: beside its binaries, in the tool cache."""
    return paths.tools_dir().resolve() / "etcd-seeds"


def seed_key(manifests: Sequence[Path], versions: dict[str, str]) -> str:
    """A seed's key: what its etcd holds depends on these and nothing else."""
    digest = hashlib.sha256(f"format {SEED_FORMAT}\n".encode())
    for name in ("KUBERNETES_VERSION", "ETCD_VERSION", "KWOK_VERSION"):
        digest.update(f"{name}={versions.get(name, '')}\n".encode())
    for path in manifests:
        digest.update(f"{path.parent.name}/{path.name}\n".encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def free_port() -> int:
    """A loopback port nothing listens on now (the throwaway API server's)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class EtcdSeed:
    """The seed for one set of CRD files (the stack's, by default) under one toolchain."""

    manifests: tuple[Path, ...]
    root: Path

    @classmethod
    def for_stack(cls) -> EtcdSeed:
        return cls(tuple(crds.files()), seeds_dir())

    @functools.cached_property
    def directory(self) -> Path:
        return self.root / seed_key(self.manifests, paths.versions())

    @property
    def data_dir(self) -> Path:
        """The etcd data directory a control plane starts from."""
        return self.directory / "etcd"

    def exists(self) -> bool:
        return (self.data_dir / DATABASE).is_file() and (self.directory / NAMES).is_file()

    def crd_names(self) -> frozenset[str]:
        """The CRDs the seed holds, each Established when it was made (PLURAL.GROUP)."""
        names = json.loads((self.directory / NAMES).read_text())
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            raise LocalStackError(f"{self.directory / NAMES} is not a list of CRD names; remove {self.directory}")
        return frozenset(names)

    def make(self) -> bool:
        """Make the seed unless it exists (another `up` may be making it: one at a time); True if made here."""
        self.root.mkdir(parents=True, exist_ok=True)
        with _locked(self.root / ".lock"):
            if self.exists():
                return False
            work = Path(tempfile.mkdtemp(prefix=".making-", dir=self.root))
            try:
                self._make_in(work)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            self._prune()
        return True

    def _make_in(self, work: Path) -> None:
        plane = ControlPlane(work / "state", apiserver_port=free_port())
        kubeconfig = work / "state" / "kubeconfig"
        try:
            plane.create(kubeconfig, without=WITHOUT)
            crds.apply(kubeconfig, self.manifests)
            crds.wait_served(kubeconfig)
            names = sorted(Kube(kubeconfig).names(crds.CRDS))
            pids = plane.component_pids()
            for component in ("kube-apiserver", "etcd"):  # the API server's last writes reach etcd, then etcd closes
                if component not in pids:
                    raise LocalStackError(f"the throwaway control plane in {work} runs no {component}")
                terminate(pids[component])
            staging = work / "seed"
            shutil.copytree(plane.etcd_dir, staging / "etcd")
            if not (staging / "etcd" / DATABASE).is_file():
                raise LocalStackError(f"the throwaway etcd left no database in {plane.etcd_dir}")
            write_json(staging / NAMES, names)
            staging.rename(self.directory)
        finally:
            plane.delete()

    def _prune(self) -> None:
        """Keep the newest KEEP seeds of this toolchain (other checkouts may use other CRD sets)."""
        seeds = sorted(
            (path for path in self.root.iterdir() if path.is_dir() and not path.name.startswith(".")),
            key=lambda path: path.stat().st_mtime,
            reverse=True,
        )
        for old in seeds[KEEP:]:
            if old != self.directory:
                shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open_private(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
