"""Reaching a region from the manager with the kubeconfig its MultiKueueCluster names (Kueue's own access).

Each region is a MultiKueueCluster on the manager whose ``spec.clusterSource.kubeConfig`` names a Secret in Kueue's
namespace (key ``kubeconfig``) or a file (Kueue v0.19.2, apis/kueue/v1beta2/multikueue_types.go#L58-L112). planb's
``multikueue`` role writes the Secret: a ServiceAccount token with MultiKueue's rights there (workloads, rayjobs,
rayclusters), CA inline. planb reads and deletes with exactly those rights, never more.

Whoever can write Secrets in the manager's ``kueue-system`` writes the kubeconfig planb reaches a region with, on the
operator's machine. So the kubeconfig is read by planb.regions.access.kubeconfig.load_region (an https
server, certificate-authority-data and a token; nothing else, nothing run, read or written here), the Secret's name must
be a DNS-1123 subdomain and is quoted into the URL, and a ``Path`` location is refused (docs/security.md, "A region's
kubeconfig"); so must the region's own name be, which is quoted into the MultiKueueCluster's URL.

A region's API server is another party's too, so each request to it has an overall deadline and a size cap
(planb.kube_limits; `region_limits`): a slow or huge answer makes that region unreadable for the tick, never holds
the keeper or `planb status` (docs/security.md, "A region's answers are bounded").
"""

from __future__ import annotations

import base64
import binascii
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from planb.errors import UnreachableError, UsageError
from planb.kube import Kube, KubeError, Obj
from planb.kube_limits import Limits
from planb.kubeconfig import Connection
from planb.printable import printable
from planb.regions.access.kubeconfig import RegionKubeconfigError, is_dns_subdomain, load_region

KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
#: Kueue's namespace on the manager, where the MultiKueueClusters' Secrets live (its configuration's `namespace`).
KUEUE_NAMESPACE = "kueue-system"


#: Seconds a region's API server has for one request, from sending it to the last byte of the answer. A list of a
#: region's RayClusters or Workloads takes well under a second; 30 s is urllib3's per-read timeout planb used before,
#: now for the whole answer.
REGION_DEADLINE_S = 30.0
#: The most bytes of one answer from a region (decoded). planb's largest read there is the region's RayClusters,
#: listed cluster-wide (the keeper's rejoin): a RayCluster is a few to some tens of KiB, so 64 MiB is thousands.
REGION_MAX_BYTES = 64 << 20
DEADLINE_ENV = "PLANB_REGION_DEADLINE_S"
MAX_BYTES_ENV = "PLANB_REGION_MAX_BYTES"
_SIZE = re.compile(r"([0-9]+)(Ki|Mi|Gi)?")
_UNITS = {None: 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}


class RegionAccessError(UnreachableError):
    """The manager holds no usable kubeconfig for a region, or the region does not answer."""


def region_limits(environ: Mapping[str, str] = os.environ) -> Limits:
    """The limits of each request to a region: $PLANB_REGION_DEADLINE_S (seconds, above zero) and
    $PLANB_REGION_MAX_BYTES (bytes, or with Ki, Mi or Gi), else REGION_DEADLINE_S and REGION_MAX_BYTES. Raises
    UsageError naming the variable and the fix (`planb regions keep` and `planb status` read them at start)."""
    deadline, size = REGION_DEADLINE_S, REGION_MAX_BYTES
    if text := environ.get(DEADLINE_ENV, "").strip():
        try:
            deadline = float(text)
        except ValueError:
            deadline = math.nan
        if not math.isfinite(deadline) or deadline <= 0:
            raise UsageError(
                f"{DEADLINE_ENV}={text!r} is not a number of seconds above zero. Fix: set it to one (the default is "
                f"{REGION_DEADLINE_S:g}), or unset it"
            )
    if text := environ.get(MAX_BYTES_ENV, "").strip():
        match = _SIZE.fullmatch(text)
        if match is None or int(match.group(1)) == 0:
            raise UsageError(
                f"{MAX_BYTES_ENV}={text!r} is not a size above zero. Fix: set it to a number of bytes, or with Ki, Mi "
                f"or Gi (the default is {REGION_MAX_BYTES >> 20}Mi), or unset it"
            )
        size = int(match.group(1)) * _UNITS[match.group(2)]
    return Limits(deadline, size, deadline_setting=DEADLINE_ENV, size_setting=MAX_BYTES_ENV)


