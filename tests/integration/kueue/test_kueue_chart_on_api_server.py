"""The Kueue role's GKE path checked by a real API server: the pinned chart, rendered with the values the role
hands to Helm, is accepted by kube-apiserver (server-side apply, dry run).

The API server is the local stack's own build and configuration, started alone on free loopback ports (etcd and
kube-apiserver, as the snapshot and etcd tests start them): the chart needs no controller, so the test is no e2e
test and runs beside the e2e tier. The local stack runs Kueue as a host process, so the chart is not installed
there either; a server-side dry run makes the API server validate and admit every object (CRDs, Deployment,
Services, RBAC, webhook configurations, the manager ConfigMap) exactly as an install would, and persist none. The
host process's configuration comes from the same merge (`tasks/config.yml`) as the values the chart path hands to
Helm.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from planb.local.stack.control_plane import ControlPlane
from planb.local.stack.snapshot import WITHOUT
from tests.support.shared.kueue.kueue_role import configure_ahead, helm_installed_config, role_config

pytestmark = [pytest.mark.tools]

#: What site.yml's inventory adds in failover mode (playbooks/vars/kueue.yml): waitForPodsReady.
FAILOVER = {
    "kueue_manager_config": {
        "waitForPodsReady": {
            "timeout": "480s",
            "blockAdmission": False,
            "requeuingStrategy": {"timestamp": "Eviction", "backoffBaseSeconds": 5},
        }
    }
}
configure_ahead(("helm", FAILOVER), ("host", FAILOVER))


@pytest.fixture()
def api_server(tmp_path: Path) -> Iterator[Path]:
    """A throwaway etcd and kube-apiserver on free loopback ports; their kubeconfig. The chart's namespace is
    made for real first: a dry-run create of the namespace persists nothing for the namespaced objects after it."""
    plane = ControlPlane.throwaway(tmp_path / "local")
    kubeconfig = tmp_path / "local" / "kubeconfig"
    try:
        plane.create(kubeconfig, without=WITHOUT)
        subprocess.run(
            ["kubectl", f"--kubeconfig={kubeconfig}", "create", "namespace", "kueue-system"],
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        yield kubeconfig
    finally:
        plane.delete()


def _kubectl(kubeconfig: Path, verb: str, docs: list[dict[str, Any]]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["kubectl", f"--kubeconfig={kubeconfig}", verb, "--dry-run=server", "-f", "-"],
        # A stream of JSON objects, which kubectl reads as it reads YAML documents, without a pure-Python YAML dump of
        # the chart's 1.7 MB.
        input="\n".join(json.dumps(doc) for doc in docs),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def dry_run(kubeconfig: Path, docs: list[dict[str, Any]]) -> tuple[list[str], str]:
    """Each object as an install onto this API server would send it, admitted but not persisted: a create of what is
    not there, a whole-object replace (PUT) of what is (the stack's own CRDs and webhook configurations: a merge
    with them would not be what an install of the chart sends). Returns kubectl's lines and its errors."""
    created = _kubectl(kubeconfig, "create", docs)
    there = set(re.findall(r'\(AlreadyExists\).*"([^"]+)" already exists', created.stderr))
    errors = "".join(line + "\n" for line in created.stderr.splitlines() if "(AlreadyExists)" not in line)
    lines = [line for line in created.stdout.splitlines() if line.strip()]
    existing = [doc for doc in docs if doc["metadata"]["name"] in there]
    if existing:
        replaced = _kubectl(kubeconfig, "replace", existing)
        lines += [line for line in replaced.stdout.splitlines() if line.strip()]
        errors += replaced.stderr
    return lines, errors


def test_the_pinned_chart_with_the_roles_values_is_accepted_by_the_api_server(api_server: Path, tmp_path: Path) -> None:
    helm = role_config(tmp_path, "helm", FAILOVER)
    config, docs = helm_installed_config(tmp_path, helm["helm_values"])
    assert config["waitForPodsReady"]["timeout"] == "480s"
    kinds = {doc["kind"] for doc in docs}
    assert {"CustomResourceDefinition", "Deployment", "ConfigMap", "MutatingWebhookConfiguration"} <= kinds
    lines, errors = dry_run(api_server, docs)
    assert errors == ""
    assert len(lines) == len(docs), "\n".join(lines)
    assert all(line.endswith("(server dry run)") for line in lines), "\n".join(lines)
    # The dry run is a real check: a Deployment the API server cannot take is refused.
    (deployment,) = [doc for doc in docs if doc["kind"] == "Deployment"]
    broken = {**deployment, "spec": {**deployment["spec"], "replicas": -1}}
    lines, errors = dry_run(api_server, [broken])
    assert lines == [] and "spec.replicas" in errors, errors
    # One source of settings: the host mode's configuration is the same merge the chart path hands to Helm.
    host = role_config(tmp_path, "host", FAILOVER)
    assert json.loads(host["host_argument"]) == helm["merged"]
    assert yaml.safe_load(helm["helm_values"]["managerConfig"]["controllerManagerConfigYaml"]) == helm["merged"]
