"""The licence planb is published under, said once and the same everywhere.

galaxy.yml has said Apache-2.0 from the start; the repository and the collection carry the licence's text, and
pyproject.toml says it in PEP 639's terms, with the readme and the project's home that Chart.yaml and galaxy.yml
name.
"""

from __future__ import annotations

import tomllib

import yaml
from packaging.licenses import canonicalize_license_expression

from planb import paths

COLLECTION = paths.REPO / "collections" / "ansible_collections" / "planb" / "gke"
PROJECT = tomllib.loads((paths.REPO / "pyproject.toml").read_text())["project"]
GALAXY = yaml.safe_load((COLLECTION / "galaxy.yml").read_text())
CHART = yaml.safe_load((paths.REPO / "charts" / "planb" / "Chart.yaml").read_text())


def test_the_repository_carries_the_apache_2_0_text() -> None:
    text = (paths.REPO / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text  # the whole licence, not a pointer to it


def test_the_collection_carries_the_same_text() -> None:
    """ansible-galaxy builds the tarball from the collection's folder alone: its LICENSE is a copy of the root's."""
    assert (COLLECTION / "LICENSE").read_bytes() == (paths.REPO / "LICENSE").read_bytes()


def test_the_wheel_and_the_collection_name_one_licence() -> None:
    assert GALAXY["license"] == ["Apache-2.0"]
    assert canonicalize_license_expression(PROJECT["license"]) == "Apache-2.0"
    assert PROJECT["license-files"] == ["LICENSE"]
    # PEP 639: a licence expression and a License :: classifier are not given together.
    assert not [c for c in PROJECT["classifiers"] if c.startswith("License ::")]


def test_pyproject_names_the_readme_and_the_home_the_chart_and_galaxy_name() -> None:
    assert (paths.REPO / PROJECT["readme"]).is_file()
    urls = PROJECT["urls"]
    assert urls["Homepage"] == urls["Source"] == GALAXY["repository"] == CHART["home"]
    assert all(url.startswith(urls["Source"]) for url in urls.values())
