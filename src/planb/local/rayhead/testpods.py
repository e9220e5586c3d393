"""What the kubelet would do for the chart's `helm test` pods on the local stack: run their check, end them.

KWOK runs no container: a pod it binds is Running until deleted, and kwok's own stages complete only pods a
Job owns (planb.local.stack.kwokctl_config), so `helm test` would wait out its timeout and never learn whether
the check holds. Completing the pod without running the check (a Job hook kwok completes) would pass whatever
the cluster holds. So the Ray head stand-in, the stack's one process that already watches every pod and ends
the pods whose work it does (the submitter pods, planb.local.rayhead.submitter), does for a running pod
annotated ``helm.sh/hook: test`` what its kubelet would: it mounts the pod's volumes from the API (ConfigMaps,
the ServiceAccount token), runs the container's command as a host process, serves its output as the pod's log
(planb.local.rayhead.podlogs, for `helm test --logs` and `kubectl logs`) and ends the pod Succeeded or Failed
from the exit code (planb.local.rayhead.podstatus), which is what `helm test` waits for.

planb's policy, because this executes a command read from the cluster on this machine with this user's rights:

* only the chart's own checks run: the command is ``python <file of a mounted ConfigMap> [ARG ...]``
  (planb.local.rayhead.launch's shape: no other program, no interpreter option, no shell), one container and
  no init containers, and the file is byte for byte one of ``charts/planb/files/tests/*.py`` in this checkout.
  Anything else ends the pod Failed, its log naming the refusal; nothing of it runs;
* volumes are what such a check needs: ``configMap``; ``emptyDir``; and ``projected`` with the sources the
  ServiceAccount admission plugin writes (a ``serviceAccountToken``, issued by the TokenRequest API for the
  pod's ServiceAccount and bound to the pod, as the kubelet asks for it; the ``kube-root-ca.crt`` ConfigMap;
  the pod's namespace from ``downwardAPI``). Any other volume, or a ``subPath``, is refused. Every file is
  written inside the pod's work directory (``launch.inside``), which is removed when the pod ends;
* the environment is built as for a `run` payload (``launch.payload_env``): the container's literal ``env``
  (a ``valueFrom`` is refused), then ``KUBERNETES_SERVICE_HOST``/``PORT`` naming the stack's API server on
  loopback, where the kubelet names the ``kubernetes`` Service: a check reads the API as in a pod, with its
  own ServiceAccount's rights and nothing of this user's;
* it runs at most ``activeDeadlineSeconds`` (300 s without one: helm test's default timeout), then is killed
  and the pod Failed.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from planb import paths
from planb.errors import PlanbError
from planb.kube import Kube, KubeError, Obj
from planb.local.rayhead.api_names import api_name
from planb.local.rayhead.heads import RayHeads, log
from planb.local.rayhead.launch import LaunchRefusedError, host_argv, inside, payload_env, write_config_map
from planb.local.rayhead.podlogs import PodLog
from planb.local.rayhead.pods import running
from planb.local.rayhead.podstatus import finish_pod
from planb.local.rayhead.settings import SAFE_NAME, logs_dir
from planb.local.statefile import open_private

#: The chart's own checks: the only code a `helm test` pod has run on this machine.
CHECKS = paths.REPO / "charts" / "planb" / "files" / "tests"
#: How long a check runs when its pod sets no activeDeadlineSeconds: `helm test`'s default --timeout.
DEFAULT_DEADLINE_SECONDS = 300
HOOK = "helm.sh/hook"
_WHY = "because the stand-in runs a helm test pod's command on this machine with your rights"


class HookPodRefusedError(PlanbError):
    """A `helm test` pod, or a part of it, that the stand-in does not run on this machine."""


def is_test_hook(pod: Obj) -> bool:
    """Whether the pod is a Helm test hook (its hook annotation, a comma-separated list, names ``test``)."""
    hooks = str(((pod.get("metadata") or {}).get("annotations") or {}).get(HOOK) or "")
    return "test" in [hook.strip() for hook in hooks.split(",")]


def shipped_check(script: Path) -> Path:
    """The chart's check that `script` is a copy of; refused unless it is one byte for byte."""
    shipped = CHECKS / script.name
    if not shipped.is_file() or script.read_bytes() != shipped.read_bytes():
        raise HookPodRefusedError(
            f"planb's policy: {script.name} is not one of the chart's test scripts ({CHECKS.relative_to(paths.REPO)}"
            f"/*.py as this checkout has them), and only those run, {_WHY}"
        )
    return shipped


