"""The seed's flow from the collection's tarball alone: what an ops controller outside the checkout runs.

The `site` topology was converged by `tests/support/e2e/outside.py`: the tarball `make collection` builds, installed
into an empty collections path, an inventory of its own and the collection README's one-line playbook. Here: what
that controller installed is the checkout's collection file for file (plus the queues chart it carries), and the
converge made the seed's queues. That a second run changes nothing and writes nothing is shown once for both
routes, by the molecule scenario's converge on this same topology (test_molecule_local.py): the checkout's
site.yml is the same play from the same files, and a third identical run of it here would only repeat it.
"""

from __future__ import annotations

from pathlib import Path

from planb.build.collection import COLLECTION_DIR
from planb.build.collection_tarball import BUNDLED_CHART, CHART_DIR
from planb.kube import Kube
from tests.support.e2e.topologies import outside_controller


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def test_the_tarballs_site_playbook_converged_the_seed_from_the_checkouts_own_files(site: Path) -> None:
    installed = outside_controller().home / "collections" / "ansible_collections" / "planb" / "gke"
    assert installed.is_dir() and not installed.is_symlink()
    got = _files(installed)
    # ansible-galaxy turns galaxy.yml into its two manifests; the rest is the checkout's collection and the chart
    # it carries.
    got.pop("MANIFEST.json")
    got.pop("FILES.json")
    want = {
        name: data
        for name, data in _files(COLLECTION_DIR).items()
        if name != "galaxy.yml" and not name.startswith(("tests/output/", "output/")) and not name.endswith(".tar.gz")
    }
    want |= {str(BUNDLED_CHART / name): data for name, data in _files(CHART_DIR).items() if not name.endswith(".tgz")}
    assert sorted(set(got) ^ set(want)) == []
    assert [name for name in want if got[name] != want[name]] == []
    kube = Kube(site)
    flavors = set(kube.names("/apis/kueue.x-k8s.io/v1beta2/resourceflavors"))
    assert {"on-demand", "dws"} <= flavors
