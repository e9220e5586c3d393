"""planb.gke's options' relations are declared in the argument specs: AnsibleModule refuses each
combination they rule out before any of planb's code runs, so before any API call, and gke_cluster's and
gke_node_pool's validate_only action (answered on the controller) refuses it the same way.

module_utils/validate.py and credentials.py keep the rules on values; a null or empty value that a relation counts
as given still meets them (the last cases)."""

from __future__ import annotations

import importlib
from typing import Any
from unittest import mock

import pytest
from ansible.module_utils import basic
from ansible.module_utils.common.arg_spec import ModuleArgumentSpecValidator
from ansible.module_utils.testing import patch_module_args
from ansible_collections.planb.gke.plugins.module_utils.args import AUTH_ARGSPEC, with_relations
from ansible_collections.planb.gke.plugins.module_utils.credentials import check_auth
from ansible_collections.planb.gke.plugins.module_utils.errors import GkeError
from ansible_collections.planb.gke.plugins.module_utils.iam import NEEDS
from ansible_collections.planb.gke.plugins.module_utils.node_pool_request import NodePoolRequest
from ansible_collections.planb.gke.plugins.module_utils.validate_pool import validate_node_pool

MODULES = (
    "gcp_iam_check",
    "gcp_project_check",
    "gcp_quota_check",
    "gcp_reservation_info",
    "gcp_service",
    "gcp_storage_bucket",
    "gke_cluster",
    "gke_cluster_info",
    "gke_node_pool",
    "gke_node_pool_info",
)
AUTH: dict[str, Any] = {"project": "planb-test", "auth_kind": "none", "api_endpoint": "http://127.0.0.1:9"}
POOL: dict[str, Any] = {
    **AUTH,
    "name": "pool",
    "cluster": "tpu-cluster",
    "location": "us-east5-b",
    "machine_type": "a3-highgpu-8g",
}
RESERVED: dict[str, Any] = {**POOL, "reservation_affinity": "SPECIFIC_RESERVATION", "reservation": "tpu-res"}
GPUS: dict[str, Any] = {**POOL, "accelerator_type": "nvidia-h100-80gb", "accelerator_count": 8}


def _without(args: dict[str, Any], *names: str) -> dict[str, Any]:
    return {key: value for key, value in args.items() if key not in names}


#: (module, arguments, AnsibleModule's message): one case per declared relation.
REFUSED: list[tuple[str, dict[str, Any], str]] = [
    (
        "gke_node_pool",
        {**POOL, "autoscaling": {"min_node_count": 0, "total_max_node_count": 4}},
        "parameters are mutually exclusive: min_node_count|total_max_node_count found in autoscaling",
    ),
    (
        "gke_node_pool",
        {**POOL, "autoscaling": {"max_node_count": 4, "total_min_node_count": 0}},
        "parameters are mutually exclusive: max_node_count|total_min_node_count found in autoscaling",
    ),
    (
        "gke_node_pool",
        _without(RESERVED, "reservation"),
        "reservation_affinity is SPECIFIC_RESERVATION but all of the following are missing: reservation",
    ),
    (
        "gke_node_pool",
        _without(RESERVED, "reservation_affinity"),
        "missing parameter(s) required by 'reservation': reservation_affinity",
    ),
    (
        "gke_node_pool",
        _without(GPUS, "accelerator_type"),
        "parameters are required together: accelerator_type, accelerator_count",
    ),
    (
        "gke_node_pool",
        _without(GPUS, "accelerator_count"),
        "parameters are required together: accelerator_type, accelerator_count",
    ),
    ("gke_node_pool", _without(POOL, "machine_type"), "state is present but all of the following are missing"),
    *[
        (
            name,
            {
                **POOL,
                "auth_kind": "serviceaccount",
                "needs": list(NEEDS)[:1],
                "services": ["container.googleapis.com"],
                "needed": 4,
            },
            "auth_kind is serviceaccount but any of the following are missing: service_account_file, "
            "service_account_contents",
        )
        for name in MODULES
    ],
    (
        "gke_cluster",
        {**AUTH, "name": "c", "location": "us-east5-b", "auth_kind": "accesstoken"},
        "missing: access_token",
    ),
    (
        "gke_cluster",
        {**AUTH, "name": "c", "location": "us-east5-b", "subnetwork": "s", "cluster_secondary_range_name": "pods"},
        "parameters are required together: cluster_secondary_range_name, services_secondary_range_name",
    ),
    (
        "gke_cluster",
        {
            **AUTH,
            "name": "c",
            "location": "us-east5-b",
            "cluster_secondary_range_name": "pods",
            "services_secondary_range_name": "services",
        },
        "missing parameter(s) required by 'cluster_secondary_range_name': subnetwork",
    ),
]


@pytest.fixture(autouse=True)
def _no_credentials_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The credential options' env fallbacks (GCP_ACCESS_TOKEN, ...) would fill what the cases leave out."""
    for spec in AUTH_ARGSPEC.values():
        for variable in (spec.get("fallback") or (None, []))[1]:
            monkeypatch.delenv(variable, raising=False)


class _Failed(Exception):
    pass


