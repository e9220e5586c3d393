"""A capacity kind is one entry of ``planb.catalog.rung_kinds``.

Its copies (the collection's ``_generated/rung_kinds.py``, the chart's ``files/rung-kinds.yaml`` and schema enum) are
current; no hand-written file of the product lists kinds or compares a kind with a name; and a kind added to a copy
of the catalog, its copies generated from that copy, reaches every part that differs by kind (the ladder filter, the
day-0 check's quotas and flex-start zones, the playbooks' ``planb.gke.rung_kinds``, the chart, the regions keeper)
with no other file changed. What such a kind still needs is the stand-ins' behaviour: the GKE emulator's rules for a
pool field no kind set before and the capacity simulator's nodes for it (DEVELOPING.md, "Add a capacity rung").
"""

from __future__ import annotations

import ast
import importlib
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from planb import paths
from planb.build import chart_kinds, collection
from planb.catalog import rung_kinds
from planb.regions.dispatcher import google_advice as advice
from planb.regions.dispatcher.ledger import Key
from tests.support.shared.chart.helm import Helm
from tests.support.shared.chart.ladders import FOUR, PROFILE, quota

COLLECTION = paths.REPO / "collections" / "ansible_collections" / "planb" / "gke"
#: A kind planb does not have: a future reservation in calendar mode, whose VMs are RESERVATION_BOUND
#: (https://cloud.google.com/compute/docs/instances/about-reservation-bound-vms), consumed by name like a reservation.
CALENDAR = rung_kinds.RungKind(
    name="calendar",
    summary="a future reservation in calendar mode",
    doc_url="https://cloud.google.com/compute/docs/instances/about-reservation-bound-vms",
    pool_settings={"reservation_affinity": "SPECIFIC_RESERVATION"},
    quota=None,
    provisioning_model="RESERVATION_BOUND",
    queued=False,
    one_per_ladder=False,
    admission_means_capacity=True,
    reservation_bound=True,
)
EXTENDED = (*rung_kinds.KINDS, CALENDAR)


def _module(name: str) -> Any:
    return importlib.import_module(f"ansible_collections.planb.gke.plugins.{name}")


def test_the_copies_are_the_catalog() -> None:
    assert collection.stale() == [], "stale: run `make values`"
    for path, content in chart_kinds.expected().items():
        assert path.read_text() == content, f"{path} is stale: run `make values`"
    assert (
        _module("module_utils.rung_kinds").names() == rung_kinds.names() == ["reservation", "on-demand", "dws", "spot"]
    )


# ---- no other list of kinds ----------------------------------------------------------------------------------------
_NAMES = "|".join(re.escape(name) for name in rung_kinds.names())
_QUOTED = re.compile(rf"""['"]({_NAMES})['"]""")
_FLOW_LIST = re.compile(rf"\[\s*(?:{_NAMES})\s*(?:,\s*(?:{_NAMES})\s*)+\]")
_COMPARED = re.compile(
    rf"""kind['"]?\)?(?:\s*\|\s*default\([^)]*\))?\s*(?:==|!=|,\s*'eq',)\s*['"]({_NAMES})['"]"""
    rf"""|\beq\s+\S*kind\s+"({_NAMES})\""""
)


def _hand_written() -> Iterator[Path]:
    """The product's hand-written files that could differ by kind: not the catalog's entries, their generated copies,
    the stand-ins (planb.local), the filters' documentation (examples of ladders) or the tests."""
    yield from (p for p in (paths.REPO / "src" / "planb").rglob("*.py") if "local" not in p.parts)
    yield from (p for p in COLLECTION.rglob("*") if p.suffix in (".py", ".yml") and "_generated" not in p.parts)
    yield from (paths.REPO / "charts" / "planb" / "templates").glob("*")


