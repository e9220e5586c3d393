"""A region's MultiKueue kubeconfig Secret as the multikueue role writes it (an https server, its CA, a token), the
token of a real JWT shape with the claims a test gives: what the regions keeper (planb.regions.keeper.unreached)
and `planb status` (planb.status.regions) read of it, decoded unverified."""

from __future__ import annotations

import base64
import json

import yaml

PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def jwt(**claims: object) -> str:
    """A token whose payload holds `claims` and a ServiceAccount's subject (its signature is not checked)."""

    def part(obj: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    return f"{part({'alg': 'RS256'})}.{part({**claims, 'sub': 'system:serviceaccount:x:y'})}.c2ln"


def kubeconfig_data(token: str) -> dict[str, str]:
    """The Secret's `data`: one cluster, user and context, the user's `token`."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "r",
                "cluster": {
                    "server": "https://203.0.113.7",
                    "certificate-authority-data": base64.b64encode(PEM.encode()).decode(),
                },
            }
        ],
        "users": [{"name": "u", "user": {"token": token}}],
        "contexts": [{"name": "c", "context": {"cluster": "r", "user": "u"}}],
        "current-context": "c",
    }
    return {"kubeconfig": base64.b64encode(yaml.safe_dump(config).encode()).decode()}
