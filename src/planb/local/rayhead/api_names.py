"""Object names from the cluster's specs, checked before they go into an API path.

A name the stand-in reads from a spec (a ConfigMap volume's, a RayCluster's authOptions Secret) is whatever the spec's
writer put there. Put into a URL as it is, ``../../kube-system/configmaps/x`` reaches another namespace's object:
urllib3 resolves ``../`` on the client side. So such a name must be a DNS-1123 subdomain, as the API server requires
of ConfigMap and Secret names (planb.regions.access.kubeconfig.is_dns_subdomain, as
planb.regions.access.connection checks a region's kubeconfig Secret), and is quoted whole into the path.
"""

from __future__ import annotations

from urllib.parse import quote

from planb.regions.access.kubeconfig import is_dns_subdomain


def api_name(name: object) -> str | None:
    """`name` quoted for an API path (no '/' left in it), or None when it is not a DNS-1123 subdomain."""
    if not isinstance(name, str) or not is_dns_subdomain(name):
        return None
    return quote(name, safe="")


def refusal(what: str, name: object) -> str:
    """Why `name`, read as `what`, is not read from the API server."""
    return (
        f"planb's policy: {what} names {name!r}, which is not a DNS-1123 subdomain as an object's name must be "
        "(lower-case letters, digits, '-' and '.'; at most 253); nothing is read by that name, since a path in it "
        "would reach another namespace's objects"
    )
