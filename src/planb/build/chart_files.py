"""Files the chart ships under ``charts/planb/files/``, generated from their one source.

``make values`` runs ``python -m planb.build.chart_files``; a test fails when a file is stale.

* ``files/tpu-topologies.yaml``: per TPU node label value (``accelerator.gkeAccelerator``) the
  generation's topology shape and, per topology, the machine types that form it with their chips
  per host. The chart's value checks read it, so which topologies are valid stays a catalog fact.
* ``files/rung-kinds.yaml``: the capacity kinds a rung can be, as ``planb.build.chart_kinds`` writes it.
* ``files/*.py`` and ``files/planb_train/``: ``training/``'s Python files byte for byte, at the same
  paths: ``train.py``, the job's entry script, ``smoke.py``, and the package ``planb_train`` train.py
  imports (``TRAIN_FILES``). The job's ConfigMap carries each verbatim, one key per file (its path with
  "." for "/", ``train_file_key``: a key holds no "/"), and the pods mount each at its path under /app
  (the volume's ``items``), so the copies have no header; they are copies, not symlinks, because helm
  warns about symlinks on every command.
* ``files/failover/*.py``: the modules of ``src/planb/failover/`` the controller runs on
  (``python -m planb.failover``), byte for byte. The queues chart mounts them from a ConfigMap as
  the package ``planb/failover/`` in a stock Python image; they use the standard library only.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

from planb.build import chart_kinds
from planb.catalog import tpu
from planb.paths import REPO

CHART_FILES = REPO / "charts" / "planb" / "files"
TRAINING = REPO / "training"
#: The training folder's package, which train.py imports: its copy is CHART_FILES / TRAIN_PACKAGE.
TRAIN_PACKAGE = "planb_train"
#: training/train.py, smoke.py and every module of the package, as paths relative to training/ (and to files/).
TRAIN_FILES = tuple(
    sorted(
        [path.name for path in TRAINING.glob("*.py")]
        + [str(path.relative_to(TRAINING)) for path in (TRAINING / TRAIN_PACKAGE).rglob("*.py")]
    )
)


def train_file_key(path: str) -> str:
    """The job's ConfigMap key of training file ``path`` (relative to training/): its "/" as "." (the chart's
    planb.trainFileKey does the same)."""
    return path.replace("/", ".")


TPU_TOPOLOGIES = CHART_FILES / "tpu-topologies.yaml"
#: The stockout failover controller's package, which the queues chart runs from a ConfigMap: every module of it
#: (local mode's switch, which the controller never imports, is planb.local.failover_settings).
FAILOVER_PACKAGE = REPO / "src" / "planb" / "failover"
FAILOVER_MODULES = (
    "__init__.py",
    "__main__.py",
    "controller.py",
    "decisions.py",
    "exposition.py",
    "kubeapi.py",
    "metrics.py",
    "moves.py",
    "names.py",
)
FAILOVER_COPIES = CHART_FILES / "failover"

_HEADER = (
    "# Generated from the planb accelerator catalog by `make values` (python -m planb.build.chart_files).\n"
    "# Do not edit: change src/planb/catalog and run `make values`. The chart's checks read it:\n"
    "# gkeAccelerator -> generation, dimensions, topologies (smallest first) and\n"
    "# chipsPerHost (topology -> machine type -> chips per host of a slice of that shape).\n"
)


def tpu_topologies() -> dict[str, dict[str, Any]]:
    """What the chart checks a TPU profile's values against, keyed by the GKE accelerator label."""
    table: dict[str, dict[str, Any]] = {}
    for gen in tpu.GENERATIONS:
        chips_per_host: dict[str, dict[str, int]] = {}
        for topology in gen.topologies:
            chips_per_host[topology] = {
                m.name: tpu.TpuSlice(gen, m.name, topology).chips_per_vm
                for m in gen.machine_types
                if topology in m.topologies
            }
        table[gen.gke_accelerator] = {
            "generation": gen.name,
            "dimensions": gen.dimensions,
            "topologies": list(gen.topologies),
            "chipsPerHost": chips_per_host,
        }
    return table


def render_tpu_topologies() -> str:
    body = yaml.safe_dump(tpu_topologies(), sort_keys=False, default_flow_style=None, width=140)
    return _HEADER + body


def expected() -> dict[Path, bytes]:
    """Path -> exact content of every generated file under charts/planb/files/."""
    return {
        TPU_TOPOLOGIES: render_tpu_topologies().encode(),
        chart_kinds.RUNG_KINDS: chart_kinds.render_rung_kinds().encode(),
        **{CHART_FILES / name: (TRAINING / name).read_bytes() for name in TRAIN_FILES},
        **{FAILOVER_COPIES / name: (FAILOVER_PACKAGE / name).read_bytes() for name in FAILOVER_MODULES},
    }


def write_all() -> list[Path]:
    """(Re)write the generated chart files, replacing a symlink with a regular file; remove the copy of a
    training module that is gone (the chart ships every ``files/*.py`` and ``files/planb_train/**.py``)."""
    written = []
    files = expected()
    shipped = set(CHART_FILES.glob("*.py")) | set((CHART_FILES / TRAIN_PACKAGE).rglob("*.py"))
    for stale in sorted(shipped - set(files)):
        stale.unlink()
    for path, content in files.items():
        if path.is_symlink():
            path.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        written.append(path)
    return written


def main() -> int:
    for path in write_all():
        print(f"wrote {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
