"""The regions_keeper role refuses an image that would float before any call (docs/regions.md, "The keeper on the
manager"): none, untagged, or `latest`. Its first tasks need only the manager's kubeconfig to be a file, so an empty
one stands in and no API server is reached: a refusal that let the role go on would fail at its first Kubernetes task,
which the output then names."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.integration.gke.modules import ansible_playbook

PLAY = """- name: The regions keeper's role alone
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Run the regions keeper on the manager
      ansible.builtin.include_role:
        name: planb.gke.regions_keeper
"""
REFUSAL = "Deployment needs an image with the planb package installed, pinned by a digest (name@sha256:...)"


def run_role(tmp_path: Path, image: str) -> str:
    """The role alone with `image`, an empty kubeconfig and one region: what ansible-playbook printed, its failure
    asserted (the empty kubeconfig fails it at its first call, if a check has not before)."""
    (tmp_path / "kubeconfig").write_text("")
    (tmp_path / "play.yml").write_text(PLAY)
    done = ansible_playbook(
        "-i", "localhost,", "-c", "local", str(tmp_path / "play.yml"),
        "-e", f"ansible_python_interpreter={sys.executable}",
        "-e", f"regions_keeper_kubeconfig={tmp_path / 'kubeconfig'}",
        "-e", '{"regions_keeper_regions": ["us-east5"]}',
        "-e", f"regions_keeper_image={image}",
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode != 0, out[-3000:]
    return out


@pytest.mark.parametrize("image", ["", "planb", "registry:5000/planb", "planb:latest", "registry:5000/planb:latest"])
def test_an_image_that_would_float_is_refused_before_any_call(tmp_path: Path, image: str) -> None:
    out = run_role(tmp_path, image)
    said = " ".join(out.split())  # the callback wraps long messages
    assert f'regions_keeper_image="{image}": the' in said and REFUSAL in said, out[-3000:]
    assert "Create the keeper's ServiceAccount" not in out, out[-3000:]


@pytest.mark.parametrize("image", ["registry:5000/planb:0.1.0", "planb@sha256:" + "0" * 64])
def test_a_pinned_image_passes_the_checks_and_the_role_goes_on_to_the_manager(tmp_path: Path, image: str) -> None:
    """A version tag, and a digest: past both checks, the role's next task is the ServiceAccount and its rights, which
    fails here only because the empty kubeconfig reaches no API server."""
    out = run_role(tmp_path, image)
    assert REFUSAL not in " ".join(out.split()), out[-3000:]
    assert "TASK [planb.gke.regions_keeper : Create the keeper's ServiceAccount" in out, out[-3000:]
