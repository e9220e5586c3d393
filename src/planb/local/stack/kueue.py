"""The real Kueue controller as a host process, with its webhooks on a loopback TLS endpoint.

What Kueue's own integration tests do with envtest, done with our own CA: the raw webhook
manifests of the pinned module are rewritten from an in-cluster Service to
``https://127.0.0.1:<port>/<path>`` with our CA bundle.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from planb import paths
from planb.kube import Kube, KubeError
from planb.local.process import ManagedProcess
from planb.local.stack.errors import LocalStackError, StartupTimeoutError, ToolMissingError
from planb.local.stack.kueue_settings import (
    KueueSettings,
    configuration,
    feature_gates_flag,
    load_settings,
    save_settings,
)
from planb.local.stack.kueue_webhooks import webhook_configurations
from planb.local.statefile import flocked, private_dir, write_atomic, write_json
from planb.local.tls import ServingCert, ensure_serving_cert, write_private

#: Where Kueue v0.19 looks for its metrics certificate when internal cert management is off
#: (a fixed path in cmd/kueue/main.go).
METRICS_CERT_DIR = Path("/etc/kueue/metrics/certs")
#: The lock stacks on this machine take in turn while one writes its pair there and its Kueue reads it (start).
METRICS_LOCK = Path(tempfile.gettempdir()) / f"planb-kueue-metrics-cert-{os.getuid()}.lock"
#: The longest one stack holds METRICS_LOCK; Kueue reads the pair within milliseconds of its start.
METRICS_LOCK_SECONDS = 30.0


class HostKueue:
    """Start, stop and probe the Kueue controller running on this host."""

    def __init__(self, state: Path, kubeconfig: Path, settings: KueueSettings | None = None) -> None:
        self.state = state
        self.kubeconfig = kubeconfig
        self.settings_file = state / "kueue-settings.json"
        self.settings = settings or load_settings(self.settings_file)
        self.process = ManagedProcess("kueue", state)

    @property
    def cert_dir(self) -> Path:
        return self.state / "kueue-certs"

    @property
    def cert(self) -> ServingCert:
        """The webhook's serving pair, created on first use and renewed near expiry."""
        return ensure_serving_cert(self.cert_dir, "kueue-webhook")

    def cert_needs_renewal(self) -> bool:
        """True if the existing serving pair must be renewed before Kueue (re)starts with it."""
        pair = ServingCert(self.cert_dir)
        return pair.exists() and pair.needs_renewal()

    def webhook_manifests(self) -> list[dict[str, Any]]:
        manifest = paths.manifests_dir() / "kueue" / "webhooks.yaml"
        if not manifest.is_file():
            raise ToolMissingError(f"Kueue webhook manifest {manifest}")
        return webhook_configurations(manifest, self.settings.webhook_port, self.cert.ca_crt.read_bytes())

    @property
    def metrics_cert_record(self) -> Path:
        """What `_install_metrics_cert` put under METRICS_CERT_DIR, so `down` removes exactly that."""
        return self.state / "kueue-etc.json"

    def _install_metrics_cert(self) -> None:
        """Copy the serving pair where Kueue v0.19 reads it at start-up (internal cert management off).

        Directories it creates are 0700, the key is 0600 from the start; both are recorded in
        `metrics_cert_record`.
        """
        cert = self.cert
        record = self._metrics_record()
        created: list[str] = list(record.get("dirs", []))
        try:
            missing = [d for d in (METRICS_CERT_DIR, *METRICS_CERT_DIR.parents) if not d.exists()]
            for directory in reversed(missing):
                try:
                    directory.mkdir(mode=0o700)
                except FileExistsError:
                    continue  # a second stack starting beside this one (make test runs two) made it first: not ours
                created.append(str(directory))
            if METRICS_CERT_DIR.stat().st_uid == os.getuid():
                METRICS_CERT_DIR.chmod(0o700)  # holds a private key; one made by an older planb was 0755
            self.state.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._save_metrics_record({"dirs": list(dict.fromkeys(created)), "files": ["tls.crt", "tls.key"]})
            for src, name in ((cert.tls_crt, "tls.crt"), (cert.tls_key, "tls.key")):
                target = METRICS_CERT_DIR / name
                data = src.read_bytes()
                if target.is_file() and target.read_bytes() == data and target.stat().st_mode & 0o077 == 0:
                    continue
                write_private(target, data)
        except PermissionError as exc:
            raise LocalStackError(
                f"cannot write Kueue's metrics certificate to {METRICS_CERT_DIR} ({exc.strerror}); Kueue v0.19 "
                f"reads it from that fixed path. Fix: create the directory writable for this user, e.g. "
                f"'sudo install -d -o $USER {METRICS_CERT_DIR}'"
            ) from exc

    def _metrics_record(self) -> dict[str, list[str]]:
        try:
            data = json.loads(self.metrics_cert_record.read_text())
            return {"dirs": [str(d) for d in data.get("dirs", [])], "files": [str(f) for f in data.get("files", [])]}
        except (OSError, ValueError, AttributeError, TypeError):
            return {}

    def _save_metrics_record(self, record: dict[str, list[str]]) -> None:
        write_json(self.metrics_cert_record, record)

    def remove_metrics_cert(self) -> list[Path]:
        """Remove what `_install_metrics_cert` put under METRICS_CERT_DIR; the paths removed.

        A file is removed only while it still holds this stack's certificate or key (another
        checkout's stack may have written its own since); a directory only if this stack created
        it and it is empty. Without a record (a stack started by an older planb), the two files are
        removed if they are this stack's, and the directories are left.
        """
        removed: list[Path] = []
        record = self._metrics_record()
        pair = ServingCert(self.cert_dir)
        ours: dict[str, bytes] = {}
        for name, src in (("tls.crt", pair.tls_crt), ("tls.key", pair.tls_key)):
            with contextlib.suppress(OSError):
                ours[name] = src.read_bytes()
        for name in record.get("files", ["tls.crt", "tls.key"]):
            target = METRICS_CERT_DIR / name
            try:
                if name in ours and target.read_bytes() == ours[name]:
                    target.unlink()
                    removed.append(target)
            except OSError:
                continue
        for directory in sorted(record.get("dirs", []), key=len, reverse=True):
            try:
                Path(directory).rmdir()
                removed.append(Path(directory))
            except OSError:
                continue  # not empty (another stack's files) or gone already
        self.metrics_cert_record.unlink(missing_ok=True)
        return removed

    @staticmethod
    def binary() -> Path:
        binary = paths.tool("kueue")
        if not binary.is_file():
            raise ToolMissingError(f"the Kueue binary {binary}")
        return binary

    def start(self, binary: Path | None = None) -> int:
        """Start Kueue unless it is already running; return its pid. `binary`: another build than the pinned one
        (the upgrade e2e test's previous pin, hack/upgrade-from.env)."""
        running = self.process.pid()
        if running is not None:
            return running
        binary = binary or self.binary()
        config = self.state / "kueue-config.yaml"
        write_atomic(config, yaml.safe_dump(configuration(self.settings, self.cert.directory)))
        argv = [
            str(binary),
            f"--config={config}",
            f"--feature-gates={feature_gates_flag(self.settings.feature_gates)}",
            f"--kubeconfig={self.kubeconfig}",
            "--zap-log-level=2",
        ]
        # Every stack's Kueue reads its metrics pair from the one fixed METRICS_CERT_DIR at start-up. Stacks
        # started side by side (`planb local up --regions`) would otherwise write their pairs over each other's,
        # and a Kueue could read one stack's certificate with another's key ("private key does not match public
        # key"): one stack at a time writes its pair and starts its Kueue, until that Kueue answers or exits.
        with flocked(METRICS_LOCK):
            self._install_metrics_cert()
            pid = self.process.start(argv)
            deadline = time.monotonic() + METRICS_LOCK_SECONDS
            while time.monotonic() < deadline and self.process.pid() is not None and not self.ready():
                time.sleep(0.05)
        return pid

    def ready(self) -> bool:
        url = f"http://127.0.0.1:{self.settings.health_port}/readyz"
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                return bool(resp.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def wait_ready(self, timeout: float = 120.0, progress: bool = True) -> None:
        deadline = time.monotonic() + timeout
        last = 0.0
        while time.monotonic() < deadline:
            if self.process.pid() is None:
                tail = self.process.log_file.read_text().splitlines()[-15:] if self.process.log_file.exists() else []
                raise StartupTimeoutError("Kueue exited during start-up; last log lines:\n" + "\n".join(tail))
            if self.ready():
                return
            now = time.monotonic()
            if progress and now - last >= 5:
                print(
                    f"[planb local] waiting for Kueue's webhook server (log: {self.process.log_file}) ...",
                    file=sys.stderr,
                    flush=True,
                )
                last = now
            time.sleep(0.1)
        raise StartupTimeoutError(f"Kueue was not ready after {timeout:.0f} s; see {self.process.log_file}")

    def wait_webhook_admits(self, timeout: float = 120.0) -> bool:
        """True once Kueue's webhook admits a ResourceFlavor in a server-side dry run (nothing is created)."""
        kube = Kube(self.kubeconfig)
        probe = {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ResourceFlavor",
            "metadata": {"name": "planb-webhook-probe"},  # the name the kueue role's dry run uses
        }
        deadline = time.monotonic() + timeout
        while True:
            try:
                kube.request("POST", "/apis/kueue.x-k8s.io/v1beta2/resourceflavors", probe, query={"dryRun": "All"})
                return True
            except KubeError as exc:
                if exc.status == 409:  # one of that name exists: the webhook admitted it
                    return True
                if time.monotonic() >= deadline:
                    raise StartupTimeoutError(
                        f"Kueue's webhook did not admit a ResourceFlavor within {timeout:.0f} s ({exc}); "
                        f"see {self.process.log_file}"
                    ) from exc
            time.sleep(0.2)

    def stop(self) -> bool:
        return self.process.stop()

    def reconfigure(self, settings: KueueSettings, check: bool = False) -> bool:
        """Run Kueue with these settings; True if that changed (or, with check, would change) anything."""
        running = self.process.pid() is not None
        if running and settings == self.settings:
            return False
        if check:
            return True
        private_dir(self.state)
        save_settings(settings, self.settings_file)
        self.settings = settings
        self.stop()
        self.start()
        self.wait_ready()
        return True
