"""The regions keeper as the regions playbook deploys it (roles/regions_keeper), run on this machine: kwok runs no
container, so the e2e regions topology runs the Deployment's own command and arguments as a host process, with a token
of the Deployment's ServiceAccount (the TokenRequest API) in a kubeconfig of this stack's server and CA in place of its
--in-cluster (the pod's own ServiceAccount, planb.kubeconfig.in_cluster).

`rerun_role` applies the role again with the settings the converge gave it, read back from what it applied (the
image, the regions, the origin), in check mode or for real: a converged manager must find nothing to change.

`allowed` asks the API server whether that ServiceAccount may do one thing (a SelfSubjectAccessReview sent with its
own token): the rights a single look of the keeper does not use on a quiet manager.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from planb import paths
from planb.kube import Kube
from planb.kubeconfig import load

#: The Deployment's argument that makes the keeper reach the manager as its pod's ServiceAccount.
IN_POD = "--in-cluster"


def deployment(kube: Kube, namespace: str = "kueue-system", name: str = "planb-regions-keeper") -> dict[str, Any]:
    found = kube.get(f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}")
    assert found is not None, f"no Deployment {namespace}/{name} on the manager: the regions playbook did not apply it"
    return found


def container(deploy: dict[str, Any]) -> dict[str, Any]:
    containers = deploy["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1, containers
    return dict(containers[0])


def service_account_kubeconfig(admin: Path, deploy: dict[str, Any], where: Path, seconds: int = 600) -> Path:
    """A kubeconfig for the Deployment's ServiceAccount on the stack, as its pod reaches it with --in-cluster: this
    stack's server and CA and a fresh token of that ServiceAccount (`seconds` long) in a file."""
    kube = Kube(admin)
    namespace = deploy["metadata"]["namespace"]
    pod = deploy["spec"]["template"]["spec"]
    account = pod["serviceAccountName"]
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": seconds}}
    token = kube.create(f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token", request)["status"]["token"]
    token_file = where / "keeper-token"
    token_file.write_text(token + "\n")
    token_file.chmod(0o600)
    stack = load(admin)
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "manager", "cluster": {"server": stack.server, "certificate-authority": stack.ca_file}}],
        "users": [{"name": account, "user": {"tokenFile": str(token_file)}}],
        "contexts": [{"name": "manager", "context": {"cluster": "manager", "user": account, "namespace": namespace}}],
        "current-context": "manager",
    }
    out = where / "keeper.kubeconfig"
    out.write_text(yaml.safe_dump(config))
    out.chmod(0o600)
    return out


def as_deployed(admin: Path, where: Path) -> tuple[Path, list[str]] | None:
    """The kubeconfig of the Deployment's ServiceAccount (a token of an hour) and the Deployment's arguments but its
    --in-cluster: `planb regions keep` as the role wrote it, for a host process; None while there is no Deployment
    (before the converge)."""
    kube = Kube(admin)
    if kube.get("/apis/apps/v1/namespaces/kueue-system/deployments/planb-regions-keeper") is None:
        return None
    deploy = deployment(kube)
    where.mkdir(mode=0o700, parents=True, exist_ok=True)
    kubeconfig = service_account_kubeconfig(admin, deploy, where, seconds=3600)
    return kubeconfig, [a for a in container(deploy)["args"] if a != IN_POD]


def run_once(deploy: dict[str, Any], kubeconfig: Path) -> subprocess.CompletedProcess[str]:
    """The Deployment's container command and arguments, `--once`, as a host process (`planb` is this checkout's
    `python -m planb.cli`), its --kubeconfig the ServiceAccount's, its plain env values set."""
    spec = container(deploy)
    assert spec["command"][0] == "planb", spec["command"]
    assert IN_POD in spec["args"], spec["args"]
    args = [f"--kubeconfig={kubeconfig}" if a == IN_POD else a for a in spec["args"]]
    env = {e["name"]: e["value"] for e in spec.get("env") or [] if "value" in e}
    return subprocess.run(
        [sys.executable, "-m", "planb.cli", *spec["command"][1:], *args, "--once"],
        env={**os.environ, **env},
        cwd=paths.REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def allowed(kubeconfig: Path, verb: str, resource: str, namespace: str = "", name: str = "", group: str = "") -> bool:
    """Whether the kubeconfig's user may `verb` the `resource` ("rayjobs/status": a subresource), as the API server's
    authorizer answers a SelfSubjectAccessReview."""
    kind, _, sub = resource.partition("/")
    attributes = {"verb": verb, "resource": kind, "subresource": sub, "namespace": namespace, "name": name}
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {**attributes, "group": group}},
    }
    answer = Kube(kubeconfig).create("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review)
    return bool(answer["status"].get("allowed"))


PLAY = """- name: The regions keeper's role alone, again
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Run the regions keeper on the manager, with its rights
      ansible.builtin.include_role:
        name: planb.gke.regions_keeper
"""


def rerun_role(admin: Path, deploy: dict[str, Any], where: Path, *flags: str) -> str:
    """ansible-playbook of the role alone on the manager with the settings its Deployment shows (`flags`: --check,
    --diff); its output, the recap included."""
    kube = Kube(admin)
    args = container(deploy)["args"]
    option = {a.split("=", 1)[0]: a.split("=", 1)[1] for a in args if "=" in a}
    config = kube.get(f"/apis/kueue.x-k8s.io/v1beta2/multikueueconfigs/{option['--config']}")
    assert config is not None, option
    settings = {
        "regions_keeper_kubeconfig": str(admin),
        "regions_keeper_image": container(deploy)["image"],
        "regions_keeper_regions": config["spec"]["clusters"],
        "regions_keeper_origin": option.get("--origin", ""),
        "ansible_python_interpreter": sys.executable,
    }
    (where / "play.yml").write_text(PLAY)
    (where / "vars.json").write_text(json.dumps(settings))
    playbook = str(Path(sys.executable).parent / "ansible-playbook")
    done = subprocess.run(
        [playbook, "-i", "localhost,", "-c", "local", str(where / "play.yml"), "-e", f"@{where / 'vars.json'}", *flags],
        cwd=paths.REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def changed_tasks(out: str) -> list[str]:
    """The names of the role's tasks that an ansible-playbook output reports changed."""
    names, task = [], ""
    for line in out.splitlines():
        if line.startswith("TASK ["):
            task = line.removeprefix("TASK [").split("]", 1)[0].split(" : ", 1)[-1]
        elif line.startswith("changed: ") and task not in names:  # a looped task: once, however many items
            names.append(task)
    return names