def _python_lists(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        items = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
        if isinstance(node, (ast.Dict, ast.List, ast.Tuple, ast.Set)) and items is not None:
            found = {i.value for i in items if isinstance(i, ast.Constant) and i.value in rung_kinds.names()}
            if len(found) > 1:
                out.append(f"{path}:{node.lineno}: lists kinds {sorted(found)}")
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            named = [s.value for s in sides if isinstance(s, ast.Constant) and s.value in rung_kinds.names()]
            if named and "kind" in ast.unparse(node):
                out.append(f"{path}:{node.lineno}: compares a kind with {named[0]!r}")
    return out


def _text_lists(path: Path) -> list[str]:
    out = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.lstrip().startswith(("#", "{{/*")) or (path.parent.name == "filter" and path.suffix == ".yml"):
            continue
        if len(set(_QUOTED.findall(line))) > 1 or _FLOW_LIST.search(line) or _COMPARED.search(line):
            out.append(f"{path}:{number}: {line.strip()}")
    return out


def test_no_hand_written_product_file_lists_the_kinds() -> None:
    """Which kinds there are, and what each does, is read from the catalog everywhere else."""
    found = []
    for path in _hand_written():
        if path == Path(rung_kinds.__file__) or not path.is_file():
            continue
        found += _python_lists(path) if path.suffix == ".py" else _text_lists(path)
    assert found == []


# ---- a new kind ----------------------------------------------------------------------------------------------------
@pytest.fixture
def calendar(monkeypatch: pytest.MonkeyPatch) -> None:
    """The catalog with CALENDAR, and the collection's copy generated from it (the catalog's copy, as make values)."""
    monkeypatch.setattr(rung_kinds, "KINDS", EXTENDED)
    monkeypatch.setattr(_module("module_utils._generated.rung_kinds"), "FACTS", collection.rung_kind_facts(EXTENDED))


def _plan(name: str, kind: str, **more: Any) -> dict[str, Any]:
    return {"name": name, "kind": kind, "slices": 1, "nodepool": f"{name}-pool", **more}


def test_the_ladder_filter_takes_the_new_kind(calendar: None) -> None:
    ladder = [_plan("cal", "calendar", reservation="fr1"), _plan("cal2", "calendar", reservation="fr2")]
    plans = _module("filter.ladder").plans([*ladder, _plan("dws", "dws")], PROFILE, project="p1")
    assert plans[0]["settings"]["reservation_affinity"] == "SPECIFIC_RESERVATION"
    assert plans[0]["settings"]["reservation"] == "fr1" and plans[1]["settings"]["reservation"] == "fr2"
    assert all(pool["plan_kind"] == "calendar" for pool in plans[0]["pools"])
    with pytest.raises(AnsibleFilterError, match="kind calendar needs reservation"):
        _module("filter.ladder").plans([_plan("cal", "calendar")], PROFILE)


def test_without_the_entry_the_kind_is_refused() -> None:
    with pytest.raises(AnsibleFilterError, match="kind 'calendar' is not one planb knows"):
        _module("filter.ladder").plans([_plan("cal", "calendar", reservation="fr1")], PROFILE)


def test_the_playbooks_filter_and_the_day0_check_read_the_new_kind(calendar: None) -> None:
    kinds = _module("filter.rung_kinds")
    assert kinds.rung_kinds("name")[-1] == "calendar"
    assert kinds.rung_kinds("reservation_bound") == ["reservation", "calendar"]
    assert kinds.rung_kinds("admission_means_capacity") == ["reservation", "dws", "calendar"]
    assert "calendar" not in kinds.rung_kinds("quota", among=["on-demand", "preemptible"])
    check = _module("module_utils.project_check")
    params = {"machine_type": "ct6e-standard-4t", "needed": 16, "default_pool_machine_type": "", "rungs": []}
    assert check.quota_needs(dict(params, rungs=[{"name": "cal", "kind": "calendar"}])) == []
    assert [n[2] for n in check.quota_needs(dict(params, rungs=[{"name": "s", "kind": "spot"}]))] == ["preemptible"]


def test_the_regions_keeper_asks_advice_for_its_provisioning_model(calendar: None) -> None:
    request = advice.capacity_request(Key("r1", "calendar", "shape"), ["us-east5-b"], "a3-highgpu-8g", 1)
    assert request["instanceProperties"]["scheduling"]["provisioningModel"] == "RESERVATION_BOUND"
    assert not advice.queued("calendar") and advice.queued("dws")


def test_the_chart_renders_its_flavor_from_the_generated_copy(helm: Helm, tmp_path: Path) -> None:
    chart = tmp_path / "planb"
    shutil.copytree(chart_kinds.CHART_DIR, chart)
    values = tmp_path / "ladder.yaml"
    ladder = [*FOUR, {"name": "cal", "kind": "calendar", "reservation": "fr1", "quota": quota(1)}]
    values.write_text(yaml.safe_dump({"mode": "queues", "queues": {"ladder": ladder}}))
    args = ("template", "job-1", str(chart), "-f", str(chart / "values" / f"{PROFILE}.yaml"), "-f", str(values))
    refused = helm(*args)
    assert refused.returncode != 0 and "/queues/ladder/4/kind': value must be one of" in refused.stderr
    chart_kinds.write(chart, EXTENDED)
    rendered = helm(*args)
    assert rendered.returncode == 0, rendered.stderr
    flavors = {
        o["metadata"]["name"]: o for o in yaml.safe_load_all(rendered.stdout) if o and o["kind"] == "ResourceFlavor"
    }
    assert flavors["cal"]["metadata"]["annotations"]["planb.dev/reservation"] == "fr1"
    assert flavors["cal"]["spec"]["nodeLabels"]["planb.dev/plan"] == "cal"
    assert "tolerations" not in flavors["cal"]["spec"]
    without = [{k: v for k, v in r.items() if k != "reservation"} if r["name"] == "cal" else r for r in ladder]
    values.write_text(yaml.safe_dump({"mode": "queues", "queues": {"ladder": without}}))
    missing = helm(*args)
    assert missing.returncode != 0 and "reservation" in missing.stderr
