"""The stamp that tells `up` which CRD files the stack's etcd took in (planb.local.stack.crds: record, applied)."""

from __future__ import annotations

from pathlib import Path

import pytest

from planb.local.stack import crds


@pytest.fixture()
def manifests(tmp_path: Path) -> list[Path]:
    folder = tmp_path / "kueue"
    folder.mkdir()
    files = [folder / "a.yaml", folder / "b.yaml"]
    for i, path in enumerate(files):
        path.write_text(f"kind: CustomResourceDefinition # {i}\n")
    return files


def test_the_names_recorded_for_these_files_are_read_back(manifests: list[Path], tmp_path: Path) -> None:
    stamp = tmp_path / "crds.applied"
    crds.record(stamp, crds.digest(manifests), ["workloads.kueue.x-k8s.io", "rayjobs.ray.io"])
    assert crds.applied(stamp, crds.digest(manifests)) == frozenset({"workloads.kueue.x-k8s.io", "rayjobs.ray.io"})


def test_a_changed_renamed_or_missing_file_makes_the_stamp_say_nothing(manifests: list[Path], tmp_path: Path) -> None:
    stamp = tmp_path / "crds.applied"
    crds.record(stamp, crds.digest(manifests), ["workloads.kueue.x-k8s.io"])
    manifests[1].write_text("kind: CustomResourceDefinition # changed\n")
    assert crds.applied(stamp, crds.digest(manifests)) is None
    crds.record(stamp, crds.digest(manifests), ["workloads.kueue.x-k8s.io"])
    renamed = manifests[1].with_name("c.yaml")
    manifests[1].rename(renamed)
    assert crds.applied(stamp, crds.digest([manifests[0], renamed])) is None
    assert crds.applied(stamp, crds.digest(manifests[:1])) is None


@pytest.mark.parametrize("text", ["", "not json", "[]", '{"digest": "x", "names": ["a"]}', None])
def test_no_stamp_or_an_unreadable_one_says_nothing(manifests: list[Path], tmp_path: Path, text: str | None) -> None:
    stamp = tmp_path / "crds.applied"
    if text is not None:
        stamp.write_text(text)
    assert crds.applied(stamp, crds.digest(manifests)) is None


def test_a_stamp_with_no_names_says_nothing(manifests: list[Path], tmp_path: Path) -> None:
    stamp = tmp_path / "crds.applied"
    crds.record(stamp, crds.digest(manifests), [])
    assert crds.applied(stamp, crds.digest(manifests)) is None
