"""An etcd snapshot for the local control plane: the stack's CRDs already taken in, made once per toolchain.

(Earlier versions gave it another name, which the old switch PLANB_ETCD_SEED still carries: SWITCH below;
DEVELOPING.md, "Glossary".)

Why: the API server spends most of `up` taking in the CRDs (5 MB of schemas: decoding, the naming and
establishing controllers' status writes, the OpenAPI models; docs/benchmarks-history.md, "The local loop").
From an etcd that already holds them Established, it reads them once at start instead.

What a snapshot is: the etcd data directory of a throwaway control plane, kwokctl's binary runtime like the
stack's, with only etcd and kube-apiserver (no controller-manager, scheduler or kwok: none of their leader
leases, service accounts or nodes, whose holders would not exist in the next stack), into which the same CRD
files went by the same apply. Its API server is stopped first and etcd second, each by SIGTERM, so etcd
closes its database and write-ahead log cleanly before the directory is copied; then the throwaway cluster
is deleted. (It is a whole data directory, not the single file `etcdctl snapshot save` writes.)

How `up` uses one: the snapshot is copied into the new cluster's etcd directory before kwokctl starts etcd.
kwokctl's install only makes that directory if it is missing (sigs.k8s.io/kwok
pkg/kwokctl/runtime/binary/cluster_setup.go), and `kwokctl snapshot restore` swaps a data directory in the same
place, though from an etcd snapshot file (etcdutl gives it a new member and cluster ID) where this copies one
whole: for a single member the kept IDs and stored peer URL change nothing, as etcd ignores its --initial-* flags
once a write-ahead log exists. `up` then applies Kueue's namespace and webhooks but not the CRDs, and waits until
every CRD the snapshot records is served. The API server reconciles what a snapshot holds of the throwaway one
(the `kubernetes` Service and its endpoints, its identity lease, the bootstrap RBAC) at its start.

A snapshot is keyed by what went into it: the CRD files' names and bytes, the toolchain's versions.env, the
throwaway control plane's kwokctl configuration and components, and SNAPSHOT_FORMAT. Snapshots live in the tool
cache, next to the binaries they were made with; each `up` that copies one marks it used, and only snapshots
unused for a day beyond the newest KEEP are removed.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from planb import paths
from planb.kube import Kube
from planb.local.process import terminate
from planb.local.stack import crds
from planb.local.stack.control_plane import ControlPlane
from planb.local.stack.errors import LocalStackError
from planb.local.stack.kwokctl_config import configuration_recipe
from planb.local.statefile import flocked, write_json

#: Bump when what a snapshot holds, or how it is made, changes: every older snapshot is then left unused.
SNAPSHOT_FORMAT = "1"
#: kwokctl's components the throwaway control plane runs without (`kwokctl create cluster --disable`).
WITHOUT = ("kube-controller-manager", "kube-scheduler", "kwok-controller")
#: Snapshots kept per toolchain whatever their age; of the others, those unused for PRUNE_AFTER seconds are removed
#: when a new one is made (other checkouts may use other CRD sets).
KEEP = 3
PRUNE_AFTER = 24 * 3600
#: etcd's database inside its data directory: a snapshot without it is not one.
DATABASE = Path("member") / "snap" / "db"
#: The names of the CRDs a snapshot holds, beside its data directory.
NAMES = "crds.json"


#: `PLANB_ETCD_SNAPSHOT=off planb local up` takes the CRDs into an empty etcd; the variable's name before the rename,
#: PLANB_ETCD_SEED, is still read (the new name wins when both are set).
SWITCH = "PLANB_ETCD_SNAPSHOT"
OLD_SWITCHES = ("PLANB_ETCD_SEED",)
#: The folder of a toolchain's snapshots, in the tool cache. Checkouts before the rename kept them in `etcd-seeds`
#: beside it, which nothing reads any more: the first `up` makes a snapshot here once (about 12 s), and
#: `etcd-seeds` may be removed.
DIRECTORY = "etcd-snapshots"


def snapshots_dir() -> Path:
    """Where a toolchain's snapshots live: beside its binaries, in the tool cache."""
    return paths.tools_dir().resolve() / DIRECTORY


def switched_off(environ: Mapping[str, str]) -> str | None:
    """The variable that turns snapshots off (SWITCH, else an old name, set to "off"), or None while they are on."""
    name = next((name for name in (SWITCH, *OLD_SWITCHES) if name in environ), None)
    return name if name is not None and environ[name] == "off" else None


