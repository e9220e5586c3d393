"""Where planb keeps things: the checkout, the tool link, the runtime state."""

from __future__ import annotations

import os
from pathlib import Path

#: The checkout (planb is installed editable from it).
REPO = Path(__file__).resolve().parents[2]


def state_dir() -> Path:
    """Runtime state of local mode (kubeconfig, pids, logs); ignored by git."""
    return Path(os.environ.get("PLANB_STATE_DIR", REPO / ".state"))


def tools_dir() -> Path:
    """The pinned toolchain, linked by hack/build-tools.sh into the checkout."""
    return Path(os.environ.get("PLANB_TOOLS_DIR", REPO / ".tools"))


def tool(name: str) -> Path:
    """Path of a pinned binary (kube-apiserver, kueue, helm, ...)."""
    return tools_dir() / "bin" / name


def manifests_dir() -> Path:
    """CRDs, webhook manifests and charts copied from the pinned Go modules."""
    return tools_dir() / "manifests"


def local_kubeconfig() -> Path:
    """The kubeconfig `planb local up` writes for the local stack."""
    return state_dir() / "local" / "kubeconfig"


#: The files that pin the tools hack/build-tools.sh builds: the toolchain's, the chart's publishing tools' (ct,
#: helm-docs) and the previous Kueue and KubeRay operator the upgrade e2e test starts from; the last two have a cache
#: key of their own so that pinning one does not rebuild the toolchain.
VERSION_FILES = ("versions.env", "chart-tools.env", "upgrade-from.env")


def versions() -> dict[str, str]:
    """The pinned tool versions (hack/versions.env, hack/chart-tools.env and hack/upgrade-from.env)."""
    out: dict[str, str] = {}
    for name in VERSION_FILES:
        for line in (REPO / "hack" / name).read_text().splitlines():
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                key, _, value = line.partition("=")
                out[key.strip()] = value.strip()
    return out
