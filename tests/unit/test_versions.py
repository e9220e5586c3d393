"""The pinned versions live in one file; what repeats them elsewhere must agree."""

from __future__ import annotations

import re

import yaml

from planb import paths
from planb.build.collection import COLLECTION_DIR


def test_kueue_role_default_is_the_pinned_version() -> None:
    defaults = yaml.safe_load((COLLECTION_DIR / "roles" / "kueue" / "defaults" / "main.yml").read_text())
    assert defaults["kueue_version"] == paths.versions()["KUEUE_VERSION"]


def test_kuberay_role_default_is_the_pinned_version() -> None:
    """The KubeRay site.yml installs is the one the local stack builds and Kueue's RayJob integration is tested with."""
    defaults = yaml.safe_load((COLLECTION_DIR / "roles" / "kuberay" / "defaults" / "main.yml").read_text())
    assert defaults["kuberay_version"] == paths.versions()["KUBERAY_VERSION"]


def test_the_build_uses_every_pin_and_pins_everything_it_uses() -> None:
    """A pin nothing builds is dead; a version the build names but does not pin is unpinned."""
    script = (paths.REPO / "hack" / "build-tools.sh").read_text()
    used = set(re.findall(r"\$\{?([A-Z][A-Z0-9_]*_VERSION)\b", script))
    assert used == set(paths.versions())


def test_every_pin_is_a_go_module_version() -> None:
    """`go install module@VERSION` takes a semantic version (or pseudo-version) with its leading v."""
    semver = re.compile(r"v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?")
    assert {k: v for k, v in paths.versions().items() if not semver.fullmatch(v)} == {}