def config_map_data(kube: Kube, namespace: str, source: Obj) -> dict[str, Any]:
    """A configMap volume's (or projected source's) data; {} for a missing one marked optional."""
    name = api_name(source.get("name"))
    if name is None:
        raise HookPodRefusedError(f"the ConfigMap name {source.get('name')!r} is not a valid name")
    found = kube.get(f"/api/v1/namespaces/{namespace}/configmaps/{name}")
    if found is None:
        if source.get("optional") is True:
            return {}
        raise HookPodRefusedError(f'configmap "{name}" not found (the kubelet would not start the pod either)')
    return dict(found.get("data") or {})


def write_private(root: Path, path: str, text: str, what: str) -> None:
    target = inside(root, path, what)
    target.unlink(missing_ok=True)
    with open_private(target, "a") as out:
        out.write(text)


def write_projected(kube: Kube, pod: Obj, root: Path, projected: Obj) -> None:
    """The projected volume's sources, as the kubelet writes the ServiceAccount admission plugin's volume."""
    meta, spec = pod["metadata"], pod.get("spec") or {}
    namespace = str(meta["namespace"])
    root.mkdir(parents=True, exist_ok=True)
    for source in projected.get("sources") or []:
        if "serviceAccountToken" in source:
            token = source["serviceAccountToken"]
            account = api_name(spec.get("serviceAccountName") or "default")
            if account is None:
                raise HookPodRefusedError(f"the ServiceAccount name {spec.get('serviceAccountName')!r} is not valid")
            request = {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {
                    "audiences": [token["audience"]] if token.get("audience") else [],
                    "expirationSeconds": int(token.get("expirationSeconds") or 3607),
                    "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"]},
                },
            }
            issued = kube.create(f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token", request)
            write_private(root, str(token.get("path") or "token"), issued["status"]["token"], "the token path")
        elif "configMap" in source:
            write_config_map(
                root, "/", config_map_data(kube, namespace, source["configMap"]), source["configMap"].get("items")
            )
        elif "downwardAPI" in source:
            fields = {"metadata.namespace": namespace, "metadata.name": str(meta["name"])}
            for item in source["downwardAPI"].get("items") or []:
                field = (item.get("fieldRef") or {}).get("fieldPath")
                if field not in fields:
                    raise HookPodRefusedError(f"the downwardAPI field {field!r} (only {', '.join(fields)})")
                write_private(root, str(item.get("path")), fields[field], "the downwardAPI item path")
        else:
            raise HookPodRefusedError(f"a projected source of kind {sorted(source)} (only the ServiceAccount's)")


def mount_volumes(kube: Kube, pod: Obj, container: Obj, workdir: Path) -> tuple[dict[str, Path], set[Path]]:
    """Each volumeMount's mountPath -> the directory written for it, and the files of its ConfigMap volumes."""
    namespace = str(pod["metadata"]["namespace"])
    volumes = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or []}
    mounts: dict[str, Path] = {}
    files: set[Path] = set()
    for index, mount in enumerate(container.get("volumeMounts") or []):
        volume = volumes.get(mount.get("name"))
        if volume is None or mount.get("subPath") or mount.get("subPathExpr"):
            raise HookPodRefusedError(f"the volumeMount {mount.get('name')!r} (no such volume, or a subPath)")
        root = workdir / "volumes" / f"{index}-{SAFE_NAME.sub('_', str(volume['name']))}"
        if "configMap" in volume:
            files |= write_config_map(
                root, "/", config_map_data(kube, namespace, volume["configMap"]), volume["configMap"].get("items")
            )[1]
        elif "projected" in volume:
            write_projected(kube, pod, root, volume["projected"])
        elif "emptyDir" in volume:
            root.mkdir(parents=True, exist_ok=True)
        else:
            raise HookPodRefusedError(f"the volume {volume['name']!r} of kind {sorted(set(volume) - {'name'})}")
        mounts[str(mount["mountPath"])] = root
    return mounts, files


def container_env(container: Obj) -> dict[str, str]:
    """The container's literal environment; a value from elsewhere (valueFrom, envFrom) is refused."""
    if container.get("envFrom"):
        raise HookPodRefusedError("envFrom (only literal env values are taken)")
    env = {}
    for item in container.get("env") or []:
        if "valueFrom" in item:
            raise HookPodRefusedError(f"env {item.get('name')!r} from valueFrom (only literal values are taken)")
        env[str(item["name"])] = str(item.get("value") or "")
    return env


