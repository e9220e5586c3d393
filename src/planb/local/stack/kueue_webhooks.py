"""Kueue's webhooks for a host process: the pinned module's raw manifests, rewired from the in-cluster Service
to ``https://127.0.0.1:<port>/<path>`` with our CA bundle, as Kueue's own integration tests do with envtest."""

from __future__ import annotations

import base64
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

#: Resources whose webhooks we keep: Kueue's own kinds and the Ray integrations planb uses.
#: Webhooks of core kinds (pods, deployments, statefulsets, jobs) are dropped: the raw manifests
#: carry no namespaceSelector and ``failurePolicy: Fail``, and planb does not use them.
KEPT_WEBHOOK_RESOURCES = frozenset(
    {
        "clusterqueues",
        "cohorts",
        "resourceflavors",
        "workloads",
        "localqueues",
        "admissionchecks",
        "provisioningrequestconfigs",
        "topologies",
        "workloadpriorityclasses",
        "rayjobs",
        "rayclusters",
    }
)


def webhook_configurations(
    manifest: Path, port: int, ca_bundle: bytes, keep: Iterable[str] = KEPT_WEBHOOK_RESOURCES
) -> list[dict[str, Any]]:
    """The pinned webhook manifests, rewired to our loopback endpoint and trimmed to `keep`."""
    kept = set(keep)
    ca = base64.b64encode(ca_bundle).decode()
    out: list[dict[str, Any]] = []
    for doc in yaml.safe_load_all(manifest.read_text()):
        if not doc:
            continue
        doc["metadata"]["name"] = f"kueue-{doc['metadata']['name']}"
        hooks = []
        for hook in doc.get("webhooks", []):
            resources = {r for rule in hook.get("rules", []) for r in rule.get("resources", [])}
            if not resources & kept:
                continue
            path = hook["clientConfig"]["service"]["path"]
            hook["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path}", "caBundle": ca}
            hooks.append(hook)
        doc["webhooks"] = hooks
        out.append(doc)
    return out
