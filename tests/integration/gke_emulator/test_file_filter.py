"""planb.gke.private_file_holds: a no-op converge leaves a file be only when it is as the role would write it."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

import pytest
from ansible.errors import AnsibleFilterError


@pytest.fixture(scope="module")
def holds() -> Callable[..., bool]:
    module = importlib.import_module("ansible_collections.planb.gke.plugins.filter.files")
    return module.FilterModule().filters()["private_file_holds"]  # type: ignore[no-any-return]


def test_a_private_file_with_the_content_holds_it(tmp_path: Path, holds: Callable[..., bool]) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text("apiVersion: v1\nkind: Config\n")
    path.chmod(0o600)
    assert holds(str(path), "apiVersion: v1\nkind: Config\n") is True
    assert holds(str(path), "apiVersion: v1\nkind: Config") is False  # byte for byte: the last newline counts
    assert holds(str(path), "apiVersion: v1\nkind: Other\n") is False
    path.chmod(0o640)  # readable by the group: written again, 0600
    assert holds(str(path), "apiVersion: v1\nkind: Config\n") is False
    assert holds(str(path), "apiVersion: v1\nkind: Config\n", mode="0640") is True


def test_a_missing_file_a_link_or_a_directory_holds_nothing(tmp_path: Path, holds: Callable[..., bool]) -> None:
    assert holds(str(tmp_path / "none"), "") is False
    target = tmp_path / "target"
    target.write_text("x")
    target.chmod(0o600)
    (tmp_path / "link").symlink_to(target)
    assert holds(str(tmp_path / "link"), "x") is False  # copy would replace the link with a file
    (tmp_path / "dir").mkdir(mode=0o700)
    assert holds(str(tmp_path / "dir"), "") is False


def test_a_mode_that_is_not_octal_is_refused(tmp_path: Path, holds: Callable[..., bool]) -> None:
    with pytest.raises(AnsibleFilterError, match="mode 'rw' is not an octal mode"):
        holds(str(tmp_path / "x"), "", mode="rw")