def kubeconfig_source(cluster: Obj) -> tuple[str, str]:
    """A MultiKueueCluster's (locationType, location): ("Secret", name) or ("Path", file).

    Kueue takes exactly one of ``kubeConfig`` and ``clusterProfileRef`` (apis/kueue/v1beta2/multikueue_types.go#L82).
    planb's policy: a region reached through a ClusterProfile is refused by name, because planb's roles write only
    kubeconfig Secrets and planb does not read ClusterProfiles."""
    cluster_source = (cluster.get("spec") or {}).get("clusterSource") or {}
    name = str((cluster.get("metadata") or {}).get("name", ""))
    if cluster_source.get("clusterProfileRef") and not cluster_source.get("kubeConfig"):
        raise RegionAccessError(
            f"MultiKueueCluster {name} uses clusterProfileRef, which planb cannot read: give it a kubeConfig Secret "
            "(the planb.gke multikueue role writes one per region)"
        )
    source = cluster_source.get("kubeConfig") or {}
    return str(source.get("locationType") or "Secret"), str(source.get("location") or "")


@dataclass(frozen=True)
class RegionRead:
    """One read of a region: a GET of `path` (the object, None where it is gone), or with `listing` its items
    (`selector`: a labelSelector)."""

    path: str
    listing: bool = False
    selector: str = ""


@dataclass(frozen=True)
class RegionAnswers:
    """What a region answered: its client (None where it could not be built) and each read's answer, or the exception
    that the read, or one before it, raised (a region that fails is asked nothing more that tick)."""

    kube: Kube | None
    answers: dict[RegionRead, Obj | list[Obj] | Exception | None]

    def get(self, read: RegionRead) -> Obj | None:
        """The object `read` found (None: gone); raises what reading it raised (KeyError: never made)."""
        found = self.answers[read]
        if isinstance(found, Exception):
            raise found
        if isinstance(found, list):
            raise TypeError(f"{read.path} was listed, not read")
        return found

    def items(self, read: RegionRead) -> list[Obj]:
        """The objects `read` listed; raises what reading them raised (KeyError: never made)."""
        found = self.answers[read]
        if isinstance(found, Exception):
            raise found
        if not isinstance(found, list):
            raise TypeError(f"{read.path} was read, not listed")
        return found


def read_regions(
    manager: Kube, wanted_reads: Mapping[str, Sequence[RegionRead]], connect: Callable[[Kube, str], Kube]
) -> dict[str, RegionAnswers]:
    """Each region's answers to its reads (`wanted_reads`), in order, each made once, with the client `connect` gives
    (region_kube). planb's policy: any error reading a region is recorded, not raised, and the region is asked nothing
    more, because one region must never stop the others (nor hold the tick for a deadline per read)."""
    found = {}
    for region, wanted in wanted_reads.items():
        answers: dict[RegionRead, Obj | list[Obj] | Exception | None] = {}
        kube = None
        try:
            kube = connect(manager, region)
            for read in dict.fromkeys(wanted):
                query = {"labelSelector": read.selector} if read.selector else None
                answers[read] = kube.items(read.path, query) if read.listing else kube.get(read.path)
        except Exception as exc:
            answers.update({read: exc for read in wanted if read not in answers})
        found[region] = RegionAnswers(kube, answers)
    return found


def region_kube(manager: Kube, region: str, limits: Limits | None = None) -> Kube:
    """A client for `region`, with the kubeconfig its MultiKueueCluster names (raises RegionAccessError), each of its
    requests under `limits` (default: `region_limits()`): one that passes them raises planb.kube.KubeLimitError.

    A kubeconfig planb's policy refuses is a RegionAccessError whose cause is the RegionKubeconfigError that names
    the field and the fix: `planb status` reports the region unreadable and the keeper goes on with the others."""
    conn, source = region_connection(manager, region)
    return Kube(Path(source), conn, limits or region_limits())


