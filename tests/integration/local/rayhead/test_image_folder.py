"""A `run` payload whose code is inside the job's image (job.command): a folder on this machine stands in for it,
copied to the container path at each launch; only `python <a file of it>` runs, and a link in it is refused."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from planb.local.rayhead import settings as settings_mod
from planb.local.rayhead.launch import LaunchRefusedError, launch_for


def _team(tmp_path: Path) -> Path:
    team = tmp_path / "team"
    (team / "lib").mkdir(parents=True)
    (team / "train.py").write_text("print('ran')\n")
    (team / "lib" / "util.py").write_text("X = 1\n")
    return team


def test_the_image_folder_is_copied_to_its_container_path_and_its_file_runs(tmp_path: Path) -> None:
    team, work = _team(tmp_path), tmp_path / "work"
    work.mkdir()
    launch = launch_for("python /workspace/train.py --steps 3", {}, {}, {}, {}, work, set(), {"/workspace": str(team)})
    assert launch.argv == [sys.executable, str(work / "workspace" / "train.py"), "--steps", "3"]
    assert (work / "workspace" / "lib" / "util.py").read_text() == "X = 1\n"
    # The next launch gets the folder as it is then (a new image), nothing left of the last copy.
    (work / "workspace" / "stale.py").write_text("")
    (team / "train.py").write_text("print('v2')\n")
    launch_for("python /workspace/train.py", {}, {}, {}, {}, work, set(), {"/workspace": str(team)})
    assert not (work / "workspace" / "stale.py").exists()
    assert (work / "workspace" / "train.py").read_text() == "print('v2')\n"


@pytest.mark.parametrize("entrypoint", ["python /workspace/other.py", "python -m train", "python /etc/passwd"])
def test_only_a_file_of_the_image_folder_runs(tmp_path: Path, entrypoint: str) -> None:
    team = _team(tmp_path)
    with pytest.raises(LaunchRefusedError, match=r"^planb's policy: the entrypoint .* is refused"):
        launch_for(entrypoint, {}, {}, {}, {}, tmp_path, set(), {"/workspace": str(team)})


def test_a_link_in_the_image_folder_is_refused(tmp_path: Path) -> None:
    team = _team(tmp_path)
    (team / "secrets").symlink_to(Path.home())
    with pytest.raises(LaunchRefusedError, match="link"):
        launch_for("python /workspace/train.py", {}, {}, {}, {}, tmp_path / "w", set(), {"/workspace": str(team)})


def test_an_image_folder_must_name_absolute_paths(tmp_path: Path) -> None:
    with pytest.raises(settings_mod.SettingsError, match="image must map absolute container paths"):
        settings_mod.Payload(mode="run", image={"workspace": str(tmp_path)}).validate("--image-dir")
