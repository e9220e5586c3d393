"""The reservations the regions keeper reads come from the manager's own inventory (docs/regions.md, "Reservations
read"): the regions playbook lists each region's reservation plans as `planb regions keep --reservation`, and the
regions_keeper role refuses, before any call, one in a project the manager does not allow (planb's policy: the keeper
reads with the manager's token). No API server is reached: the role's first call fails on an empty kubeconfig."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

from planb import paths
from tests.support.integration.gke.modules import ansible_playbook

ROLE_PLAY = """- name: The regions keeper's role alone
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Run the regions keeper on the manager
      ansible.builtin.include_role:
        name: planb.gke.regions_keeper
"""
REFUSAL = "in the project or one of the reservation projects (planb's policy: the keeper reads with the manager's token"
REGIONS_PLAY = paths.REPO / "collections/ansible_collections/planb/gke/playbooks/regions.yml"
INVENTORY = {
    "all": {
        "vars": {
            "ansible_connection": "local",
            "planb_project_id": "planb-local",
            "ansible_python_interpreter": sys.executable,
        },
        "children": {
            "planb_manager": {"hosts": {"manager": {}}},
            "planb_regions": {
                "hosts": {
                    "us-east5": {
                        "planb_zone": "us-east5-b",
                        "planb_plans": [
                            {"name": "reserved", "kind": "reservation", "reservation": "tpu-res"},
                            {"name": "dws", "kind": "dws"},
                        ],
                    },
                    "europe-west4": {
                        "planb_zone": "europe-west4-a",
                        "planb_plans": [
                            {
                                "name": "shared",
                                "kind": "reservation",
                                "reservation": "r",
                                "reservation_project": "owner-project",
                            }
                        ],
                    },
                    "asia-northeast1": {"planb_zone": "asia-northeast1-b"},
                }
            },
        },
    }
}


def _role(tmp_path: Path, reservations: list[str], projects: list[str], **extra: object) -> str:
    (tmp_path / "kubeconfig").write_text("")
    (tmp_path / "play.yml").write_text(ROLE_PLAY)
    settings = {
        "regions_keeper_regions": ["us-east5"],
        "regions_keeper_image": "planb:0.1.0",
        "regions_keeper_dispatch": True,
        "regions_keeper_advice_url": "https://compute.googleapis.com",
        "regions_keeper_project": "planb-local",
        "regions_keeper_reservations": reservations,
        "regions_keeper_reservation_projects": projects,
        **extra,
    }
    done = ansible_playbook(
        "-i", "localhost,", "-c", "local", str(tmp_path / "play.yml"),
        "-e", f"ansible_python_interpreter={sys.executable}",
        "-e", f"regions_keeper_kubeconfig={tmp_path / 'kubeconfig'}",
        "-e", json.dumps(settings),
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode != 0, out[-3000:]
    return out


def test_a_reservation_in_a_project_the_manager_does_not_allow_is_refused_before_any_call(tmp_path: Path) -> None:
    shared = "europe-west4/shared=projects/owner-project/zones/europe-west4-a/reservations/r"
    out = _role(tmp_path, ["us-east5/reserved=zones/us-east5-b/reservations/tpu-res", shared], [])
    assert REFUSAL in " ".join(out.split()), out[-3000:]
    assert "Create the keeper's ServiceAccount" not in out, out[-3000:]
    allowed = _role(tmp_path, [shared], ["owner-project"])  # named: past the checks, to the first call
    assert REFUSAL not in " ".join(allowed.split()), allowed[-3000:]
    assert "TASK [planb.gke.regions_keeper : Create the keeper's ServiceAccount" in allowed, allowed[-3000:]


def test_the_regions_playbook_names_each_reservation_plan_of_its_inventory_for_the_keeper(tmp_path: Path) -> None:
    """The regions playbook's own two tasks that list them, run on an inventory of three regions: one reservation plan
    in the manager's project, one shared from another (whose project the keeper is then allowed to read in)."""
    plays = yaml.safe_load(REGIONS_PLAY.read_text())
    tasks = [
        t for t in plays[0]["tasks"] if "planb_manager_reservations" in json.dumps(t.get("ansible.builtin.set_fact"))
    ]
    assert len(tasks) == 2, tasks
    keeper = next(t for t in plays[0]["tasks"] if t.get("vars", {}).get("regions_keeper_reservation_projects"))
    show = {"ansible.builtin.copy": {"dest": str(tmp_path / "out.json"), "content": "{{ found | to_json }}"}}
    show["vars"] = {
        "found": {
            "reservations": keeper["vars"]["regions_keeper_reservations"],
            "projects": keeper["vars"]["regions_keeper_reservation_projects"],
        }
    }
    play = [
        {
            "hosts": "manager",
            "gather_facts": False,
            "vars": {
                "planb_manager_regions": "{{ groups.planb_regions }}",
                "planb_regions_keeper_advice_url": "https://compute.googleapis.com",
            },
            "tasks": [*tasks, show],
        }
    ]
    (tmp_path / "play.yml").write_text(yaml.safe_dump(play))
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(INVENTORY))
    done = ansible_playbook("-i", str(tmp_path / "inventory.yml"), str(tmp_path / "play.yml"))
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    found = json.loads((tmp_path / "out.json").read_text())
    assert sorted(found["reservations"]) == [
        "europe-west4/shared=projects/owner-project/zones/europe-west4-a/reservations/r",
        "us-east5/reserved=zones/us-east5-b/reservations/tpu-res",
    ]
    assert found["projects"] == ["owner-project"]


def test_calendar_mode_without_an_advice_url_is_refused_before_any_call(tmp_path: Path) -> None:
    """`--calendar-after` asks advice.calendarMode at the advice URL: the role refuses the bound without one, before
    it creates anything (the keeper itself refuses the same at start, which in a pod would be a crash loop)."""
    out = _role(tmp_path, [], [], regions_keeper_calendar_after=3600, regions_keeper_advice_url="")
    assert "an advice URL for calendar mode (where advice.calendarMode is asked)" in " ".join(out.split()), out[-3000:]
    assert "Create the keeper's ServiceAccount" not in out, out[-3000:]
