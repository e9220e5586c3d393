"""A MultiKueue region's kubeconfig, as planb reads it out of a Secret on the manager (`planb status`, `planb regions
keep`): an https ``server``, ``certificate-authority-data`` and a ``token``, nothing else, and nothing written to
disk. The operator's own kubeconfig goes through `planb.kubeconfig.load`, which takes everything kubectl does."""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from typing import Any, NoReturn
from urllib.parse import urlsplit, urlunsplit

import yaml

from planb.kubeconfig import Connection, KubeconfigError, parse


class RegionKubeconfigError(KubeconfigError):
    """A region's kubeconfig (from a Secret on the manager) sets what planb's policy refuses; names the field and the
    fix."""


# A region's kubeconfig: what planb takes from a Secret that whoever writes kueue-system's Secrets on the manager
# controls. Kueue refuses much of the rest for MultiKueue itself (kubernetes-sigs/kueue@v0.19.2
# pkg/controller/admissionchecks/multikueue/multikueuecluster.go#L950-L1040: validateKubeconfig refuses tokenFile,
# insecure-skip-tls-verify, certificate-authority paths and an empty server; validateRestConfig bearer token files,
# a host that is neither an IP nor a DNS-1123 subdomain, basic auth, exec plugins and auth providers; the gate that
# allowed such kubeconfigs, MultiKueueAllowInsecureKubeconfigs, is locked off in 0.19: kubernetes-sigs/kueue@v0.19.2
# pkg/features/kube_features.go#L773-L777). Kueue still takes client certificate and key files, an http server and
# no CA at all. planb's policy is narrower: the three fields the planb.gke multikueue role writes (an https server,
# the region's CA inline, a ServiceAccount token), because each other one either runs a command here (exec), reads a
# file here (tokenFile, client-certificate, client-key, certificate-authority), sends the token in the clear or to
# anyone (http, insecure-skip-tls-verify, no CA, proxy-url) or authenticates as someone else (as, username, ...).
REGION_CLUSTER_FIELDS = frozenset({"server", "certificate-authority-data"})
REGION_USER_FIELDS = frozenset({"token"})
#: A region's token: printable ASCII, no space nor control character (a ServiceAccount token is a JWT). An HTTP
#: header cannot carry CR or LF (http.client raises ValueError, quoting the value, before anything is sent).
_TOKEN = re.compile(r"[\x21-\x7e]+")
#: A server URL as planb uses it: printable ASCII, no space (checked before urlsplit, which drops some characters).
_URL_CHARS = re.compile(r"[\x21-\x7e]+")
REGION_CONTEXT_FIELDS = frozenset({"cluster", "user", "namespace"})
#: Why a field is refused, where there is more to say than "not one of the three".
_WHY = {
    "exec": "it runs a command on this machine",
    "tokenFile": "it reads a file of this machine",
    "client-certificate": "it reads a file of this machine",
    "client-key": "it reads a file of this machine",
    "certificate-authority": "it reads a file of this machine",
    "insecure-skip-tls-verify": "it sends the token to whoever answers",
    "proxy-url": "it sends the request through another host",
    "auth-provider": "it runs a provider's code on this machine",
}
_REGION_FIX = (
    "Fix: a region's kubeconfig holds an https server, certificate-authority-data and a token, nothing else (the "
    "planb.gke multikueue role writes such a Secret: converge it again, or edit the Secret)"
)
#: A DNS-1123 subdomain (k8s.io/apimachinery/pkg/util/validation: IsDNS1123Subdomain), as Kueue checks the host.
DNS_1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def is_dns_subdomain(name: str) -> bool:
    """Whether `name` is a DNS-1123 subdomain (at most 253 characters), as Kubernetes object names must be."""
    return len(name) <= 253 and DNS_1123_SUBDOMAIN.fullmatch(name) is not None


def _refuse_extra(entry: dict[str, Any], allowed: frozenset[str], kind: str, source: str) -> dict[str, Any]:
    name = entry.get("name")
    section = entry.get(kind)
    if section is None:
        section = {}
    if not isinstance(section, dict):
        raise RegionKubeconfigError(f"{source}: {kind} {name!r} is not a mapping. {_REGION_FIX}")
    extra = sorted(str(k) for k in section if k not in allowed)
    if extra:
        why = "; ".join(dict.fromkeys(f"{k!r}: {_WHY[k]}" for k in extra if k in _WHY))
        raise RegionKubeconfigError(
            f"{source}: {kind} {name!r} sets {', '.join(repr(k) for k in extra)}, which planb does not take from a "
            f"region's kubeconfig{f' ({why})' if why else ''}. {_REGION_FIX}"
        )
    return section