def region_connection(manager: Kube, region: str) -> tuple[Connection, str]:
    """The connection `region`'s kubeconfig Secret describes, and that Secret's name for messages (region_kube's
    reading, nothing sent to the region); raises RegionAccessError."""
    location, raw = region_secret(manager, region)
    source = f"Secret {KUEUE_NAMESPACE}/{location}"
    try:
        return load_region(raw, source), source
    except RegionKubeconfigError as exc:
        raise RegionAccessError(f"{region}: {exc}") from exc


def region_secret(manager: Kube, region: str) -> tuple[str, bytes]:
    """The name of the Secret in KUEUE_NAMESPACE that `region`'s MultiKueueCluster names, and the kubeconfig it holds
    (bytes, not yet read as a kubeconfig: planb.regions.access.kubeconfig.load_region does); raises
    RegionAccessError. planb's policy: a region whose name
    is not a DNS-1123 subdomain, as a MultiKueueCluster's name is, is refused before anything is asked, because the
    name comes from objects others write (the MultiKueueConfig's clusters, the keeper's ConfigMap) and goes into a
    path, where quoting leaves ``..`` as it is."""
    if is_dns_subdomain(region):
        return _named_secret(manager, region)
    shown = printable(repr(region[:100]), one_line=True)
    raise RegionAccessError(
        f"the region {shown} is not a DNS-1123 subdomain, as a MultiKueueCluster's name must be, so planb does "
        "not look it up. Fix: name regions by their MultiKueueClusters (the "
        "MultiKueueConfig's spec.clusters, the keeper's ConfigMap kueue-system/planb-regions-keeper)"
    )


def _named_secret(manager: Kube, region: str) -> tuple[str, bytes]:
    """region_secret's reading, once `region` is a DNS-1123 subdomain."""
    try:
        cluster = manager.get(f"{KUEUE}/multikueueclusters/{quote(region, safe='')}")
        if cluster is None:
            raise RegionAccessError(f"no MultiKueueCluster {region} on the manager")
        kind, location = kubeconfig_source(cluster)
        if kind != "Secret":
            # Kueue reads a Path on the kueue-controller-manager's own disk (kubernetes-sigs/kueue@v0.19.2
            # apis/kueue/v1beta2/multikueue_types.go#L50-L51), under /etc/multikueue/kubeconfigs only once the alpha
            # gate MultiKueueKubeConfigPathValidation is on (off by default in 0.19: pkg/features/kube_features.go
            # #L779-L781, pkg/controller/admissionchecks/multikueue/multikueuecluster.go#L1090-L1138).
            # planb's policy: refused, because here the same path is a file of the operator's machine, which the
            # writer of the MultiKueueCluster would have planb read and use.
            raise RegionAccessError(
                f"MultiKueueCluster {region} names its kubeconfig by locationType {kind} ({location!r}), which planb "
                "does not read: that path is on Kueue's controller, not on this machine. Fix: keep the kubeconfig in "
                f"a Secret in {KUEUE_NAMESPACE} (the planb.gke multikueue role writes one per region)"
            )
        if not is_dns_subdomain(location):
            raise RegionAccessError(
                f"MultiKueueCluster {region} names the kubeconfig Secret {location!r}, which is not a DNS-1123 "
                "subdomain as a Secret's name must be (lower-case letters, digits, '-' and '.'; at most 253). "
                f"Fix: name the Secret in {KUEUE_NAMESPACE} that holds the region's kubeconfig"
            )
        secret = manager.get(f"/api/v1/namespaces/{KUEUE_NAMESPACE}/secrets/{quote(location, safe='')}")
        data = ((secret or {}).get("data") or {}).get("kubeconfig")
        if not data:
            raise RegionAccessError(f"no kubeconfig Secret for {region} on the manager ({KUEUE_NAMESPACE}/{location})")
        source = f"Secret {KUEUE_NAMESPACE}/{location}"
        try:
            return location, base64.b64decode(str(data), validate=True)
        except (binascii.Error, ValueError):
            raise RegionAccessError(f"{region}: {source} holds a kubeconfig that is not base64") from None
    except KubeError as exc:
        raise RegionAccessError(f"{region}: {exc}") from exc
