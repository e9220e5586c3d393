"""kubectl's habits: every KUBECONFIG file merged, --context, and -n from the context.

client-go's loader (tools/clientcmd/loader.go, ClientConfigLoadingRules.Load) merges KUBECONFIG's list in order: a
file that does not exist is skipped, the first current-context set wins, an entry (cluster, user, context) of a
name is the first file's, and an entry's relative paths are read from the folder of the file that holds it.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest
import yaml

from planb import cli
from planb.kube import Kube
from planb.kubeconfig import KubeconfigError, load
from planb.status import cli as status_cli


def _config(path: Path, current: str | None, contexts: dict[str, dict[str, str]], **sections: object) -> Path:
    config: dict[str, object] = {
        "apiVersion": "v1",
        "kind": "Config",
        "contexts": [{"name": name, "context": context} for name, context in contexts.items()],
        **sections,
    }
    if current:
        config["current-context"] = current
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture()
def two_files(tmp_path: Path) -> list[Path]:
    """A list as KUBECONFIG names it: a file that sets the current context, one missing, one with the rest."""
    first = _config(
        tmp_path / "a" / "config",
        "team",
        {"team": {"cluster": "shared", "user": "admin", "namespace": "ml-team"}},
        clusters=[{"name": "shared", "cluster": {"server": "https://first.example:443"}}],
    )
    second = _config(
        tmp_path / "b" / "config",
        "prod",
        {
            "prod": {"cluster": "prod", "user": "admin"},
            "team": {"cluster": "prod", "user": "admin", "namespace": "shadowed"},
        },
        clusters=[
            {"name": "shared", "cluster": {"server": "https://shadowed.example:443"}},
            {"name": "prod", "cluster": {"server": "https://prod.example:443"}},
        ],
        users=[{"name": "admin", "user": {"client-certificate": "pki/admin.crt", "client-key": "pki/admin.key"}}],
    )
    return [first, tmp_path / "missing", second]


def test_every_file_is_read_and_the_first_to_set_a_field_wins(two_files: list[Path]) -> None:
    conn = load(two_files)
    assert conn.server == "https://first.example:443"  # context team and cluster shared: the first file's
    assert conn.namespace == "ml-team"
    assert conn.cert_file == str(two_files[2].parent / "pki" / "admin.crt")  # the user's file's folder
    assert conn.key_file == str(two_files[2].parent / "pki" / "admin.key")


def test_a_context_other_than_the_current_one(two_files: list[Path]) -> None:
    conn = load(two_files, "prod")
    assert (conn.server, conn.namespace) == ("https://prod.example:443", "default")


def test_a_context_no_file_has_is_named(two_files: list[Path]) -> None:
    with pytest.raises(KubeconfigError, match="has no context named 'staging'"):
        load(two_files, "staging")


def test_an_explicit_kubeconfig_must_exist_while_a_listed_one_may_not(tmp_path: Path) -> None:
    with pytest.raises(KubeconfigError, match="No such file"):
        load(tmp_path / "missing")
    with pytest.raises(KubeconfigError, match="not a kubeconfig with a current-context"):
        load([tmp_path / "missing"])


@pytest.fixture()
def seen(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Kube, argparse.Namespace]]:
    """What `planb status` would read the cluster with: its Kube and its arguments (no request is sent)."""
    calls: list[tuple[Kube, argparse.Namespace]] = []

    def once(kube: Kube, args: argparse.Namespace) -> int:
        calls.append((kube, args))
        return 0

    monkeypatch.setattr(status_cli, "_once", once)
    return calls


def test_planb_status_merges_kubeconfig_and_takes_the_contexts_namespace(
    two_files: list[Path], seen: list[tuple[Kube, argparse.Namespace]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join(map(str, two_files)))
    assert cli.main(["status"]) == 0
    assert cli.main(["status", "--context", "prod"]) == 0
    assert cli.main(["status", "--context", "prod", "-n", "other"]) == 0
    assert [(kube.conn.server, args.namespace) for kube, args in seen] == [
        ("https://first.example:443", "ml-team"),
        ("https://prod.example:443", "default"),
        ("https://prod.example:443", "other"),
    ]


def test_planb_status_names_an_unknown_context(
    two_files: list[Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join(map(str, two_files)))
    assert cli.main(["status", "--context", "staging"]) == 3
    assert "has no context named 'staging'" in capsys.readouterr().err
