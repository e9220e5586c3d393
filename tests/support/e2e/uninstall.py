"""`helm uninstall --wait` without its two-second polling.

Helm v3.19.5 waits for an uninstall's deleted objects by looking at them every 2 s (pkg/kube/wait.go,
waitForDeletedResources: `wait.PollUntilContextCancel(ctx, 2*time.Second, ...)`), so each `--wait` ends up to 2 s
after the objects are gone; the e2e tier made about 25 such calls. `uninstall` lets helm uninstall without waiting,
then `kubectl wait --for=delete` watches the same objects (the releases' manifests, less those helm keeps: the
`helm.sh/resource-policy: keep` annotation) until each is gone: the same guarantee, as soon as it holds.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import yaml

from planb import paths

#: Helm's annotation for an object an uninstall leaves in place (helm pkg/kube/resource_policy.go).
KEEP = "helm.sh/resource-policy"


def _deleted(manifest: str) -> list[dict[str, object]]:
    """The objects of a release's manifest that an uninstall deletes (helm keeps those annotated `keep`)."""
    out = []
    for obj in yaml.safe_load_all(manifest):
        if isinstance(obj, dict) and obj.get("kind"):
            annotations = (obj.get("metadata") or {}).get("annotations") or {}
            if annotations.get(KEEP) != "keep":
                out.append(obj)
    return out


def uninstall(
    kubeconfig: Path, *releases: str, namespace: str = "default", check: bool = True, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`helm uninstall RELEASES -n NAMESPACE --wait`, waited for by a watch; helm's result (AssertionError when
    `check` and helm or the wait fails)."""
    helm = [str(paths.tool("helm")), f"--kubeconfig={kubeconfig}", "-n", namespace]
    objects: list[dict[str, object]] = []
    for release in releases:
        got = subprocess.run([*helm, "get", "manifest", release], capture_output=True, text=True, check=False)
        if got.returncode == 0:  # a release that is not there: helm uninstall says so below
            objects += _deleted(got.stdout)
    done = subprocess.run([*helm, "uninstall", *releases], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        if check:
            raise AssertionError(f"helm uninstall {' '.join(releases)} failed:\n{done.stdout}\n{done.stderr}")
        return done
    if objects:
        kubectl = shutil.which("kubectl") or "kubectl"
        waited = subprocess.run(
            [kubectl, f"--kubeconfig={kubeconfig}", "-n", namespace, "wait", "--for=delete", "-f", "-",
             f"--timeout={timeout:.0f}s"],
            input=yaml.safe_dump_all(objects), capture_output=True, text=True, check=False, timeout=timeout + 30,
        )  # fmt: skip
        if waited.returncode != 0:
            raise AssertionError(
                f"{', '.join(releases)}: objects left {timeout:.0f} s after helm uninstall:\n{waited.stderr}"
            )
    return done
