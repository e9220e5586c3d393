"""What a `run` payload may execute on this machine, and how it is started: files, command, environment.

`planb local rayhead set --run` makes the Ray head stand-in execute a RayJob's entrypoint as a host process,
with this user's rights and outside any container. So the stand-in runs only what the job itself
ships, in a shape it can check:

* the entrypoint is ``python <file> [ARG ...]`` (or ``python3``), where the file is one the stand-in
  wrote from a ConfigMap volume of the head container or copied from the payload's image folder; no other
  program, no interpreter option, no shell syntax (Ray's job manager runs an entrypoint through a shell; here no
  shell runs, so what a shell would do is refused instead of silently differing);
* every file written for a ConfigMap volume (its ``mountPath``, its items' ``path``) lies inside the
  RayJob's work directory: a path with ``..``, or one that leads out through a link, is refused;
* the code inside the job's image (a job that runs its own program, ``job.command``): KWOK pulls no image and runs
  no container, so the payload names a folder on this machine for a container path (``--image-dir PATH=FOLDER``),
  and each launch copies it to that path in the work directory, as the image's layer puts it in every container
  (a link in it is refused, as is a folder that is not there);
* an emptyDir volume is a new directory of the launch's own (mode 0700) in the work directory, as the kubelet
  gives each pod its own: what a job keeps there (the training job's stop-notice file) is never another run's;
* a container path under a volume's ``mountPath``, in the entrypoint or in a value of the container's ``env``,
  is mapped onto that volume's directory;
* the environment is built, not inherited: from this machine only ``PATH`` (with planb's interpreter
  first), the locale and ``TZ``/``TMPDIR``; ``HOME`` and ``PYTHONPATH`` are the work directory and
  ``PYTHONUNBUFFERED`` is 1 (its log is written as it runs); then the head container's literal ``env``,
  the runtime env's ``env_vars`` and the payload's ``--env``. Nothing else of the user's environment
  (cloud credentials, ``SSH_AUTH_SOCK``, ``KUBECONFIG``, ``RAY_*``, ``PLANB_*``) reaches the payload. A `run`
  payload's ``TMPDIR`` is then a folder of its own, removed when it ends (planb.local.rayhead.payloads).

A refusal is a `LaunchRefusedError`; the stand-in ends the job FAILED with its text (planb.local.rayhead.heads).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
import tempfile
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from planb.errors import PlanbError

#: The interpreters an entrypoint may name; both become planb's own (the environment with Ray and JAX).
PYTHONS = frozenset({"python", "python3"})
#: What a shell would act on: an argument holding one is refused, since no shell runs here.
SHELL_SYNTAX = re.compile(r"[;&|<>`$()\n]")
#: The variables a payload takes from this machine's environment (the rest is built, see the module's doc).
HOST_ENV = ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR")

_WHY = "because --run executes it as a process on this machine with your rights"


class LaunchRefusedError(PlanbError):
    """The entrypoint or a volume of the job is not something the stand-in runs on this machine."""


@dataclass
class Launch:
    """How to start a job's entrypoint as a host process (mode `run`)."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    #: The head container's emptyDir volumes: mountPath -> the launch's own directory (`empty_dirs`). The Ray head
    #: stand-in maps a worker pod's path under the same mountPath onto it (planb.local.rayhead.shutdown).
    empty_dirs: dict[str, Path] = field(default_factory=dict)


def inside(root: Path, path: str, what: str) -> Path:
    """`path` (a container path or a relative one) as a path under `root`; refused if it would leave it."""
    parts = [p for p in PurePosixPath(path).parts if p != "/"]
    if ".." in parts:
        raise LaunchRefusedError(
            f"planb's policy: {what} {path!r} is refused, because '..' would leave the work directory"
        )
    target = root.joinpath(*parts)
    if not target.resolve().is_relative_to(root.resolve()):
        raise LaunchRefusedError(
            f"planb's policy: {what} {path!r} is refused, because it leads out of the work directory"
        )
    return target