def snapshot_key(manifests: Sequence[Path], versions_env: bytes) -> str:
    """A snapshot's key: what its etcd holds depends on these and nothing else."""
    digest = hashlib.sha256(f"format {SNAPSHOT_FORMAT}\n".encode())
    digest.update(hashlib.sha256(versions_env).digest())
    # The configuration's flags, etcd's TLS included, but not one throwaway cluster's certificate paths and ports.
    recipe = {"configuration": configuration_recipe(kwok_crds=False), "without": WITHOUT}
    digest.update(json.dumps(recipe, sort_keys=True).encode())
    crds.hash_files(digest, manifests)
    return digest.hexdigest()[:16]


def toolchain_versions() -> bytes:
    """The versions.env the toolchain was built from (hack/build-tools.sh copies it there), else the checkout's."""
    built = paths.tools_dir() / "versions.env"
    return (built if built.is_file() else paths.REPO / "hack" / "versions.env").read_bytes()


@dataclass(frozen=True)
class EtcdSnapshot:
    """The snapshot for one set of CRD files (the stack's, by default) under one toolchain."""

    manifests: tuple[Path, ...]
    root: Path

    @classmethod
    def for_stack(cls) -> EtcdSnapshot:
        return cls(tuple(crds.files()), snapshots_dir())

    @functools.cached_property
    def directory(self) -> Path:
        return self.root / snapshot_key(self.manifests, toolchain_versions())

    @property
    def data_dir(self) -> Path:
        """The etcd data directory a control plane starts from."""
        return self.directory / "etcd"

    def exists(self) -> bool:
        return (self.data_dir / DATABASE).is_file() and (self.directory / NAMES).is_file()

    def crd_names(self) -> frozenset[str]:
        """The CRDs the snapshot holds, each Established when it was made (PLURAL.GROUP)."""
        names = json.loads((self.directory / NAMES).read_text())
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            raise LocalStackError(f"{self.directory / NAMES} is not a list of CRD names; remove {self.directory}")
        return frozenset(names)

    @contextlib.contextmanager
    def in_use(self) -> Iterator[bool]:
        """While a control plane is created from the snapshot: no prune removes it (a shared lock), and it is marked
        used. Yields whether it exists."""
        self.root.mkdir(parents=True, exist_ok=True)
        with flocked(self.root / ".lock", fcntl.LOCK_SH):
            found = self.exists()
            if found:
                os.utime(self.directory)
            yield found

    def make(self) -> bool:
        """Make the snapshot unless it exists (another `up` may be making it: one at a time); True if made here.

        Whether it exists is read under the shared lock, so a snapshot that exists costs no exclusive lock: one
        would wait for every control plane being created from the snapshot (`in_use`), and, once held by a process
        that the scheduler then leaves waiting (a test tier at SCHED_IDLE, `make test`), hold up every `up` that
        asks for the shared one. What an interrupted making left (its throwaway control plane, its directory) is
        removed first."""
        self.root.mkdir(parents=True, exist_ok=True)
        with flocked(self.root / ".lock", fcntl.LOCK_SH):
            if self.exists():
                return False
        with flocked(self.root / ".lock"):
            if self.exists():
                return False
            for left in self.root.glob(".making-*"):
                _remove_making(left)
            if self.directory.exists():  # an incomplete snapshot (no database or no names) is not one
                shutil.rmtree(self.directory)
            work = Path(tempfile.mkdtemp(prefix=".making-", dir=self.root))
            try:
                self._make_in(work)
            finally:
                _remove_making(work)
            self._prune()
        return True

    def _make_in(self, work: Path) -> None:
        plane = ControlPlane.throwaway(work / "state")
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
            staging = work / "snapshot"
            shutil.copytree(plane.etcd_dir, staging / "etcd")
            if not (staging / "etcd" / DATABASE).is_file():
                raise LocalStackError(f"the throwaway etcd left no database in {plane.etcd_dir}")
            write_json(staging / NAMES, names)
            staging.rename(self.directory)
        finally:
            plane.delete()

    def _prune(self) -> None:
        """Keep the KEEP snapshots used last, and any used within PRUNE_AFTER; under the exclusive lock, so no `up` is
        copying one."""
        snapshots = sorted(
            (path for path in self.root.iterdir() if path.is_dir() and not path.name.startswith(".")),
            key=lambda path: path.stat().st_mtime,
            reverse=True,
        )
        for old in snapshots[KEEP:]:
            if old != self.directory and time.time() - old.stat().st_mtime > PRUNE_AFTER:
                shutil.rmtree(old, ignore_errors=True)


def _remove_making(work: Path) -> None:
    """A making's directory, after its throwaway control plane (if one still runs) is stopped."""
    with contextlib.suppress(LocalStackError, OSError):
        ControlPlane(work / "state").delete()
    shutil.rmtree(work, ignore_errors=True)
