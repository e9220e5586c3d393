"""The pod webhook's MutatingWebhookConfiguration: registered while the simulator serves it, removed only if its own.

`register` creates the configuration (`planb.local.capacity.webhook.configuration`), or replaces one of the same
name, and retries while the API server refuses; it returns what it registered: the configuration's uid and
the url of this process's server. `unregister` removes the configuration only while it still points at that
url, and deletes it with a DeleteOptions precondition on the uid and the resourceVersion it read
(K8S_PRECONDITIONS): the API server answers 409 Conflict instead of deleting when the object is another
one of the same name, or was changed after the read. So a simulator stopping while another one has already
registered its own server leaves the other's configuration in place, and pods keep being bound.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from planb.kube import KubeError
from planb.local.capacity import webhook as webhook_mod

#: DeleteOptions.preconditions (uid, resourceVersion): "Must be fulfilled before a deletion is carried out.
#: If not possible, a 409 Conflict status will be returned" (meta/v1 DeleteOptions).
K8S_PRECONDITIONS = "https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/delete-options/"
COLLECTION = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
PATH = f"{COLLECTION}/{webhook_mod.CONFIG_NAME}"


class Api(Protocol):
    """What of `planb.kube.Kube` registration uses."""

    def get(self, path: str, query: dict[str, str] | None = None) -> dict[str, Any] | None: ...

    def create(self, path: str, body: dict[str, Any]) -> dict[str, Any]: ...

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]: ...

    def delete(self, path: str, options: dict[str, Any] | None = None) -> bool: ...


@dataclass(frozen=True)
class Registration:
    """The configuration this process registered: its uid, and the url of this process's server."""

    uid: str
    url: str


def _url(configuration: dict[str, Any]) -> str:
    hooks = configuration.get("webhooks") or [{}]
    return str((hooks[0].get("clientConfig") or {}).get("url") or "")


def register(
    kube: Api, body: dict[str, Any], should_stop: Callable[[], bool], log: Callable[[str], None]
) -> Registration | None:
    """Create or replace the configuration `body` (retried every second while refused); None if stopped first."""
    said = ""
    while not should_stop():
        try:
            current = kube.get(PATH)
            if current is None:
                made = kube.create(COLLECTION, body)
            else:
                body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
                made = kube.request("PUT", PATH, body)
            log(f"pod webhook {webhook_mod.CONFIG_NAME} registered at {_url(body)}")
            return Registration(uid=str(made["metadata"]["uid"]), url=_url(body))
        except (KubeError, OSError) as exc:
            if str(exc) != said:
                log(f"pod webhook not registered yet (will retry): {exc}")
                said = str(exc)
            time.sleep(1.0)
    return None


def unregister(kube: Api, mine: Registration, log: Callable[[str], None]) -> bool:
    """Delete the configuration if it is still `mine` (same uid, pointing at its url); True if deleted."""
    name = webhook_mod.CONFIG_NAME
    try:
        current = kube.get(PATH)
        if current is None:
            log(f"pod webhook {name} was already removed")
            return False
        meta = current.get("metadata") or {}
        if meta.get("uid") != mine.uid or _url(current) != mine.url:
            log(f"pod webhook {name} left in place: it now points at {_url(current) or 'no url'}, not {mine.url}")
            return False
        preconditions = {"uid": mine.uid, "resourceVersion": str(meta.get("resourceVersion", ""))}
        kube.delete(PATH, {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": preconditions})
    except KubeError as exc:
        if exc.status == 409:
            log(f"pod webhook {name} left in place: it changed after this simulator read it")
        else:
            log(f"pod webhook {name} could not be removed: {exc}")
        return False
    except OSError as exc:
        log(f"pod webhook {name} could not be removed: {exc}")
        return False
    log(f"pod webhook {name} removed")
    return True
