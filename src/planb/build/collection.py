"""The catalog facts the planb.gke Ansible collection needs, generated into the collection.

The collection is installed on ops controllers without the ``planb`` Python package, so it cannot
import the catalog. ``make values`` writes the facts into the collection's module_utils from this
module; a test fails when they are stale. The facts are data only, in two files so that a module's
payload carries only what it imports: ``machine_types.py`` (per TPU/GPU machine type what GKE
offers; the modules validate with it) and ``profiles.py`` (per profile the node pool and chart
values of one slice). How those scale by slice count, and how a plan's pools are named, is code:
``pool_layout.py`` is a verbatim copy of ``planb.catalog.pool_layout`` (standard library only), so
the catalog and the filters run one hand-written copy of it; likewise ``versions.py`` of
``planb.catalog.versions`` (how a GKE version is read and compared), which the modules' validation
and the GKE emulator share.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from planb.catalog import gpu, pool_layout, profiles, quotas, tpu, versions, zones
from planb.catalog.nodepool import node_pool
from planb.catalog.values import chart_values
from planb.paths import REPO

COLLECTION_DIR = REPO / "collections" / "ansible_collections" / "planb" / "gke"
MODULE_UTILS = COLLECTION_DIR / "plugins" / "module_utils"
#: Catalog modules the collection runs as they are: file name in module_utils -> the hand-written source.
COPIED: dict[str, Path] = {
    "pool_layout.py": Path(pool_layout.__file__),
    "versions.py": Path(versions.__file__),
}


def _quota(key: quotas.QuotaKey | None) -> dict[str, Any] | None:
    """A quota a machine type's pools consume (on-demand or preemptible), as the quota preflight looks it up."""
    if key is None:
        return None
    return {
        "display_name": key.display_name,
        "dimensions": dict(key.dimensions),
        "unit": key.unit,
        "unit_documented": key.unit_documented,
        "url": key.url,
    }


def _machine_types() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for gen in tpu.GENERATIONS:
        for machine in gen.machine_types:
            out[machine.name] = {
                "kind": "tpu",
                "generation": gen.name,
                "dimensions": gen.dimensions,
                "chips_per_vm": machine.chips_per_vm,
                "topologies": list(machine.topologies),
                "flex_start": gen.flex_start,
                "flex_start_note": gen.flex_start_note,
                "flex_start_url": gen.flex_start_url,
                "uses_placement_policy": gen.uses_placement_policy,
                "doc_url": gen.doc_url,
                "zones": list(zones.zones(gen.name)),
                "zones_url": zones.REGIONS_ZONES_URL,
                "zones_as_of": zones.REGIONS_ZONES_AS_OF,
                "flex_start_zones": list(zones.flex_start_zones(gen.name)),
                "flex_start_zones_url": zones.FLEX_START_ZONES_URL,
                "flex_start_zones_as_of": zones.FLEX_START_ZONES_AS_OF,
                "quota": _quota(quotas.TPU_ON_DEMAND.get(gen.name)),
                "preemptible_quota": _quota(quotas.TPU_PREEMPTIBLE.get(gen.name)),
            }
    for entry in gpu.MACHINES:
        out[entry.machine_type] = {
            "kind": "gpu",
            "generation": entry.family,
            "gpus_per_vm": entry.gpus_per_vm,
            "flex_start": entry.flex_start,
            "doc_url": entry.doc_url,
            "quota": _quota(quotas.GPU_ON_DEMAND.get(entry.gke_accelerator)),
            "preemptible_quota": _quota(quotas.GPU_PREEMPTIBLE.get(entry.gke_accelerator)),
        }
    return out


def _profile(prof: profiles.Profile) -> dict[str, Any]:
    machines = [prof.machine_type]
    entry = prof.entry
    if isinstance(entry, tpu.TpuSlice):
        machines += [
            m.name
            for m in entry.generation.machine_types
            if entry.topology in m.topologies and m.name != prof.machine_type
        ]
    return {
        "alias": prof.alias,
        "machine_type": prof.machine_type,
        "node_pools": {machine: node_pool(prof.name, 1, machine_type=machine) for machine in machines},
        "chart_values": chart_values(prof.name),
    }


def generated() -> dict[str, tuple[str, Any]]:
    """File name -> (docstring, data) of every generated module_utils file."""
    return {
        "machine_types.py": (
            "TPU and GPU machine types GKE offers, from planb's catalog: MACHINE_TYPES[name] -> facts.",
            _machine_types(),
        ),
        "profiles.py": (
            "planb's profiles: PROFILES[name] -> one slice's node pool and chart values; ALIASES.",
            {
                "profiles": {name: _profile(prof) for name, prof in profiles.PROFILES.items()},
                "aliases": dict(profiles.ALIASES),
            },
        ),
    }


def render(doc: str, data: Any) -> str:
    """The Python source of one generated file: the data as JSON, parsed at import."""
    text = json.dumps(data, indent=1, sort_keys=True)
    return (
        "# Generated from planb's accelerator catalog (src/planb/catalog) by `make values`. Do not edit:\n"
        "# change the catalog and regenerate; tests/unit/catalog/test_collection_facts.py fails when this is stale.\n"
        f'"""{doc}"""\n'
        "\n"
        "from __future__ import annotations\n"
        "\n"
        "import json\n"
        "from typing import Any\n"
        "\n"
        f'FACTS: dict[str, Any] = json.loads(\n    r"""\n{text}\n"""\n)\n'
    )


def copied(source: Path) -> str:
    """The generated copy of the catalog module ``source``: its text under a 'generated' header."""
    return (
        f"# Generated: a copy of src/planb/catalog/{source.name} made by `make values`. Do not edit:\n"
        "# change that file and regenerate; tests/unit/catalog/test_collection_facts.py fails when this is stale.\n"
        + source.read_text()
    )


def files(directory: Path = MODULE_UTILS) -> dict[Path, str]:
    """Path -> wanted content of every generated file under ``directory``."""
    wanted = {directory / name: render(doc, data) for name, (doc, data) in generated().items()}
    wanted.update({directory / name: copied(source) for name, source in COPIED.items()})
    return wanted


def stale(directory: Path = MODULE_UTILS) -> list[Path]:
    """The generated files under ``directory`` that are missing or differ from what ``write`` would write."""
    return [path for path, content in files(directory).items() if not path.is_file() or path.read_text() != content]


def write(directory: Path = MODULE_UTILS) -> list[Path]:
    """(Re)write the generated files; returns their paths."""
    written = []
    for path, content in files(directory).items():
        path.write_text(content)
        written.append(path)
    return written


if __name__ == "__main__":
    for written_path in write():
        print(f"wrote {written_path}")
