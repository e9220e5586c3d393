"""The preflight's helm check (plugins/module_utils/helm_version.py, the planb.gke.helm_version action): helm 3 passes,
helm 4 and anything else is refused naming the binary, the version, why and the fix.

Every output here is a real one, but the ``+g<commit>`` form, which is what helm's ``formatVersion`` prints for a
build that knows its commit (a released binary):

* ``v3.19.5`` and the helm 3 ``plugin list``: the pinned helm (hack/versions.env, built by hack/build-tools.sh).
* ``v4.2.4`` and the helm 4 ``plugin list``: helm.sh/helm/v4@v4.2.4 built from the Go module proxy as the pinned one
  is (``go install`` with ``-X helm.sh/helm/v4/internal/version.version=v4.2.4``, no commit, so no ``+g<commit>``:
  helm's ``formatVersion``, pkg/cmd/version.go#L92-L101 at v4.2.4), with one local plugin named ``diff`` installed
  (the name kubernetes.core.helm looks up); helm 4 adds TYPE, APIVERSION, PROVENANCE and SOURCE columns.
* ``/bin/sh: 1: /nonexistent/helm: not found`` (127): dash, the ``/bin/sh`` that runs the action's command.
"""

from __future__ import annotations

import re

import pytest
import yaml
from ansible_collections.kubernetes.core.plugins.module_utils.helm import parse_helm_plugin_list
from ansible_collections.planb.gke.plugins.module_utils import helm_version
from ansible_collections.planb.gke.plugins.module_utils.helm_version import HelmVersionError, check

from planb import paths

HELM3_PLUGIN_LIST = "NAME\tVERSION\tDESCRIPTION              \ndiff\t3.9.14 \ta local plugin named diff\n"
HELM4_PLUGIN_LIST = (
    "NAME\tVERSION\tTYPE  \tAPIVERSION\tPROVENANCE\tSOURCE \ndiff\t3.9.14 \tcli/v1\tlegacy    \tlocal dev \tunknown\n"
)


def test_the_pinned_kubernetes_core_cannot_read_helm_4_s_plugin_list() -> None:
    """Why helm 4 is refused: kubernetes.core.helm reads `helm plugin list` on a re-run (is helm-diff there?), three
    columns a line; with any plugin installed helm 4's lines hold six."""
    assert parse_helm_plugin_list(output=HELM3_PLUGIN_LIST.splitlines()) == [
        ("diff", "3.9.14", "a local plugin named diff")
    ]
    with pytest.raises(ValueError, match="too many values to unpack"):
        parse_helm_plugin_list(output=HELM4_PLUGIN_LIST.splitlines())


def test_helm_3_passes_with_its_version() -> None:
    assert check("/repo/.tools/bin/helm", 0, "v3.19.5\n", "") == "3.19.5"
    assert check("helm", 0, "v3.0.0+g1234567\n", "") == "3.0.0"  # formatVersion's form with a commit


def test_helm_4_is_refused_naming_the_version_why_and_the_fix() -> None:
    with pytest.raises(HelmVersionError) as refused:
        check("helm", 0, "v4.2.4\n", "", "kueue_queues_helm_binary")
    message = str(refused.value)
    assert message.startswith("planb: helm is helm 4.2.4 (`helm version --short`: v4.2.4), and the kubernetes.core "
                              "6.2.0 planb pins drives helm >=3.0.0,<4.0.0 only"), message  # fmt: skip
    assert "its kubernetes.core.helm fails with helm 4 on every re-run of an installed release" in message
    assert "kubernetes.core/issues/1041" in message and "kubernetes.core/pull/1039" in message
    assert "Fix: install a helm 3 release (planb's toolchain builds and tests v3.19.5" in message
    assert "set kueue_queues_helm_binary to its path, or put it first on PATH" in message


def test_a_helm_that_does_not_run_or_prints_no_version_is_refused() -> None:
    with pytest.raises(HelmVersionError, match=r"failed \(no such program: helm is not installed there"):
        check("/nonexistent/helm", 127, "", "/bin/sh: 1: /nonexistent/helm: not found\n")
    with pytest.raises(HelmVersionError, match="printed no version in 'oops', which is not a helm version"):
        check("helm", 0, "oops\n", "")
    with pytest.raises(HelmVersionError, match="it runs helm 3's commands"):
        check("helm", 0, "v2.17.0\n", "")


def test_the_pins_the_check_names_are_the_repository_s() -> None:
    required = yaml.safe_load((paths.REPO / "requirements.yml").read_text())["collections"]
    (core,) = [c for c in required if c["name"] == "kubernetes.core"]
    assert core["version"] == helm_version.KUBERNETES_CORE
    assert paths.versions()["HELM_VERSION"] == helm_version.TESTED
    assert re.fullmatch(r"v3\.\d+\.\d+", helm_version.TESTED)
