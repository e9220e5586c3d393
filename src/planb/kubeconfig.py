"""A kubeconfig read for one HTTPS connection to its current context's API server.

What `planb.kube.Kube` needs of a kubeconfig, without the kubernetes client library (whose import alone
holds some 35 MiB in every long-running process of the local stack): the server, its CA, and one way of
authenticating, as kubectl reads them (https://kubernetes.io/docs/reference/config-api/kubeconfig.v1/):

* a client certificate and key (``client-certificate[-data]``, ``client-key[-data]``), as kwokctl writes;
* a bearer token (``token``, ``tokenFile``);
* an exec credential plugin (``exec``, client.authentication.k8s.io), as ``gke-gcloud-auth-plugin`` for GKE:
  its ExecCredential's ``status.token`` is used until its ``expirationTimestamp``, and asked for again after
  that or after a 401.

``*-data`` fields are written to files of this user alone (0600 in a 0700 folder, each under a name of its own),
removed when the process ends, because Python's TLS takes client certificates from files only.

`load` is for the operator's own kubeconfig and takes all of the above, from one file or KUBECONFIG's list merged
as kubectl merges it, for the current context or one named (kubectl's --context), with the context's namespace.
A kubeconfig planb reads out of a Secret on the manager (a MultiKueue region's) goes through
`planb.regions.access.kubeconfig.load_region` instead, which takes far less.

A kubeconfig that is not YAML is reported by line and column only: the line itself may hold a token.
"""

from __future__ import annotations

import atexit
import base64
import datetime as dt
import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from planb.errors import PlanbError


class KubeconfigError(PlanbError):
    """The kubeconfig cannot be read, or names nothing planb can authenticate with."""