def _region_server(server: Any, cluster: str, source: str) -> str:
    """The cluster's server: https, a host that is an IP or a DNS-1123 subdomain (Kueue's isValidHostname), no user
    name or password, query or fragment."""
    if not isinstance(server, str) or not server:
        raise RegionKubeconfigError(f"{source}: cluster {cluster!r} has no server. {_REGION_FIX}")
    # Before urlsplit, which drops tab, CR and LF and leading spaces and C0 from what it checks (Python's
    # urllib.parse), so what is checked is what is used.
    if not _URL_CHARS.fullmatch(server):
        raise RegionKubeconfigError(
            f"{source}: cluster {cluster!r} has a server with a space, a control character or a character outside "
            f"printable ASCII. {_REGION_FIX}"
        )
    try:
        url = urlsplit(server)
        url.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        raise RegionKubeconfigError(
            f"{source}: cluster {cluster!r} has a server that is not a URL. {_REGION_FIX}"
        ) from None
    if url.scheme.lower() != "https":
        raise RegionKubeconfigError(
            f"{source}: cluster {cluster!r} has a server that is not https ({url.scheme or 'no scheme'}): planb sends "
            f"a region's token over https only. {_REGION_FIX}"
        )
    if url.username is not None or url.password is not None:
        raise RegionKubeconfigError(
            f"{source}: cluster {cluster!r} has a server URL with a user name or password. {_REGION_FIX}"
        )
    if url.query or url.fragment:
        raise RegionKubeconfigError(
            f"{source}: cluster {cluster!r} has a server URL with a query or fragment. {_REGION_FIX}"
        )
    host = (url.hostname or "").lower()
    try:
        ipaddress.ip_address(host)
    except ValueError:
        if not is_dns_subdomain(host):
            raise RegionKubeconfigError(
                f"{source}: cluster {cluster!r} has a server whose host is neither an IP address nor a DNS name. "
                f"{_REGION_FIX}"
            ) from None
    # Rebuilt from the parts checked; the scheme as written may be HTTPS: planb.kube decides on TLS from "https://".
    return urlunsplit(("https", url.netloc, url.path.rstrip("/"), "", ""))


def _region_ca(data: Any, cluster: str, source: str) -> str:
    """The cluster's certificate-authority-data as PEM text."""
    if not isinstance(data, str) or not data:
        raise RegionKubeconfigError(
            f"{source}: cluster {cluster!r} has no certificate-authority-data, so any certificate a public CA signed "
            f"for its host would be trusted with the token. {_REGION_FIX}"
        )
    try:
        pem = base64.b64decode(data, validate=True).decode("ascii")
    except (binascii.Error, ValueError):
        pem = ""
    if "-----BEGIN CERTIFICATE-----" not in pem:
        raise RegionKubeconfigError(
            f"{source}: cluster {cluster!r} has certificate-authority-data that is not a base64 PEM certificate. "
            f"{_REGION_FIX}"
        )
    return pem


#: The most bytes a region's kubeconfig may hold: the role's three fields take a few KiB.
MAX_REGION_KUBECONFIG = 1 << 20
#: The deepest a region's kubeconfig may nest mappings and sequences. The role's nests 4 levels (clusters, an entry,
#: its cluster, a field) and kubectl's own output no more; 32 leaves room for any hand-written one, while yaml's
#: composer and constructor recurse once or more per level, so a few thousand levels (a few KiB of "[") exhaust
#: Python's recursion limit, and pure-Python scanning of deep flow nesting is quadratic in the depth.
MAX_REGION_NESTING = 32


