"""gke_cluster's and gke_node_pool's options are read once into a typed request (module_utils/cluster_request.py,
node_pool_request.py), so a request holds every option of its module's argument spec, one field each, with the
spec's default: an option added to the spec without a field would be dropped silently, a field without an option
would never be set, and a default of the request's own could drift from the one the module documents. The
credential's options (args.AUTH_ARGSPEC) are resolved into the request's ``access`` (credentials.Access)."""

from __future__ import annotations

import importlib
from dataclasses import fields
from typing import Any

import pytest
from ansible_collections.planb.gke.plugins.module_utils.args import AUTH_ARGSPEC
from ansible_collections.planb.gke.plugins.module_utils.cluster_request import ClusterRequest
from ansible_collections.planb.gke.plugins.module_utils.credentials import Access
from ansible_collections.planb.gke.plugins.module_utils.node_pool_request import NodePoolRequest

#: The options Access resolves: every credential and endpoint option but the project, which the modules address.
ACCESS_OPTIONS = set(AUTH_ARGSPEC) - {"project"}
#: Fields that are no option: the resolved credential, and whether Ansible runs the module in check mode.
NOT_OPTIONS = {"access", "check_mode"}
#: module -> (its request, the options every task gives it: the argument spec's required ones).
REQUESTS: dict[str, tuple[Any, dict[str, Any]]] = {
    "gke_cluster": (ClusterRequest, {"name": "c", "location": "us-east5-b"}),
    "gke_node_pool": (NodePoolRequest, {"name": "p", "cluster": "c", "location": "us-east5-b"}),
}


def _spec(module: str) -> dict[str, dict[str, Any]]:
    spec: dict[str, dict[str, Any]] = importlib.import_module(
        f"ansible_collections.planb.gke.plugins.modules.{module}"
    ).ARGUMENT_SPEC
    return spec


def _fields(request: Any) -> set[str]:
    return {f.name for f in fields(request)} - NOT_OPTIONS


@pytest.mark.parametrize("module", sorted(REQUESTS))
def test_every_option_of_the_module_has_a_field_of_its_request(module: str) -> None:
    request, _required = REQUESTS[module]
    missing = set(_spec(module)) - ACCESS_OPTIONS - _fields(request)
    assert not missing, f"{module} options without a {request.__name__} field (dropped silently): {sorted(missing)}"


@pytest.mark.parametrize("module", sorted(REQUESTS))
def test_every_field_of_the_request_is_an_option_of_the_module(module: str) -> None:
    request, _required = REQUESTS[module]
    extra = _fields(request) - set(_spec(module))
    assert not extra, f"{request.__name__} fields that are no {module} option (never set): {sorted(extra)}"


@pytest.mark.parametrize("module", sorted(REQUESTS))
def test_an_option_not_given_takes_the_argument_specs_default(module: str) -> None:
    request_class, required = REQUESTS[module]
    request = request_class.of(required)
    spec = _spec(module)
    differ = {
        name: (getattr(request, name), spec[name].get("default"))
        for name in _fields(request_class) - set(required) - {"project"}
        if getattr(request, name) != spec[name].get("default")
    }
    assert not differ, f"{request_class.__name__} (value, the spec's default) where they differ: {differ}"
    # The ones given are read as given, the check mode as Ansible runs the module.
    assert {name: getattr(request, name) for name in required} == required
    assert request_class.of(required, True).check_mode is True and request.check_mode is False


@pytest.mark.parametrize("module", sorted(REQUESTS))
def test_the_credentials_options_are_resolved_into_the_requests_access(module: str) -> None:
    assert set(_spec(module)) >= ACCESS_OPTIONS
    assert {f.name for f in fields(Access)} >= ACCESS_OPTIONS
    request_class, required = REQUESTS[module]
    given = {**required, "project": "planb-test", "auth_kind": "none", "api_endpoint": "http://127.0.0.1:9"}
    request = request_class.of({**given, "timeout": 60, "poll_interval": 0.5})
    assert request.project == "planb-test" and request.access == Access.of(
        {**given, "timeout": 60, "poll_interval": 0.5}
    )
    assert request.access.error is None and request.access.loopback and request.access.timeout == 60
