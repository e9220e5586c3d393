"""docs/security.md, "The region token", says what the rights the multikueue role grants a region's token allow,
next to those rights: a right added to the role's Role without its consequence written fails here."""

from __future__ import annotations

from typing import Any

import yaml

from planb import paths
from planb.build.collection import COLLECTION_DIR

WORKER = COLLECTION_DIR / "roles" / "multikueue" / "tasks" / "worker.yml"
VARS = COLLECTION_DIR / "roles" / "multikueue" / "vars" / "main.yml"
KUEUE = "kubernetes-sigs/kueue@v0.19.2 "

#: (resources, a verb) the Role grants -> what the section must say it allows, each phrase verbatim.
CONSEQUENCES: dict[tuple[str, str], tuple[str, ...]] = {
    ("rayjobs", "create"): (
        "run any pod there, unqueued",
        "as any ServiceAccount of that namespace, the job's Workload Identity account included",
        "`manageJobsWithoutQueueName` defaults to\n  false",
        KUEUE + "apis/config/v1beta2/configuration_types.go#L46-L53",
    ),
    ("rayclusters", "create"): ("Create on RayJobs and RayClusters is create of any pod template",),
    ("workloads", "delete"): (
        "delete any Workload or RayJob there",
        KUEUE + "pkg/controller/jobframework/utils.go#L309-L311",
        "not RBAC's",
    ),
    ("rayjobs", "delete"): ("delete any Workload or RayJob there",),
    ("workloads/status", "update"): ("mark any Workload there admitted or finished",),
    # The token's own renewal (multikueue_token_self_renewal): its own successor only, and what that costs.
    ("serviceaccounts/token", "create"): (
        "create tokens of itself and of no\nother account (`resourceNames`)",
        "a copied token can renew itself too",
        "stays valid until its ServiceAccount is deleted",
    ),
}
ADVICE = ("give each manager a namespace of its own", "put in it only the job's own ServiceAccount")


def section() -> str:
    text = (paths.REPO / "docs" / "security.md").read_text()
    start = text.index("## The region token")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else len(text)]


def role_rules() -> list[dict[str, Any]]:
    """The rules of the Roles (namespaced writes) the worker tasks apply: written in a task's definition, or in the
    role's vars (the objects one k8s task applies together) that a task's definition names."""
    objects: list[Any] = []
    for task in yaml.safe_load(WORKER.read_text()):
        definition = (task.get("kubernetes.core.k8s") or {}).get("definition")
        objects.extend(definition if isinstance(definition, list) else [definition])
    for listed in yaml.safe_load(VARS.read_text()).values():
        objects.extend(listed if isinstance(listed, list) else [])
    return [rule for obj in objects if isinstance(obj, dict) and obj.get("kind") == "Role" for rule in obj["rules"]]


def granted() -> set[tuple[str, str]]:
    return {(res, verb) for rule in role_rules() for res in rule["resources"] for verb in rule["verbs"]}


def test_the_role_grants_the_rights_whose_consequences_are_written() -> None:
    assert set(CONSEQUENCES) <= granted(), "the role's Role changed: update CONSEQUENCES and docs/security.md"


def test_each_granted_write_has_its_consequence_stated() -> None:
    text = section()
    missing = [
        f"{res} {verb}: {phrase!r}"
        for (res, verb), phrases in CONSEQUENCES.items()
        if (res, verb) in granted()
        for phrase in phrases
        if phrase not in text
    ]
    assert not missing, "docs/security.md, 'The region token', does not say:\n" + "\n".join(missing)


def test_every_write_the_role_grants_is_covered() -> None:
    writes = {(res, verb) for res, verb in granted() if verb in ("create", "delete") or res.endswith("/status")}
    uncovered = writes - set(CONSEQUENCES)
    # workloads create (a copy) is bounded by the delete/status consequences; patch on status as update.
    assert uncovered <= {("workloads", "create"), ("rayclusters", "delete"), ("workloads/status", "patch")}


def test_the_advice_is_given() -> None:
    text = section()
    assert all(phrase in text for phrase in ADVICE)
