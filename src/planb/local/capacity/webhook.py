"""GKE's binding of a queued-provisioning request's pods to that request's nodes, emulated.

On GKE the nodes of a queued-provisioning ProvisioningRequest carry the label
``autoscaling.gke.io/provisioning-request`` whose value is the name of the Compute Engine resize
request GKE made for it, and a GKE admission webhook adds a node selector on that label to every
pod that consumes the request (Kueue's ``autoscaling.x-k8s.io/consume-provisioning-request``
annotation). Only the request's own pods can then land on its nodes. Sources, all in Google's
public cluster autoscaler (GoogleCloudPlatform/cluster-autoscaler, at ``GKE_CA`` below):

* ``ProvisioningRequestLabelKey`` "QueuedProvisioning node label key used to identify the related
  Resize Request, and thus the corresponding Provisioning Request" (``GKE_CA_LABEL``);
* the resize request's name: ``gke-`` + the namespace's first 20 characters + ``-`` + the request
  name's first 20 + ``-`` + the first 16 hex digits of sha256("namespace/name")
  (``GKE_CA_RR_NAME``); GKE also writes it into the request's
  ``status.provisioningClassDetails.ResizeRequestName`` (``GKE_CA_DETAILS``);
* "GCW adds an 'autoscaling.gke.io/provisioning-request' node selector to Pods consuming
  Provisioning Requests. For the Pods to be scheduled on the provisioned nodes, the nodes must
  have this label" (``GKE_CA_WEBHOOK``); the autoscaler treats a pod as consuming a queued request
  when it carries both the consume annotation and the class annotation
  ``queued-provisioning.gke.io`` (``GKE_CA_POD_REQUIREMENTS``);
* the pods of a queued request tolerate ``cloud.google.com/gke-queued=true:NoSchedule``, the taint
  of queued-provisioning nodes (the autoscaler adds exactly this toleration to the pods it
  simulates for a request, ``GKE_CA_TOLERATION``). Google does not document which component adds
  it to the real pods; planb's chart already sets it, and this webhook adds it where it is missing.

GKE's documentation does not describe the webhook (its name, failure policy or exact patch); what
it does beyond the node selector is not public, and is not emulated.

This module is the pure mutation (`patch_for`), the AdmissionReview answer (`review_response`), a
TLS server on 127.0.0.1 (`WebhookServer`), and the MutatingWebhookConfiguration that points the
API server at it (`configuration`); the capacity simulator registers it while it runs and removes
it when it stops.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import shutil
import ssl
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from planb.local.tls import ensure_serving_cert

_GKE_CA = "https://github.com/GoogleCloudPlatform/cluster-autoscaler/blob/7d250507339b3a7583b380349f217ea191ff15ff/"
GKE_CA_LABEL = _GKE_CA + "pkg/cloudprovider/gke/labels/system_labels.go#L431-L434"
GKE_CA_RR_NAME = _GKE_CA + "pkg/cloudprovider/gke/gceclient/resizerequest/resize_request.go#L199-L226"
GKE_CA_DETAILS = _GKE_CA + "pkg/provisioningrequests/manager/manager.go#L293-L307"
GKE_CA_WEBHOOK = _GKE_CA + "pkg/autoprovisioning/injection.go#L1425-L1443"
GKE_CA_POD_REQUIREMENTS = _GKE_CA + "pkg/podrequirements/pod_requirements.go#L286-L292"
GKE_CA_TOLERATION = _GKE_CA + "pkg/provisioningrequests/pods/pods.go#L152-L170"
#: k8s.io/apiserver's NewConfig: MaxRequestBodyBytes, 3 MiB.
K8S_MAX_BODY = (
    "https://github.com/kubernetes/apiserver/blob/5a72bc815bfbf203121de56eecd3a2d3e4f14096/pkg/server/config.go"
)
#: Kubernetes' matchConditions of admission webhooks: CEL expressions over `object`, all of which must be
#: true for the API server to call the webhook (admissionregistration.k8s.io/v1, GA in 1.30).
K8S_MATCH_CONDITIONS = "https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#matching-requests-matchconditions"

#: The node label of a queued request's nodes (GKE_CA_LABEL); its value is `resize_request_name`.
REQUEST_LABEL = "autoscaling.gke.io/provisioning-request"
#: The detail of the request's status that holds the same name (GKE_CA_DETAILS).
RESIZE_REQUEST_DETAIL = "ResizeRequestName"
#: Kueue's annotations on the pods of an admitted workload (autoscaling.x-k8s.io/v1), and the
#: deprecated ones GKE's autoscaler still reads (GKE_CA_POD_REQUIREMENTS).
CONSUME_ANNOTATIONS = (
    "autoscaling.x-k8s.io/consume-provisioning-request",
    "cluster-autoscaler.kubernetes.io/consume-provisioning-request",
)
CLASS_ANNOTATIONS = (
    "autoscaling.x-k8s.io/provisioning-class-name",
    "cluster-autoscaler.kubernetes.io/provisioning-class-name",
)
QUEUED_CLASS = "queued-provisioning.gke.io"
#: The toleration of the queued-provisioning taint (GKE_CA_TOLERATION).
QUEUED_TOLERATION = {"key": "cloud.google.com/gke-queued", "operator": "Equal", "value": "true", "effect": "NoSchedule"}

CONFIG_NAME = "planb-capacity-simulator"
WEBHOOK_NAME = "dws-binding.capacity.planb.dev"
PATH = "/mutate-pods"
#: The largest AdmissionReview read (bytes): kube-apiserver's default limit on a request body, 3 MiB, twice
#: the 1.5 MiB etcd accepts for an object (K8S_MAX_BODY), so the review of a pod the API server can store
#: fits in it. A bigger Content-Length is answered 413 without reading the body.
MAX_BODY_BYTES = 3 * 1024 * 1024
#: Seconds a connection's TLS handshake may take, and a read after it: well under the configuration's
#: timeoutSeconds (5), after which the API server gives up on the call anyway.
HANDSHAKE_TIMEOUT_S = 3.0
READ_TIMEOUT_S = 3.0
#: Namespaces whose pods never consume a ProvisioningRequest: the webhook is not even called there.
SYSTEM_NAMESPACES = ("kube-system", "kube-public", "kube-node-lease", "kueue-system")


def resize_request_name(namespace: str, name: str) -> str:
    """The name GKE gives the resize request of ProvisioningRequest namespace/name (GKE_CA_RR_NAME)."""
    digest = hashlib.sha256(f"{namespace}/{name}".encode()).hexdigest()[:16]
    return f"gke-{namespace[:20]}-{name[:20]}-{digest}"


def _first(annotations: dict[str, str], keys: tuple[str, ...]) -> str | None:
    return next((annotations[k] for k in keys if k in annotations), None)


def queued_request_name(pod: dict[str, Any]) -> str | None:
    """The name (without namespace) of the queued-provisioning request a pod consumes (both annotations, class
    queued-provisioning.gke.io); None for a pod that consumes none or one of another class. (The best-effort
    lifecycle's `consumed_request` answers "namespace/name" for any class.)"""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    name = _first(annotations, CONSUME_ANNOTATIONS)
    if not name or _first(annotations, CLASS_ANNOTATIONS) != QUEUED_CLASS:
        return None
    return name


def _tolerated(tolerations: list[dict[str, Any]]) -> bool:
    """Whether a toleration already covers the queued-provisioning NoSchedule taint."""
    for tol in tolerations:
        if tol.get("effect") not in (None, "", "NoSchedule"):
            continue
        if tol.get("operator") == "Exists" and tol.get("key") in (None, "", QUEUED_TOLERATION["key"]):
            return True
        if tol.get("key") == QUEUED_TOLERATION["key"] and tol.get("value", "") == QUEUED_TOLERATION["value"]:
            return True
    return False


def _escape(key: str) -> str:
    """A map key as one JSON Pointer token (RFC 6901)."""
    return key.replace("~", "~0").replace("/", "~1")


def patch_for(pod: dict[str, Any], namespace: str) -> list[dict[str, Any]]:
    """The JSON Patch that binds a pod to the nodes of the request it consumes; [] for any other pod.

    The node selector on REQUEST_LABEL is set to the request's resize request name (replacing one
    that names another request); the queued toleration is added unless one covers the taint.
    """
    request = queued_request_name(pod)
    if request is None:
        return []
    spec = pod.get("spec") or {}
    value = resize_request_name(namespace, request)
    ops: list[dict[str, Any]] = []
    selector = spec.get("nodeSelector")
    if not selector:
        ops.append({"op": "add", "path": "/spec/nodeSelector", "value": {REQUEST_LABEL: value}})
    elif selector.get(REQUEST_LABEL) != value:
        ops.append({"op": "add", "path": f"/spec/nodeSelector/{_escape(REQUEST_LABEL)}", "value": value})
    tolerations = spec.get("tolerations")
    if not tolerations:
        ops.append({"op": "add", "path": "/spec/tolerations", "value": [dict(QUEUED_TOLERATION)]})
    elif not _tolerated(tolerations):
        ops.append({"op": "add", "path": "/spec/tolerations/-", "value": dict(QUEUED_TOLERATION)})
    return ops


def review_response(review: dict[str, Any]) -> dict[str, Any]:
    """The AdmissionReview (admission.k8s.io/v1) answering `review`: always allowed, patched if it consumes.

    https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#response
    """
    request = review.get("request") or {}
    pod = request.get("object") or {}
    namespace = str(request.get("namespace") or (pod.get("metadata") or {}).get("namespace") or "")
    response: dict[str, Any] = {"uid": request.get("uid", ""), "allowed": True}
    ops = patch_for(pod, namespace) if request.get("operation", "CREATE") == "CREATE" else []
    if ops:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(json.dumps(ops).encode()).decode()
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}