@dataclass
class ExecPlugin:
    """A client.authentication.k8s.io exec plugin and the token it last gave."""

    command: str
    args: list[str]
    env: dict[str, str]
    api_version: str
    token: str = field(default="", repr=False)  # never in a repr (a log line, a traceback's locals)
    expires: dt.datetime | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def bearer(self, refresh: bool = False) -> str:
        """The plugin's token, asked for again when it expired or `refresh` (a 401 came back)."""
        with self.lock:
            now = dt.datetime.now(dt.UTC)
            if refresh or not self.token or (self.expires is not None and now >= self.expires):
                self._run()
            return self.token

    def _run(self) -> None:
        info = {"apiVersion": self.api_version, "kind": "ExecCredential", "spec": {"interactive": False}}
        env = dict(os.environ, **self.env, KUBERNETES_EXEC_INFO=json.dumps(info))
        try:
            proc = subprocess.run(
                [self.command, *self.args], env=env, capture_output=True, text=True, timeout=60, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise KubeconfigError(f"the kubeconfig's exec plugin {self.command} did not run: {exc}") from exc
        if proc.returncode != 0:
            raise KubeconfigError(
                f"the kubeconfig's exec plugin {self.command} failed (exit {proc.returncode}): {proc.stderr.strip()}"
            )
        try:
            status = json.loads(proc.stdout)["status"]
            self.token = str(status["token"])
        except (ValueError, KeyError, TypeError) as exc:
            raise KubeconfigError(f"the kubeconfig's exec plugin {self.command} gave no status.token") from exc
        stamp = status.get("expirationTimestamp")
        self.expires = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")) if stamp else None


@dataclass
class Connection:
    """The current context's server and credentials, with every certificate as a file path."""

    server: str
    ca_file: str | None = None
    #: The CA as PEM text, held in memory (a region's kubeconfig: load_region writes no file).
    ca_data: str | None = None
    insecure: bool = False
    cert_file: str | None = None
    key_file: str | None = None
    token: str = field(default="", repr=False)  # never in a repr (a log line, a traceback's locals)
    token_file: str | None = None
    exec_plugin: ExecPlugin | None = None
    #: The context's namespace, kubectl's default for -n ("default" when the context names none).
    namespace: str = "default"

    def bearer(self, refresh: bool = False) -> str:
        """The bearer token to send ('' when the client certificate authenticates)."""
        if self.exec_plugin is not None:
            return self.exec_plugin.bearer(refresh)
        if self.token_file:
            return Path(self.token_file).read_text().strip()  # re-read: projected tokens rotate
        return self.token


_DATA_DIR: list[Path] = []
_DATA_LOCK = threading.Lock()


def _data_file(name: str, data: str) -> str:
    """A `*-data` field as a file of this user alone, under a name no other load in this process or another takes
    (mkstemp: O_EXCL, mode 0600); removed at exit."""
    with _DATA_LOCK:
        if not _DATA_DIR:
            folder = Path(tempfile.mkdtemp(prefix="planb-kubeconfig-"))  # 0700
            _DATA_DIR.append(folder)
            atexit.register(shutil.rmtree, folder, True)
    fd, path = tempfile.mkstemp(prefix=f"{name}-", dir=_DATA_DIR[0])
    with os.fdopen(fd, "wb") as handle:
        handle.write(base64.b64decode(data))
    return path


def yaml_position(exc: yaml.YAMLError) -> str:
    """Where a YAML error is, as "line N, column M" (1-based); never the text there, which may be a secret."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is None:
        return "an unknown place"
    return f"line {mark.line + 1}, column {mark.column + 1}"


def parse(text: str, source: str, error: type[KubeconfigError]) -> Any:
    """The YAML document in `text`; a YAMLError becomes `error`, naming the place only.

    yaml's own message quotes the line, which may hold a token, so it is dropped, and `error` is raised outside the
    `except` so that the YAMLError is not even its context."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        where = yaml_position(exc)
    raise error(f"{source} is not valid YAML at {where}. Fix: correct the kubeconfig there")


def _named(entries: Any, name: str, kind: str, path: Path) -> dict[str, Any]:
    for entry in entries or []:
        if isinstance(entry, dict) and entry.get("name") == name:
            return dict(entry.get(kind) or {})
    raise KubeconfigError(f"{path} has no {kind} named {name!r}")


def _file_or_data(section: dict[str, Any], key: str, base: Path) -> str | None:
    if section.get(f"{key}-data"):
        return _data_file(key, str(section[f"{key}-data"]))
    if section.get(key):
        found = Path(str(section[key]))
        return str(found if found.is_absolute() else base / found)
    return None


#: The sections of a kubeconfig whose entries are merged by name, and each entry's key.
_SECTIONS = {"clusters": "cluster", "users": "user", "contexts": "context"}


@dataclass(frozen=True)
class _Merged:
    """Kubeconfig files merged as kubectl merges KUBECONFIG's list: the first file to set a field wins it."""

    source: str
    current: str
    #: Section -> entry name -> (the entry, the folder of the file that holds it: its relative paths' base).
    entries: dict[str, dict[str, tuple[dict[str, Any], Path]]]


def _merge(files: Sequence[Path], explicit: bool) -> _Merged:
    """The files in order, as client-go's loader merges them (tools/clientcmd/loader.go, ClientConfigLoadingRules.Load):
    a file of KUBECONFIG's list that does not exist is skipped (an `explicit` one, --kubeconfig's, must exist), the
    first current-context set wins, and of two entries of one name in a section the first file's wins."""
    source = os.pathsep.join(str(path) for path in files)
    current = ""
    entries: dict[str, dict[str, tuple[dict[str, Any], Path]]] = {section: {} for section in _SECTIONS}
    for path in files:
        try:
            text = path.read_text()
        except FileNotFoundError as exc:
            if explicit:
                raise KubeconfigError(f"{path}: {exc}") from exc
            continue
        except OSError as exc:
            raise KubeconfigError(f"{path}: {exc}") from exc
        config = parse(text, str(path), KubeconfigError)
        if config is None:
            continue
        if not isinstance(config, dict):
            raise KubeconfigError(f"{path} is not a kubeconfig with a current-context")
        current = current or str(config.get("current-context") or "")
        for section, key in _SECTIONS.items():
            for entry in config.get(section) or []:
                if isinstance(entry, dict) and entry.get("name") is not None:
                    entries[section].setdefault(str(entry["name"]), (dict(entry.get(key) or {}), path.parent))
    return _Merged(source, current, entries)


def _entry(merged: _Merged, section: str, name: str) -> tuple[dict[str, Any], Path]:
    try:
        return merged.entries[section][name]
    except KeyError:
        raise KubeconfigError(f"{merged.source} has no {_SECTIONS[section]} named {name!r}") from None


def load(path: Path | Sequence[Path], context_name: str | None = None) -> Connection:
    """The connection a context describes: `context_name` (kubectl's --context), else the current-context.

    `path` is one kubeconfig or KUBECONFIG's list of them, merged as kubectl merges it (_merge).
    """
    merged = _merge([path], explicit=True) if isinstance(path, Path) else _merge(list(path), explicit=False)
    name = context_name or merged.current
    if not name:
        raise KubeconfigError(f"{merged.source} is not a kubeconfig with a current-context")
    context, _ = _entry(merged, "contexts", name)
    cluster, base = _entry(merged, "clusters", str(context.get("cluster", "")))
    user, user_base = _entry(merged, "users", str(context.get("user", ""))) if context.get("user") else ({}, base)
    path = Path(merged.source)  # in messages
    if not cluster.get("server"):
        raise KubeconfigError(f"{path}: cluster {context.get('cluster')!r} has no server")
    has_ca = bool(cluster.get("certificate-authority") or cluster.get("certificate-authority-data"))
    if has_ca and cluster.get("insecure-skip-tls-verify"):
        # kubectl refuses the pair as well (k8s.io/client-go transport/transport.go: TLSConfigFor); with a CA at
        # hand, planb checks the API server's certificate against it rather than skip the check.
        raise KubeconfigError(
            f"{path}: cluster {context.get('cluster')!r} names a certificate-authority and sets "
            "insecure-skip-tls-verify, which kubectl refuses too. Fix: remove insecure-skip-tls-verify, so the API "
            "server's certificate is checked against the CA (kwokctl's kubeconfig for the local stack names its CA)."
        )
    conn = Connection(
        server=str(cluster["server"]).rstrip("/"),
        ca_file=_file_or_data(cluster, "certificate-authority", base),
        insecure=bool(cluster.get("insecure-skip-tls-verify")),
        cert_file=_file_or_data(user, "client-certificate", user_base),
        key_file=_file_or_data(user, "client-key", user_base),
        token=str(user.get("token") or ""),
        token_file=str(user["tokenFile"]) if user.get("tokenFile") else None,
        namespace=str(context.get("namespace") or "default"),
    )
    plugin = user.get("exec")
    if isinstance(plugin, dict):
        env = {str(e["name"]): str(e["value"]) for e in plugin.get("env") or [] if isinstance(e, dict)}
        conn.exec_plugin = ExecPlugin(
            command=str(plugin.get("command", "")),
            args=[str(a) for a in plugin.get("args") or []],
            env=env,
            api_version=str(plugin.get("apiVersion") or "client.authentication.k8s.io/v1"),
        )
    elif user.get("auth-provider"):
        raise KubeconfigError(
            f"{path}: user {context.get('user')!r} uses an auth-provider, which kubectl no longer supports. "
            "Fix: regenerate it (for GKE: gcloud container clusters get-credentials, which writes an exec plugin)."
        )
    return conn


#: Where the kubelet mounts a pod's ServiceAccount token, its cluster's CA and its namespace, the files client-go's
#: rest.InClusterConfig reads (kubernetes/client-go@v0.34.2 rest/config.go#L543-L571).
SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


def in_cluster(environ: Mapping[str, str] = os.environ, folder: Path = SERVICE_ACCOUNT_DIR) -> Connection:
    """The pod's own API server and ServiceAccount, as client-go's rest.InClusterConfig takes them
    (kubernetes/client-go@v0.34.2 rest/config.go#L543-L571): https to $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT,
    which the kubelet sets, the CA and the token from `folder` (the token re-read at every request: the kubelet rotates
    it). No kubeconfig is read, so nothing in a ConfigMap or Secret can name a command, a file or a server for it."""
    host, port = environ.get("KUBERNETES_SERVICE_HOST", ""), environ.get("KUBERNETES_SERVICE_PORT", "")
    if not host or not port:
        raise KubeconfigError(
            "not in a pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset (the kubelet sets both in "
            "every container). Fix: run in a pod, or give a kubeconfig instead"
        )
    for name in ("token", "ca.crt"):
        if not (folder / name).is_file():
            raise KubeconfigError(
                f"{folder / name} is missing: the pod has no ServiceAccount token mounted. Fix: give the pod a "
                "ServiceAccount with automountServiceAccountToken true"
            )
    namespace = folder / "namespace"
    return Connection(
        server=f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}",  # net.JoinHostPort's brackets
        ca_file=str(folder / "ca.crt"),
        token_file=str(folder / "token"),
        namespace=namespace.read_text().strip() if namespace.is_file() else "default",
    )