class HelmTestPods:
    """The running `helm test` pods being run, one thread each."""

    def __init__(self, heads: RayHeads, api_server: str) -> None:
        """`api_server`: the stack's API server URL (https://127.0.0.1:PORT), what a check's pod is told to read."""
        self.kube, self.state_dir, self.heads = heads.kube, heads.state_dir, heads
        self.api = urlsplit(api_server)
        self.handled: set[str] = set()  # uids of test pods taken
        self.lock = threading.Lock()
        heads.listeners.append(self.reconcile)

    def reconcile(self, pods: list[Obj]) -> None:
        """Start every running test hook pod not taken yet."""
        for pod in pods:
            if not running(pod) or not is_test_hook(pod):
                continue
            uid = pod["metadata"]["uid"]
            with self.lock:
                if uid in self.handled:
                    continue
                self.handled.add(uid)
            threading.Thread(target=self.run, args=(pod,), name=f"helm test {uid}", daemon=True).start()

    def run(self, pod: Obj) -> None:
        """Run the pod's check, publish its output as the pod's log and end the pod from its exit code."""
        meta = pod["metadata"]
        where = f"{meta['namespace']}/{meta['name']}"
        safe = SAFE_NAME.sub("_", f"{meta['namespace']}_{meta['name']}_{meta['uid']}")
        base = logs_dir(self.state_dir) / "helm-tests"
        output, workdir = base / f"{safe}.out", self.state_dir / "rayhead" / "work" / "helm-tests" / safe
        try:
            code = self.execute(pod, workdir, output)
        except (HookPodRefusedError, LaunchRefusedError, KubeError, OSError, subprocess.SubprocessError) as exc:
            code = self.refused(output, where, exc)
        except (KeyError, TypeError, ValueError) as exc:  # a pod spec of an unexpected shape
            code = self.refused(output, where, exc)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)  # the token and the volumes go with the pod's run
        containers = (pod.get("spec") or {}).get("containers") or [{}]
        pod_log = PodLog(self.kube, pod, str(containers[0].get("name") or ""), output, base / f"{safe}.log")
        refused = pod_log.publish()
        if refused:
            log(f"helm test pod {where}: its log stays empty: {refused}")
        pod_log.copy()
        if not self.heads.pod_exists(meta["uid"]):
            return  # deleted meanwhile: there is nothing to write
        try:
            finish_pod(self.kube, pod, code)
            log(f"helm test pod {where} exited {code}")
        except KubeError as exc:
            log(f"helm test pod {where}: could not write its status: {exc}")

    @staticmethod
    def refused(output: Path, where: str, exc: Exception) -> int:
        """Say in the pod's log why it did not run; exit code 1, so the pod ends Failed rather than staying Running
        until helm's timeout."""
        with open_private(output, "a") as out:
            out.write(f"planb local: helm test pod {where} did not run: {exc}\n")
        return 1

    def execute(self, pod: Obj, workdir: Path, output: Path) -> int:
        """The check's exit code, its output appended to `output`; refused unless it is the chart's own."""
        spec = pod.get("spec") or {}
        containers = spec.get("containers") or []
        if len(containers) != 1 or spec.get("initContainers"):
            raise HookPodRefusedError(f"planb's policy: one container and no init containers, {_WHY}")
        (container,) = containers
        workdir.mkdir(parents=True, exist_ok=True)
        mounts, files = mount_volumes(self.kube, pod, container, workdir)
        entrypoint = shlex.join([str(a) for a in [*(container.get("command") or []), *(container.get("args") or [])]])
        argv = host_argv(entrypoint, mounts, files)
        shipped_check(Path(argv[1]))
        overrides = {
            "KUBERNETES_SERVICE_HOST": self.api.hostname or "",
            "KUBERNETES_SERVICE_PORT": str(self.api.port or 443),
        }
        env = payload_env(workdir, container_env(container), {}, overrides)
        deadline = int(spec.get("activeDeadlineSeconds") or DEFAULT_DEADLINE_SECONDS)
        with open_private(output, "ab") as out:
            try:
                done = subprocess.run(
                    argv, env=env, cwd=workdir, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                    timeout=deadline, check=False,
                )  # fmt: skip
            except subprocess.TimeoutExpired:
                out.write(f"planb local: killed after activeDeadlineSeconds ({deadline} s)\n".encode())
                return 137
        return done.returncode if done.returncode >= 0 else 128 - done.returncode