def configuration(url: str, ca_bundle: bytes) -> dict[str, Any]:
    """The MutatingWebhookConfiguration that sends pod creations that consume a request to `url`.

    Narrow on purpose: only CREATE of pods, never in the system namespaces, and two matchConditions
    (K8S_MATCH_CONDITIONS: the API server calls the webhook only when all are true) so it is called
    only for a pod that carries a consume annotation and the class annotation
    ``queued-provisioning.gke.io``, the pods `queued_request_name` binds (GKE_CA_POD_REQUIREMENTS); any
    other pod's creation never waits on it. failurePolicy Fail: a consuming pod admitted without its
    selector could land on another request's nodes, which is what the binding exists to prevent, so
    the API server refuses it instead (its owner, KubeRay or the Job controller, creates it again). The webhook is
    registered only while the simulator serves it, so no other pod ever depends on it, and a
    consuming pod is refused only if the simulator died without removing it; its next start
    registers it again.
    """
    consumes = " || ".join(f"'{key}' in object.metadata.annotations" for key in CONSUME_ANNOTATIONS)
    queued = " || ".join(
        f"('{key}' in object.metadata.annotations && object.metadata.annotations['{key}'] == '{QUEUED_CLASS}')"
        for key in CLASS_ANNOTATIONS
    )
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": CONFIG_NAME, "labels": {"app.kubernetes.io/managed-by": "planb"}},
        "webhooks": [
            {
                "name": WEBHOOK_NAME,
                "clientConfig": {"url": url, "caBundle": base64.b64encode(ca_bundle).decode()},
                "rules": [
                    {
                        "operations": ["CREATE"],
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "resources": ["pods"],
                        "scope": "Namespaced",
                    }
                ],
                "namespaceSelector": {
                    "matchExpressions": [
                        {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": list(SYSTEM_NAMESPACES)}
                    ]
                },
                "matchConditions": [
                    {
                        "name": "consumes-a-provisioning-request",
                        "expression": f"has(object.metadata.annotations) && ({consumes})",
                    },
                    {
                        "name": "of-class-queued-provisioning",
                        "expression": f"has(object.metadata.annotations) && ({queued})",
                    },
                ],
                "failurePolicy": "Fail",
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "timeoutSeconds": 5,
            }
        ],
    }


