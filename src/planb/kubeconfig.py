"""A kubeconfig read for one HTTPS connection to its current context's API server.

What `planb.kube.Kube` needs of a kubeconfig, without the kubernetes client library (whose import alone
holds some 35 MiB in every long-running process of the local stack): the server, its CA, and one way of
authenticating, as kubectl reads them (https://kubernetes.io/docs/reference/config-api/kubeconfig.v1/):

* a client certificate and key (``client-certificate[-data]``, ``client-key[-data]``), as kwokctl writes;
* a bearer token (``token``, ``tokenFile``);
* an exec credential plugin (``exec``, client.authentication.k8s.io), as ``gke-gcloud-auth-plugin`` for GKE:
  its ExecCredential's ``status.token`` is used until its ``expirationTimestamp``, and asked for again after
  that or after a 401.

``*-data`` fields are written to files of this user alone (0600 in a 0700 folder), removed when the
process ends, because Python's TLS takes certificates from files only.
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from planb.errors import PlanbError
from planb.statefile import write_atomic


class KubeconfigError(PlanbError):
    """The kubeconfig cannot be read, or names nothing planb can authenticate with."""


@dataclass
class ExecPlugin:
    """A client.authentication.k8s.io exec plugin and the token it last gave."""

    command: str
    args: list[str]
    env: dict[str, str]
    api_version: str
    token: str = ""
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
    insecure: bool = False
    cert_file: str | None = None
    key_file: str | None = None
    token: str = ""
    token_file: str | None = None
    exec_plugin: ExecPlugin | None = None

    def bearer(self, refresh: bool = False) -> str:
        """The bearer token to send ('' when the client certificate authenticates)."""
        if self.exec_plugin is not None:
            return self.exec_plugin.bearer(refresh)
        if self.token_file:
            return Path(self.token_file).read_text().strip()  # re-read: projected tokens rotate
        return self.token


_DATA_DIR: list[Path] = []


def _data_file(name: str, data: str) -> str:
    """A `*-data` field as a file of this user alone; removed at exit."""
    if not _DATA_DIR:
        folder = Path(tempfile.mkdtemp(prefix="planb-kubeconfig-"))  # 0700
        _DATA_DIR.append(folder)
        atexit.register(shutil.rmtree, folder, True)
    path = _DATA_DIR[0] / f"{len(list(_DATA_DIR[0].iterdir()))}-{name}"
    write_atomic(path, base64.b64decode(data), private=True)
    return str(path)


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


def load(path: Path) -> Connection:
    """The connection the kubeconfig's current context describes."""
    try:
        config = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise KubeconfigError(f"{path}: {exc}") from exc
    if not isinstance(config, dict) or not config.get("current-context"):
        raise KubeconfigError(f"{path} is not a kubeconfig with a current-context")
    context = _named(config.get("contexts"), str(config["current-context"]), "context", path)
    cluster = _named(config.get("clusters"), str(context.get("cluster", "")), "cluster", path)
    user = _named(config.get("users"), str(context.get("user", "")), "user", path) if context.get("user") else {}
    base = path.parent
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
        cert_file=_file_or_data(user, "client-certificate", base),
        key_file=_file_or_data(user, "client-key", base),
        token=str(user.get("token") or ""),
        token_file=str(user["tokenFile"]) if user.get("tokenFile") else None,
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
