"""The multikueue role's region token on a throwaway API server, as tests/integration/regions read it: kubectl as a
given kubeconfig, the kubeconfig the manager's Secret holds for the worker, a token's claims, where a token leaks into
output, and what an identity may do (SelfSubjectAccessReview)."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path
from typing import Any

import yaml

NAMESPACE = "kueue-system"
ACCOUNT = "planb-multikueue"
WORKER = "region-a"


def kubectl(kubeconfig: Path, *args: str, stdin: str | None = None, check: bool = True) -> str:
    done = subprocess.run(
        ["kubectl", f"--kubeconfig={kubeconfig}", *args],
        input=stdin, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0 or not check, f"kubectl {' '.join(args)}: {done.stderr}"
    return done.stdout


def recap(done: subprocess.CompletedProcess[str]) -> dict[str, int]:
    line = next(line for line in done.stdout.splitlines() if line.startswith("localhost") and "ok=" in line)
    return {k: int(v) for k, v in (field.split("=") for field in line.split(":", 1)[1].split())}


def stored_kubeconfig(kubeconfig: Path) -> dict[str, Any]:
    """The kubeconfig the manager's Secret holds for the worker."""
    secret = json.loads(kubectl(kubeconfig, "get", "secret", f"{WORKER}-multikueue", "-n", NAMESPACE, "-o", "json"))
    return yaml.safe_load(base64.b64decode(secret["data"]["kubeconfig"]))


def as_region(kubeconfig: Path, tmp_path: Path, token: str | None = None) -> Path:
    """A kubeconfig file that acts as the region token does (or as `token`, on the same server)."""
    config = stored_kubeconfig(kubeconfig)
    if token is not None:
        config["users"][0]["user"]["token"] = token
    path = tmp_path / "region.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return path


def token_of(kubeconfig: Path) -> str:
    return str(stored_kubeconfig(kubeconfig)["users"][0]["user"]["token"])


def claims(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def leaks(output: str, token: str) -> list[str]:
    """Each form of the token found in `output`: itself, base64-encoded (a Secret's data), and any JWT's opening in
    either form (`eyJ` is base64 of '{"', `ZXlK` that again)."""
    forms = {"token": token, "token, base64": base64.b64encode(token.encode()).decode(), "eyJ": "eyJ", "ZXlK": "ZXlK"}
    return [name for name, form in forms.items() if form in output]


def allowed(
    kubeconfig: Path, verb: str, resource: str, name: str = "", namespace: str = NAMESPACE, group: str = ""
) -> bool:
    """A SelfSubjectAccessReview as `kubeconfig`'s identity: may it `verb` `resource` (`name`) in `namespace`?"""
    plural, _, subresource = resource.partition("/")
    attributes = {"verb": verb, "group": group, "resource": plural, "subresource": subresource, "name": name}
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview"}
    review["spec"] = {"resourceAttributes": {**attributes, "namespace": namespace}}
    answer = kubectl(
        kubeconfig, "create", "--validate=false", "-o=jsonpath={.status.allowed}", "-f", "-", stdin=json.dumps(review)
    )
    return answer == "true"
