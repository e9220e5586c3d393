"""The emulated GKE pod webhook: a consuming pod is bound to its own request's nodes, any other pod is left alone.

The mutation is checked on the JSON Patch it answers, applied to the pod (RFC 6902 "add"), and
through the real TLS server with the CA bundle the MutatingWebhookConfiguration carries: a client that
never finishes its handshake, or announces a body over the cap, stalls nobody. The API server's side
(matchConditions, failurePolicy) is exercised on the real stack: tests/e2e/topologies/test_dws_binding.py.
"""

from __future__ import annotations

import base64
import copy
import http.client
import json
import socket
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from planb.local.capacity import webhook

NS = "default"
REQUEST = "rayjob-job-2-abcde-dws-prov-1"
# GKE's name for it, worked out by hand: "gke-" + namespace[:20] + "-" + name[:20] + "-" + the first 16
# hex digits of `printf 'default/rayjob-job-2-abcde-dws-prov-1' | sha256sum`.
RR_NAME = "gke-default-rayjob-job-2-abcde-d-45d44aaf419628ca"
QUEUED_TOLERATION = {"key": "cloud.google.com/gke-queued", "operator": "Equal", "value": "true", "effect": "NoSchedule"}


def consuming_pod(request: str = REQUEST, **spec: Any) -> dict[str, Any]:
    """A worker pod as KubeRay makes it after Kueue's podSetUpdates put the request's annotations on it."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": "job-2-raycluster-workers-",
            "annotations": {
                "autoscaling.x-k8s.io/consume-provisioning-request": request,
                "autoscaling.x-k8s.io/provisioning-class-name": "queued-provisioning.gke.io",
            },
        },
        "spec": {"containers": [{"name": "worker", "image": "busybox"}], **spec},
    }


def apply(doc: dict[str, Any], ops: list[dict[str, Any]]) -> dict[str, Any]:
    """RFC 6902 "add" (the only op the webhook answers): set an object member, or append with "-"."""
    out = copy.deepcopy(doc)
    for op in ops:
        assert op["op"] == "add", op
        *parents, last = [t.replace("~1", "/").replace("~0", "~") for t in op["path"].split("/")[1:]]
        target = out
        for token in parents:
            target = target[token]
        if isinstance(target, list):
            assert last == "-", op
            target.append(op["value"])
        else:
            target[last] = op["value"]
    return out


def test_resize_request_name_is_gkes() -> None:
    assert webhook.resize_request_name(NS, REQUEST) == RR_NAME
    # Namespace and name are cut to 20 characters each; the hash of the whole pair keeps it unique
    # (`printf 'a-namespace-longer-than-twenty/rayjob-job-2-abcde-dws-prov-1' | sha256sum`).
    long_ns = webhook.resize_request_name("a-namespace-longer-than-twenty", REQUEST)
    assert long_ns == "gke-a-namespace-longer-t-rayjob-job-2-abcde-d-465f63f9c09beeea"
    assert len(long_ns) <= 63  # a valid label value
    assert webhook.resize_request_name(NS, REQUEST[:-1] + "2") != RR_NAME


def test_a_consuming_pod_gets_the_selector_of_its_request_and_the_queued_toleration() -> None:
    pod = consuming_pod()
    patched = apply(pod, webhook.patch_for(pod, NS))
    assert patched["spec"]["nodeSelector"] == {"autoscaling.gke.io/provisioning-request": RR_NAME}
    assert patched["spec"]["tolerations"] == [QUEUED_TOLERATION]
    assert patched["metadata"] == pod["metadata"] and patched["spec"]["containers"] == pod["spec"]["containers"]


def test_the_selector_joins_the_pods_own_and_a_toleration_it_has_is_kept() -> None:
    own_selector = {"cloud.google.com/gke-nodepool": "dws-pool", "cloud.google.com/gke-tpu-topology": "4x4"}
    tolerations = [
        {"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "cloud.google.com/gke-queued", "operator": "Exists", "effect": "NoSchedule"},
    ]
    pod = consuming_pod(nodeSelector=dict(own_selector), tolerations=copy.deepcopy(tolerations))
    ops = webhook.patch_for(pod, NS)
    assert ops == [
        {"op": "add", "path": "/spec/nodeSelector/autoscaling.gke.io~1provisioning-request", "value": RR_NAME}
    ]
    patched = apply(pod, ops)
    assert patched["spec"]["nodeSelector"] == {**own_selector, "autoscaling.gke.io/provisioning-request": RR_NAME}
    assert patched["spec"]["tolerations"] == tolerations


def test_a_toleration_that_does_not_cover_the_taint_gets_the_queued_one_beside_it() -> None:
    wrong = {"key": "cloud.google.com/gke-queued", "operator": "Equal", "value": "false", "effect": "NoSchedule"}
    pod = consuming_pod(tolerations=[dict(wrong)])
    patched = apply(pod, webhook.patch_for(pod, NS))
    assert patched["spec"]["tolerations"] == [wrong, QUEUED_TOLERATION]


def test_a_selector_naming_another_request_is_replaced_by_the_pods_own() -> None:
    other = webhook.resize_request_name(NS, "rayjob-job-1-fghij-dws-prov-1")
    pod = consuming_pod(nodeSelector={"autoscaling.gke.io/provisioning-request": other})
    patched = apply(pod, webhook.patch_for(pod, NS))
    assert patched["spec"]["nodeSelector"] == {"autoscaling.gke.io/provisioning-request": RR_NAME}


def test_a_bound_pod_is_not_patched_again() -> None:
    pod = consuming_pod()
    once = apply(pod, webhook.patch_for(pod, NS))
    assert webhook.patch_for(once, NS) == []


@pytest.mark.parametrize(
    "annotations",
    [
        {},
        {"autoscaling.x-k8s.io/provisioning-class-name": "queued-provisioning.gke.io"},
        # Another class (Kueue's check-capacity, say): GKE binds only queued-provisioning requests.
        {
            "autoscaling.x-k8s.io/consume-provisioning-request": REQUEST,
            "autoscaling.x-k8s.io/provisioning-class-name": "check-capacity.autoscaling.x-k8s.io",
        },
        {"autoscaling.x-k8s.io/consume-provisioning-request": REQUEST},
    ],
)
def test_other_pods_are_left_alone(annotations: dict[str, str]) -> None:
    pod = consuming_pod()
    pod["metadata"]["annotations"] = annotations
    assert webhook.patch_for(pod, NS) == []


def test_the_deprecated_annotations_bind_too() -> None:
    pod = consuming_pod()
    pod["metadata"]["annotations"] = {
        "cluster-autoscaler.kubernetes.io/consume-provisioning-request": REQUEST,
        "cluster-autoscaler.kubernetes.io/provisioning-class-name": "queued-provisioning.gke.io",
    }
    assert apply(pod, webhook.patch_for(pod, NS))["spec"]["nodeSelector"] == {
        "autoscaling.gke.io/provisioning-request": RR_NAME
    }


def test_the_review_uses_the_requests_namespace_and_answers_its_uid() -> None:
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": "u-1", "operation": "CREATE", "namespace": "team-a", "object": consuming_pod()},
    }
    answer = webhook.review_response(review)
    assert answer["apiVersion"] == "admission.k8s.io/v1" and answer["kind"] == "AdmissionReview"
    response = answer["response"]
    assert (response["uid"], response["allowed"], response["patchType"]) == ("u-1", True, "JSONPatch")
    ops = json.loads(base64.b64decode(response["patch"]))
    assert apply(consuming_pod(), ops)["spec"]["nodeSelector"] == {
        "autoscaling.gke.io/provisioning-request": webhook.resize_request_name("team-a", REQUEST)
    }
    plain = {"request": {"uid": "u-2", "operation": "CREATE", "namespace": NS, "object": {"spec": {}}}}
    assert webhook.review_response(plain)["response"] == {"uid": "u-2", "allowed": True}


@pytest.fixture()
def server() -> Iterator[webhook.WebhookServer]:
    running = webhook.WebhookServer().start()
    yield running
    running.stop()


def _post(server: webhook.WebhookServer, body: bytes, path: str = webhook.PATH) -> Any:
    context = ssl.create_default_context(cadata=server.ca_bundle.decode())
    url = server.url.replace(webhook.PATH, path)
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, context=context, timeout=10) as resp:
        return json.loads(resp.read())


def test_the_server_answers_over_tls_trusted_by_its_own_ca_bundle(server: webhook.WebhookServer) -> None:
    assert server.url.startswith("https://127.0.0.1:") and server.url.endswith("/mutate-pods")
    review = {"request": {"uid": "u-3", "operation": "CREATE", "namespace": NS, "object": consuming_pod()}}
    answer = _post(server, json.dumps(review).encode())
    ops = json.loads(base64.b64decode(answer["response"]["patch"]))
    assert apply(consuming_pod(), ops)["spec"]["nodeSelector"] == {"autoscaling.gke.io/provisioning-request": RR_NAME}
    with pytest.raises(urllib.error.HTTPError) as bad:
        _post(server, b"{not json")
    assert bad.value.code == 400
    with pytest.raises(urllib.error.HTTPError) as elsewhere:
        _post(server, json.dumps(review).encode(), "/validate")
    assert elsewhere.value.code == 404
    # The configuration the API server gets names this server and trusts exactly its CA.
    [hook] = server.configuration()["webhooks"]
    assert hook["clientConfig"] == {"url": server.url, "caBundle": base64.b64encode(server.ca_bundle).decode()}


def test_the_configuration_is_narrow_and_fails_closed() -> None:
    [hook] = webhook.configuration("https://127.0.0.1:1/mutate-pods", b"ca")["webhooks"]
    assert hook["rules"] == [
        {
            "operations": ["CREATE"],
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "resources": ["pods"],
            "scope": "Namespaced",
        }
    ]
    assert hook["failurePolicy"] == "Fail" and hook["sideEffects"] == "None"
    condition, _queued = hook["matchConditions"]
    for key in webhook.CONSUME_ANNOTATIONS:
        assert f"'{key}' in object.metadata.annotations" in condition["expression"]
    [expression] = hook["namespaceSelector"]["matchExpressions"]
    assert expression["operator"] == "NotIn" and "kube-system" in expression["values"]


def test_the_configuration_calls_it_only_for_pods_of_the_queued_class() -> None:
    """Both conditions must hold (matchConditions are ANDed): a consume annotation and the queued class."""
    [hook] = webhook.configuration("https://127.0.0.1:1/mutate-pods", b"ca")["webhooks"]
    consumes, queued = (c["expression"] for c in hook["matchConditions"])
    assert "'autoscaling.x-k8s.io/consume-provisioning-request' in object.metadata.annotations" in consumes
    for key in webhook.CLASS_ANNOTATIONS:
        assert f"object.metadata.annotations['{key}'] == 'queued-provisioning.gke.io'" in queued
    assert queued.startswith("has(object.metadata.annotations) && (")


def _tls_client(server: webhook.WebhookServer) -> http.client.HTTPSConnection:
    host, port = server.httpd.server_address[:2]
    context = ssl.create_default_context(cadata=server.ca_bundle.decode())
    return http.client.HTTPSConnection(str(host), int(port), context=context, timeout=5)


def test_a_client_that_never_handshakes_stalls_only_its_own_connection() -> None:
    """A connection that sends nothing holds its own thread until the handshake timeout, never the others'."""
    running = webhook.WebhookServer(handshake_timeout=1.0).start()
    try:
        host, port = running.httpd.server_address[:2]
        silent = socket.create_connection((str(host), int(port)))
        silent.settimeout(5)
        started = time.monotonic()
        review = {"request": {"uid": "u-4", "operation": "CREATE", "namespace": NS, "object": consuming_pod()}}
        assert _post(running, json.dumps(review).encode())["response"]["uid"] == "u-4"
        assert time.monotonic() - started < 1.0  # answered while the silent client still holds its handshake
        assert silent.recv(1) == b""  # closed by the server once its handshake timed out
        assert time.monotonic() - started < 4.0
        silent.close()
    finally:
        running.stop()


def test_a_body_over_the_cap_is_refused_without_being_read(server: webhook.WebhookServer) -> None:
    client = _tls_client(server)
    client.putrequest("POST", webhook.PATH)
    client.putheader("Content-Type", "application/json")
    client.putheader("Content-Length", str(webhook.MAX_BODY_BYTES + 1))
    client.endheaders()  # and no body: the server must answer without waiting for it
    assert client.getresponse().status == 413
    client.close()
    assert webhook.MAX_BODY_BYTES == 3 * 1024 * 1024


@pytest.mark.parametrize("length", [None, "-1", "many"])
def test_a_missing_or_bad_content_length_is_refused(server: webhook.WebhookServer, length: str | None) -> None:
    client = _tls_client(server)
    client.putrequest("POST", webhook.PATH, skip_accept_encoding=True)
    if length is not None:
        client.putheader("Content-Length", length)
    client.endheaders()
    assert client.getresponse().status in (400, 411)
    client.close()