class _Handler(BaseHTTPRequestHandler):
    #: Seconds a connection may sit between reads once the handshake is done (StreamRequestHandler's timeout).
    timeout = READ_TIMEOUT_S

    def do_POST(self) -> None:
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self.send_error(411, "a Content-Length is required")
            return
        if length < 0:
            self.send_error(400, f"Content-Length {length} is not a length")
            return
        if length > MAX_BODY_BYTES:
            self.send_error(
                413, f"an AdmissionReview of {length} bytes is over the {MAX_BODY_BYTES} this webhook reads"
            )
            return
        if self.path.split("?", 1)[0] != PATH:
            # The body is read first: closing with it unread would reset the connection before the answer.
            self.rfile.read(length)
            self.send_error(404, f"only {PATH} is served")
            return
        try:
            review = json.loads(self.rfile.read(length))
            body = json.dumps(review_response(review)).encode()
        except (ValueError, AttributeError, TypeError) as exc:
            self.send_error(400, f"not an AdmissionReview: {exc}")
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # http.server's signature
        return  # one line per pod creation would drown the simulator's log


class _TlsServer(ThreadingHTTPServer):
    """Accepts plain TCP connections and does each one's TLS handshake in that connection's own thread.

    With the listening socket wrapped instead, `accept` does the handshake in the one serving thread, so a
    client that connects and sends nothing stalls every later connection (and, with failurePolicy Fail,
    every consuming pod's creation). Here a handshake that does not finish within `handshake_timeout`
    seconds closes its connection alone.
    """

    daemon_threads = True

    def __init__(self, address: tuple[str, int], context: ssl.SSLContext, handshake_timeout: float) -> None:
        super().__init__(address, _Handler)
        self.context = context
        self.handshake_timeout = handshake_timeout

    def finish_request(self, request: Any, client_address: Any) -> None:
        """Runs in the connection's thread (ThreadingMixIn.process_request_thread): handshake, then serve."""
        request.settimeout(self.handshake_timeout)
        try:
            tls = self.context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return  # the caller (process_request_thread) closes the plain socket
        try:
            _Handler(tls, client_address, self)
        finally:
            with contextlib.suppress(OSError):
                tls.close()


class WebhookServer:
    """The webhook over TLS on 127.0.0.1 (a free port), with a CA made for this process alone.

    The key lives in a private temporary directory only while the TLS context loads it.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, handshake_timeout: float = HANDSHAKE_TIMEOUT_S) -> None:
        workdir = Path(tempfile.mkdtemp(prefix="planb-capacity-webhook-"))
        try:
            cert = ensure_serving_cert(workdir / "certs", common_name="planb-capacity-webhook")
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(cert.tls_crt, cert.tls_key)
            self.ca_bundle = cert.ca_crt.read_bytes()
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        self.httpd = _TlsServer((host, port), context, handshake_timeout)
        # serve_forever checks for shutdown() every poll_interval (0.5 s by default): stop() returns within 0.05 s.
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="dws-webhook", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"https://{host!s}:{port}{PATH}"

    def start(self) -> WebhookServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)

    def configuration(self) -> dict[str, Any]:
        return configuration(self.url, self.ca_bundle)