def _fail_json(self: basic.AnsibleModule, **kwargs: Any) -> None:
    raise _Failed(kwargs["msg"])


def _module(name: str) -> Any:
    return importlib.import_module(f"ansible_collections.planb.gke.plugins.modules.{name}")


def _args_for(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """The case's arguments, less the options this module does not take."""
    return {key: value for key, value in args.items() if key in _module(name).ARGUMENT_SPEC}


@pytest.mark.parametrize(("name", "args", "message"), REFUSED)
def test_a_declared_relation_refuses_before_the_module_runs(name: str, args: dict[str, Any], message: str) -> None:
    module = _module(name)
    never = mock.Mock(side_effect=AssertionError("planb's code ran: the relation did not refuse"))
    with (
        patch_module_args(_args_for(name, args)),
        mock.patch.object(basic.AnsibleModule, "fail_json", _fail_json),
        mock.patch.object(module, "main_wrapper", never),
        pytest.raises(_Failed) as failed,
    ):
        module.main()
    assert message in str(failed.value), str(failed.value)
    never.assert_not_called()


def _validate_only(name: str, args: dict[str, Any]) -> dict[str, Any]:
    action_class = importlib.import_module(f"ansible_collections.planb.gke.plugins.action.{name}").ActionModule
    task = mock.MagicMock(args={**args, "validate_only": True}, async_val=0, check_mode=False, diff=False)
    action = action_class(task, mock.MagicMock(), None, mock.MagicMock(), mock.MagicMock(), None)
    with mock.patch("ansible.plugins.action.ActionBase.run", return_value={}):
        result: dict[str, Any] = action.run(task_vars={})
    return result


@pytest.mark.parametrize(
    ("name", "args", "message"), [case for case in REFUSED if case[0] in ("gke_cluster", "gke_node_pool")]
)
def test_validate_only_refuses_what_the_module_refuses(name: str, args: dict[str, Any], message: str) -> None:
    result = _validate_only(name, _args_for(name, args))
    assert result["failed"] is True and message in result["msg"], result


@pytest.mark.parametrize("name", MODULES)
def test_each_relation_names_options_of_its_module(name: str) -> None:
    module = _module(name)
    relations, spec = module.RELATIONS, module.ARGUMENT_SPEC
    named: set[str] = set()
    for key, value, required, *_any in relations.get("required_if", []):
        named |= {key, *required}
        assert value in (spec[key].get("choices") or [value]), (key, value)
    for group in relations.get("required_together", []) + relations.get("mutually_exclusive", []):
        named |= set(group)
    for key, required in relations.get("required_by", {}).items():
        named |= {key, *required}
    assert named <= set(spec), named - set(spec)
    for option in spec.values():
        for group in option.get("mutually_exclusive", []):
            assert set(group) <= set(option["options"]), group


def test_the_pool_module_and_its_action_share_one_declaration() -> None:
    action = importlib.import_module("ansible_collections.planb.gke.plugins.action.gke_node_pool").ActionModule
    assert action.RELATIONS is _module("gke_node_pool").RELATIONS
    assert with_relations({"required_if": [1]}, required_if=[2], required_by={"a": "b"}) == {
        "required_if": [1, 2],
        "required_by": {"a": "b"},
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({**RESERVED, "reservation": None}, "reservation None must be a reservation name"),
        ({**RESERVED, "reservation_affinity": "ANY_RESERVATION"}, "only consumed with reservation_affinity SPECIFIC"),
        ({**GPUS, "accelerator_count": 0}, "needs accelerator_count of at least 1"),
    ],
)
def test_values_a_relation_counts_as_given_still_meet_the_domain_rules(args: dict[str, Any], message: str) -> None:
    """A relation counts an option set to null as given; validate.py's rules on the value refuse it."""
    module = _module("gke_node_pool")
    checked = ModuleArgumentSpecValidator(module.ARGUMENT_SPEC, **module.RELATIONS).validate(args)
    assert not checked.error_messages, checked.error_messages
    params = checked.validated_parameters
    with pytest.raises(GkeError, match="nothing was sent to GKE") as refused:
        validate_node_pool(NodePoolRequest.of(params))
    assert message in str(refused.value), str(refused.value)


@pytest.mark.parametrize(
    ("credential", "message"),
    [
        ({"auth_kind": "accesstoken", "access_token": ""}, "access_token (GCP_ACCESS_TOKEN) is empty"),
        ({"auth_kind": "serviceaccount", "service_account_file": ""}, "service_account_contents"),
    ],
)
def test_a_blank_credential_the_relation_counts_as_given_is_refused(credential: dict[str, Any], message: str) -> None:
    module = _module("gke_cluster")
    args = {"name": "c", "location": "us-east5-b", "project": "planb-test", **credential}
    checked = ModuleArgumentSpecValidator(module.ARGUMENT_SPEC, **module.RELATIONS).validate(args)
    assert not checked.error_messages, checked.error_messages
    with pytest.raises(GkeError, match="Nothing was sent to GKE") as refused:
        check_auth(checked.validated_parameters)
    assert message in str(refused.value), str(refused.value)