def write_config_map(workdir: Path, mount_path: str, data: Mapping[str, Any], items: Any) -> tuple[Path, set[Path]]:
    """Write a ConfigMap volume as the kubelet would mount it, under `workdir`: (its directory, the files).

    Without `items` every key is a file named after it; with them only the listed keys, at their paths
    (https://kubernetes.io/docs/concepts/storage/volumes/#configmap).
    """
    local = inside(workdir, mount_path, "the volume mountPath")
    local.mkdir(parents=True, exist_ok=True)
    files: set[Path] = set()
    listed = items if isinstance(items, list) and items else [{"key": k, "path": k} for k in data]
    for item in listed:
        key = item.get("key") if isinstance(item, dict) else None
        if not isinstance(key, str) or key not in data:
            continue
        target = inside(local, str(item.get("path") or key), f"the ConfigMap item path of key {key!r}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.unlink(missing_ok=True)  # a link left there is replaced, never written through
        target.write_text(str(data[key]))
        files.add(target)
    return local, files


def image_folder(workdir: Path, mount_path: str, folder: Path) -> tuple[Path, set[Path]]:
    """Copy `folder` (what stands in for the image's code at `mount_path`) under `workdir`, replacing an earlier
    launch's copy: (its directory, the files). A link in it, or a folder that is not there, is refused."""
    if not folder.is_dir():
        raise LaunchRefusedError(f"the image folder {folder} for {mount_path} is not a directory on this machine")
    local = inside(workdir, mount_path, "the image path")
    if local.exists():
        shutil.rmtree(local)
    files: set[Path] = set()
    for source in sorted(folder.rglob("*")):
        if source.is_symlink():
            raise LaunchRefusedError(f"planb's policy: the image folder's link {source} is refused, as any link is")
        if "__pycache__" in source.parts or not source.is_file():
            continue
        target = local / source.relative_to(folder)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        files.add(target)
    return local, files


def empty_dirs(workdir: Path, container: Mapping[str, Any], volumes: Mapping[Any, Any]) -> dict[str, Path]:
    """Each of the container's emptyDir volumeMounts: its mountPath -> a new directory of its own under `workdir`
    (``tempfile.mkdtemp``: mode 0700, a name no other launch has), as the kubelet makes one per pod."""
    made: dict[str, Path] = {}
    for mount in container.get("volumeMounts") or []:
        volume = volumes.get(mount.get("name")) or {}
        if "emptyDir" in volume and mount.get("mountPath"):
            made[str(mount["mountPath"])] = Path(tempfile.mkdtemp(prefix="emptydir-", dir=workdir))
    return made


def host_argv(entrypoint: str, mounts: Mapping[str, Path], files: Collection[Path]) -> list[str]:
    """The entrypoint as the host command: container paths under a mount mapped onto its files, `python`
    as this interpreter; refused unless it is ``python <a file in files> [ARG ...]``."""
    try:
        tokens = shlex.split(entrypoint)
    except ValueError as exc:
        raise LaunchRefusedError(f"planb's policy: the entrypoint {entrypoint!r} is refused ({exc})") from exc
    shape = f"only 'python <file from a mounted ConfigMap or the image folder> [ARG ...]' runs, {_WHY}"
    if len(tokens) < 2 or tokens[0] not in PYTHONS:
        raise LaunchRefusedError(f"planb's policy: the entrypoint {entrypoint!r} is refused: {shape}")
    shell = [t for t in tokens if SHELL_SYNTAX.search(t)]
    if shell:
        raise LaunchRefusedError(
            f"planb's policy: the entrypoint {entrypoint!r} is refused: {shape}, and no shell runs it "
            f"(shell syntax in {shell[0]!r})"
        )
    argv = [sys.executable] + [_mapped(token, mounts) for token in tokens[1:]]
    script = Path(argv[1])
    if tokens[1].startswith("-") or not any(script == f or script.resolve() == f.resolve() for f in files):
        raise LaunchRefusedError(
            f"planb's policy: the entrypoint {entrypoint!r} is refused: {shape}; {tokens[1]!r} is not a file "
            "of the head container's ConfigMap volumes"
        )
    return argv


def _mapped(token: str, mounts: Mapping[str, Path]) -> str:
    for mount, local in sorted(mounts.items(), key=lambda kv: -len(kv[0])):
        base = mount.rstrip("/")
        if token == base or token.startswith(base + "/"):
            return str(local) + token[len(base) :]
    return token


def payload_env(
    workdir: Path,
    container_env: Mapping[str, str],
    runtime_env_vars: Mapping[str, str],
    overrides: Mapping[str, str],
) -> dict[str, str]:
    """The payload's whole environment (the module's doc says what goes in, in which order)."""
    env = {name: os.environ[name] for name in HOST_ENV if name in os.environ}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH") or os.defpath])
    env.setdefault("LANG", "C.UTF-8")
    # The job's log is written as it runs, as Ray streams a job's output (a payload killed with its head would
    # otherwise lose what it had printed in its buffer).
    env["PYTHONUNBUFFERED"] = "1"
    env.update(container_env)
    env.update(runtime_env_vars)
    env.update(HOME=str(workdir), PYTHONPATH=str(workdir))
    env.update(overrides)
    return env


def launch_for(
    entrypoint: str,
    mounts: Mapping[str, Path],
    container_env: Mapping[str, str],
    runtime_env_vars: Mapping[str, str],
    overrides: Mapping[str, str],
    workdir: Path,
    files: Collection[Path],
    image: Mapping[str, str] | None = None,
) -> Launch:
    """The host process for a head's entrypoint (`host_argv`, `payload_env`), run in `workdir`, with the payload's
    `image` folders copied there (`image_folder`); the container's env values under a mount mapped onto its
    directory."""
    mounts, files = dict(mounts), set(files)
    for mount_path, folder in (image or {}).items():
        mounts[mount_path], copied = image_folder(workdir, mount_path, Path(folder))
        files |= copied
    argv = host_argv(entrypoint, mounts, files)
    mapped = {name: _mapped(value, mounts) for name, value in container_env.items()}
    return Launch(argv=argv, env=payload_env(workdir, mapped, runtime_env_vars, overrides), cwd=workdir)
