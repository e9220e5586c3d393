"""The CRDs the local stack serves: which manifests, how they go in, and how `up` knows the API server serves them.

`planb.local.stack.parts` installs them into the stack's API server; `planb.local.stack.snapshot` installs the same
files into the throwaway one whose etcd becomes the snapshot.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from planb import paths
from planb.kube import Kube, KubeError
from planb.local.stack.errors import LocalStackError, StartupTimeoutError, ToolMissingError
from planb.local.stack.kubectl import kubectl
from planb.local.statefile import write_json

#: CRDs of the pinned modules the stack leaves out: KubeRay runs its RayCronJob controller only behind its
#: RayCronJob feature gate (off; ray-operator main.go), and Kueue integrates no RayCronJob, so nothing here
#: watches one; its schema alone is 0.7 MB of the API server's OpenAPI.
SKIPPED_CRDS = frozenset({"ray.io_raycronjobs.yaml"})
#: The CRDs `up` installs, by whose they are: directories under the toolchain's manifests, in apply order.
MANIFEST_DIRS = (
    ("ProvisioningRequest", "provisioningrequest"),
    ("KubeRay", "kuberay/crds"),
    ("Kueue", "kueue/crds"),
)
#: The CustomResourceDefinitions' collection.
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def directories() -> list[tuple[str, Path]]:
    """The CRD directories of the pinned modules, by whose they are, in apply order; each must be there."""
    manifests = paths.manifests_dir()
    groups = [(label, manifests / directory) for label, directory in MANIFEST_DIRS]
    for label, directory in groups:
        if not directory.is_dir():
            raise ToolMissingError(f"the {label} CRDs in {directory}")
    return groups


def files() -> list[Path]:
    """Every CRD manifest the stack installs, in apply order."""
    return [
        path
        for _, directory in directories()
        for path in sorted(directory.glob("*.yaml"))
        if path.name not in SKIPPED_CRDS
    ]


def hash_files(sha: hashlib._Hash, manifests: Sequence[Path]) -> None:
    """Feed `sha` each file's folder and name, and the hash of its bytes, in order (what a CRD set is keyed by:
    here, and in planb.local.stack.snapshot's key)."""
    for path in manifests:
        sha.update(f"{path.parent.name}/{path.name}\n".encode())
        sha.update(hashlib.sha256(path.read_bytes()).digest())


def digest(manifests: Sequence[Path]) -> str:
    """What a set of CRD files holds: their names and bytes (a stack that took them in keeps them in its etcd)."""
    sha = hashlib.sha256()
    hash_files(sha, manifests)
    return sha.hexdigest()[:16]


def applied(stamp: Path, files_digest: str) -> frozenset[str] | None:
    """The CRDs (PLURAL.GROUP) this stack's etcd took in from the files of this `digest`, as `record` wrote them
    in `stamp`; None when it took in other files, or none, or the stamp is unreadable."""
    try:
        recorded = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(recorded, dict) or recorded.get("digest") != files_digest:
        return None
    names = recorded.get("names")
    if not isinstance(names, list) or not names or not all(isinstance(name, str) for name in names):
        return None
    return frozenset(names)


def record(stamp: Path, files_digest: str, names: Iterable[str]) -> None:
    """Write in `stamp` that this stack's etcd holds the CRDs of the files of this `digest`, served under these
    names."""
    write_json(stamp, {"digest": files_digest, "names": sorted(names)})


def apply(kubeconfig: Path, manifests: Sequence[Path], stdin: str | None = None) -> None:
    """The manifests (and `stdin`'s documents, if any) in one server-side apply by planb's field manager."""
    args = [arg for path in manifests for arg in ("-f", str(path))]
    if stdin is not None:
        args += ["-f", "-"]
    kubectl(
        kubeconfig,
        ["apply", "--server-side", "--force-conflicts", "--field-manager=planb", *args],
        stdin=stdin,
        timeout=180,
    )


def wait_served(kubeconfig: Path, timeout: float = 60, expected: frozenset[str] | None = None) -> frozenset[str]:
    """Every CRD (and every one `expected` names, each of which must exist) is served: each is in the discovery
    of its group, which the API server's discovery controller adds a CRD to once it is Established, and only
    then (apiextensions-apiserver, pkg/apiserver/customresource_discovery_controller.go: sync). Returns the CRDs
    it waited on.

    Asked of discovery and of a metadata-only list of the CRDs, in this process, instead of by `kubectl wait
    --for=condition=Established`: that lists the CRDs and watches them, so the API server encodes and sends
    every CRD (5 MB of schemas) again at each of its status changes, while it is still taking them in.
    """
    kube = Kube(kubeconfig)
    deadline = time.monotonic() + timeout
    names = set(kube.names(CRDS))  # listed once: each list decodes every CRD
    if expected is not None:
        absent = expected - names
        if absent:
            raise LocalStackError(
                f"the API server has no CRD {', '.join(sorted(absent))}, which etcd's snapshot recorded. "
                f"Fix: remove the snapshots in {paths.tools_dir().resolve() / 'etcd-snapshots'} (the next up makes a "
                "new one), then 'planb local down' and 'planb local up'"
            )
        names |= expected
    missing = set(names)
    while True:
        missing -= served(kube, missing)
        if not missing:
            return frozenset(names)
        if time.monotonic() > deadline:
            raise StartupTimeoutError(
                f"the API server serves no {', '.join(sorted(missing))} after {timeout:.0f} s "
                "(see 'kubectl get crd NAME -o yaml', its Established condition)"
            )
        time.sleep(0.1)


def served(kube: Kube, crds: set[str]) -> set[str]:
    """Those of the CRDs named (PLURAL.GROUP) whose resource discovery lists in some version of their group; each
    group's discovery is read once, however many of its CRDs are asked about."""
    found: set[str] = set()
    for group in {name.split(".", 1)[1] for name in crds}:
        try:
            for version in (kube.get(f"/apis/{group}") or {}).get("versions", []):
                resources = (kube.get(f"/apis/{group}/{version['version']}") or {}).get("resources", [])
                found.update(f"{resource.get('name')}.{group}" for resource in resources)
        except KubeError:  # a group the API server is still putting together (503) is not served yet
            continue
    return found & crds
