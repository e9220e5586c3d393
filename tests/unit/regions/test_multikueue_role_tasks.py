"""The multikueue role's tasks as written: what a task applies and whether it may print
it. The integration test (tests/integration/regions/test_multikueue_token.py) runs them on a real API server; these
read them, so they fail in a second where a task is edited.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import yaml

from planb.build.collection import COLLECTION_DIR

TASKS = COLLECTION_DIR / "roles" / "multikueue" / "tasks"
READS = {"get", "list", "watch"}
#: The one right a region token has in its own namespace: to ask for its successor (planb regions renew-tokens).
OWN_TOKEN = {
    "apiGroups": [""],
    "resources": ["serviceaccounts/token"],
    "resourceNames": ["{{ multikueue_service_account }}"],
    "verbs": ["create"],
}


def tasks(name: str) -> Iterator[dict[str, Any]]:
    """Every task of tasks/<name>, those inside blocks included."""
    pending = list(yaml.safe_load((TASKS / name).read_text()))
    while pending:
        task = pending.pop(0)
        pending[:0] = task.get("block", [])
        yield task


#: The role's own variables (vars/main.yml), which a task's definition may name.
ROLE_VARS: dict[str, Any] = yaml.safe_load((TASKS.parent / "vars" / "main.yml").read_text())


def objects_of(task: dict[str, Any]) -> list[dict[str, Any]]:
    """The objects a kubernetes.core.k8s task applies or deletes: its definition (one object, a list, or an expression
    of variables of the task's vars or the role's, each a list: every object of each), or the kind it names."""
    args = task.get("kubernetes.core.k8s") or {}
    definition = args.get("definition")
    if isinstance(definition, str):
        known = {**ROLE_VARS, **task.get("vars", {})}
        named = [known[name] for name in re.findall(r"[a-z_]+", definition) if name in known]
        definition = [obj for value in named for obj in (value if isinstance(value, list) else [value])]
    if not definition:
        return [{"kind": args["kind"]}] if args.get("kind") else []
    return definition if isinstance(definition, list) else [definition]


def objects(name: str) -> list[dict[str, Any]]:
    return [obj for task in tasks(name) for obj in objects_of(task)]


def holds_a_token(task: dict[str, Any]) -> bool:
    """A task whose arguments or result may carry a region token: it applies, deletes or reads a Secret, or it runs a
    command that asks for a token."""
    argv = (task.get("ansible.builtin.command") or {}).get("argv") or []
    return (
        any(obj.get("kind") == "Secret" for obj in objects_of(task))
        or (task.get("kubernetes.core.k8s_info") or {}).get("kind") == "Secret"
        or "token" in argv
    )


def test_every_task_that_holds_a_token_is_no_log() -> None:
    held = [(name, task) for name in ("worker.yml", "manager.yml") for task in tasks(name) if holds_a_token(task)]
    assert len(held) >= 3, held  # the manager's Secret read and written, the token asked for
    for name, task in held:
        assert task.get("no_log") is True, f"{name}: {task['name']!r} may print a region token"


def test_no_legacy_token_secret_is_applied_on_a_region() -> None:
    for task in tasks("worker.yml"):
        state = (task.get("kubernetes.core.k8s") or {}).get("state")
        for obj in objects_of(task):
            assert not (obj.get("type") == "kubernetes.io/service-account-token" and state != "absent"), task["name"]


def test_the_region_token_reads_cluster_wide_and_writes_only_by_role_bindings() -> None:
    made = objects("worker.yml")
    kinds = {obj["kind"] for obj in made}
    assert {"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"} <= kinds, kinds
    for obj in made:
        if obj["kind"] == "ClusterRole":
            verbs = {verb for rule in obj["rules"] for verb in rule["verbs"]}
            assert verbs <= READS, f"cluster-wide rights beyond reading: {sorted(verbs - READS)}"
        if (
            obj["kind"] in ("Role", "RoleBinding")
            and obj["metadata"]["name"] == "{{ multikueue_service_account }}-token"
        ):
            # The token's own renewal: beside its ServiceAccount, a TokenRequest for that account and no other.
            assert obj["metadata"]["namespace"] == "{{ multikueue_namespace }}", obj
            assert obj["kind"] == "RoleBinding" or obj["rules"] == [OWN_TOKEN], obj
        elif obj["kind"] in ("Role", "RoleBinding"):
            assert obj["metadata"]["namespace"] == "{{ multikueue_local_queue_namespace }}", obj
        if obj["kind"] == "RoleBinding":
            assert obj["roleRef"]["kind"] == "Role", obj


def test_the_managers_cluster_queue_admits_only_the_local_queue_namespace() -> None:
    (queue,) = [obj for obj in objects("manager.yml") if obj["kind"] == "ClusterQueue"]
    assert queue["spec"]["namespaceSelector"] == {
        "matchLabels": {"kubernetes.io/metadata.name": "{{ multikueue_local_queue_namespace }}"}
    }, queue["spec"]


def test_the_right_to_create_tokenreviews_is_checked_unhidden_before_the_hidden_tokenreview() -> None:
    """The TokenReview task is no_log, so a missing `create tokenreviews` is checked
    first by a task that sends no token and is not hidden, and each failure is said by a fail task quoting no token."""
    worker = list(tasks("worker.yml"))

    def argv(task: dict[str, Any]) -> list[str]:
        return list((task.get("ansible.builtin.command") or {}).get("argv") or [])

    (check,) = [
        i
        for i, t in enumerate(worker)
        if argv(t)[2:] == ["auth", "can-i", "create", "tokenreviews.authentication.k8s.io"]
    ]
    (review,) = [
        i for i, t in enumerate(worker) if "TokenReview" in str((t.get("ansible.builtin.command") or {}).get("stdin"))
    ]
    assert check < review and worker[check].get("no_log") is not True and worker[review].get("no_log") is True
    says = [t for t in worker if "ansible.builtin.fail" in t]
    assert len(says) == 2, [t["name"] for t in says]
    assert "system:auth-delegator" in says[0]["ansible.builtin.fail"]["msg"]
    for task in says:
        msg = task["ansible.builtin.fail"]["msg"]
        assert "token_review.stdout" not in msg and "stored_token" not in msg and "multikueue_token " not in msg, msg
