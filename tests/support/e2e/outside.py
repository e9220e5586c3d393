"""An ops controller outside the checkout: the collection's tarball installed into an empty collections path, an
inventory of its own (a copy of inventories/local) and the one-line playbook of the collection's README.

The e2e suite's `site` topology converges through it, so the seed's whole flow (cluster, both plans' pools, Kueue
and the queues chart the tarball carries) is what an operator with only the tarball gets; `run` passes the local
stack's state and tool folders by environment, as the inventory reads them (PLANB_STATE_DIR, PLANB_TOOLS_DIR).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from planb import paths
from planb.build import collection_tarball

BIN = Path(sys.executable).parent
#: The collection README's playbook, verbatim in spirit: the whole flow is the collection's site playbook.
PLAYBOOK = """\
- name: planb's cluster, plans and queues
  ansible.builtin.import_playbook: planb.gke.site
"""
ANSIBLE_CFG = """\
[defaults]
collections_path = ./collections
interpreter_python = auto_silent
retry_files_enabled = false
callback_result_format = yaml
"""


class OutsideController:
    """A folder outside the checkout with only the tarball installed, an inventory and site.yml."""

    def __init__(self) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="planb-ops-controller-"))
        self.tarball = collection_tarball.build(self.home / "dist")
        target = self.home / "collections"
        galaxy = str(BIN / "ansible-galaxy")
        installed = self._run(galaxy, "collection", "install", str(self.tarball), "-p", str(target))
        if installed.returncode != 0:
            raise AssertionError(f"ansible-galaxy collection install failed:\n{installed.stdout}{installed.stderr}")
        shutil.copytree(paths.REPO / "inventories" / "local", self.home / "inventory")
        (self.home / "site.yml").write_text(PLAYBOOK)
        (self.home / "ansible.cfg").write_text(ANSIBLE_CFG)

    def _env(self) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith("ANSIBLE_") and key not in ("PYTHONPATH", "PLANB_STATE_DIR", "PLANB_TOOLS_DIR")
        }
        env.update(
            ANSIBLE_CONFIG=str(self.home / "ansible.cfg"),
            ANSIBLE_NOCOLOR="1",
            PLANB_STATE_DIR=str(paths.state_dir()),
            PLANB_TOOLS_DIR=str(paths.tools_dir()),
        )
        return env

    def _run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(argv), cwd=self.home, env=self._env(), capture_output=True, text=True, timeout=600, check=False
        )

    def ansible_playbook(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """`ansible-playbook -i inventory <args>` in the controller's folder (args name the playbook first)."""
        done = self._run(str(BIN / "ansible-playbook"), "-i", "inventory", *args)
        if check and done.returncode != 0:
            raise AssertionError(f"ansible-playbook {' '.join(args)} failed:\n{done.stdout[-4000:]}\n{done.stderr}")
        return done

    def remove(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)