def _refuse_aliases(text: str, source: str) -> None:
    """Refuses YAML anchors and aliases, and nesting deeper than MAX_REGION_NESTING, before anything is composed:
    nested aliases ("billion laughs") expand to more objects than memory holds, deep nesting overflows the composer's
    recursion, and the role's kubeconfig has neither. Scanning events is linear in the text, and stops at the first
    level too deep (the scanner reads at most 1024 characters ahead of it)."""
    depth = 0
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                raise RegionKubeconfigError(
                    f"{source} uses YAML anchors or aliases (&, *), which planb does not take in a region's "
                    f"kubeconfig: each alias is expanded again, so a few hundred bytes can stand for billions of "
                    f"nodes. {_REGION_FIX}"
                )
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_REGION_NESTING:
                    mark = event.start_mark  # the place only: the text there is the Secret's
                    where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "an unknown place"
                    raise RegionKubeconfigError(
                        f"{source} has YAML nesting deeper than {MAX_REGION_NESTING} levels (at {where}), which planb "
                        f"does not take in a region's kubeconfig: the role's nests 4. {_REGION_FIX}"
                    )
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError:
        return  # `parse` says where, without quoting the line
    except RecursionError:
        _too_deep(source)


def _too_deep(source: str) -> NoReturn:
    """Raises RegionKubeconfigError for a kubeconfig the YAML library ran out of recursion on (the bound above should
    stop any such one first)."""
    raise RegionKubeconfigError(
        f"{source} has YAML nesting too deep for the YAML library, which planb does not take in a region's "
        f"kubeconfig. {_REGION_FIX}"
    ) from None


def load_region(data: bytes, source: str) -> Connection:
    """The connection a region's kubeconfig describes (`data`, the Secret's bytes); `source` names the Secret in
    messages. Nothing is run, read or written here or later: raises RegionKubeconfigError on any field but an https
    server, certificate-authority-data and a token, in any cluster, user or context of the file."""
    if len(data) > MAX_REGION_KUBECONFIG:
        raise RegionKubeconfigError(
            f"{source} holds {len(data)} bytes, more than the {MAX_REGION_KUBECONFIG} planb reads of a region's "
            f"kubeconfig. {_REGION_FIX}"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise RegionKubeconfigError(f"{source} is not UTF-8 text. {_REGION_FIX}") from None
    _refuse_aliases(text, source)
    try:
        config = parse(text, source, RegionKubeconfigError)
    except RecursionError:
        _too_deep(source)
    if not isinstance(config, dict) or not config.get("current-context"):
        raise RegionKubeconfigError(f"{source} is not a kubeconfig with a current-context. {_REGION_FIX}")
    sections: dict[str, dict[str, dict[str, Any]]] = {"cluster": {}, "user": {}, "context": {}}
    allowed = {"cluster": REGION_CLUSTER_FIELDS, "user": REGION_USER_FIELDS, "context": REGION_CONTEXT_FIELDS}
    for kind, entries in (("cluster", "clusters"), ("user", "users"), ("context", "contexts")):
        listed = config.get(entries) or []
        if not isinstance(listed, list) or not all(isinstance(e, dict) for e in listed):
            raise RegionKubeconfigError(f"{source}: {entries} is not a list of named entries. {_REGION_FIX}")
        for entry in listed:
            sections[kind][str(entry.get("name"))] = _refuse_extra(entry, allowed[kind], kind, source)
    current = str(config["current-context"])
    context = sections["context"].get(current)
    if context is None:
        raise RegionKubeconfigError(f"{source} has no context named {current!r}. {_REGION_FIX}")
    cluster_name, user_name = str(context.get("cluster", "")), str(context.get("user", ""))
    cluster = sections["cluster"].get(cluster_name)
    if cluster is None:
        raise RegionKubeconfigError(f"{source} has no cluster named {cluster_name!r}. {_REGION_FIX}")
    user = sections["user"].get(user_name)
    token = (user or {}).get("token")
    if not isinstance(token, str) or not token:
        raise RegionKubeconfigError(f"{source}: user {user_name!r} has no token. {_REGION_FIX}")
    if not _TOKEN.fullmatch(token):
        # The field named, never the token's text: it is a credential.
        raise RegionKubeconfigError(
            f"{source}: the token of user {user_name!r} holds whitespace, a control character or a character outside "
            f"ASCII, which no ServiceAccount token does and an HTTP header cannot carry. {_REGION_FIX}"
        )
    return Connection(
        server=_region_server(cluster.get("server"), cluster_name, source),
        ca_data=_region_ca(cluster.get("certificate-authority-data"), cluster_name, source),
        token=token,
    )
