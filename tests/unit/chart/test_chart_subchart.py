"""The chart as a subchart: an umbrella chart, Argo CD or Flux installs planb as a dependency.

Helm hands a subchart the parent's ``global`` values (always, if only ``global: {}``) and the ``enabled`` switch a
dependency's ``condition`` names; a schema with ``additionalProperties: false`` at the top refused both, so planb
failed as any chart's dependency. Both render, and a nested planb renders the objects a standalone one does.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from planb.build import golden
from tests.support.shared.chart.helm import YAML_LOADER, Helm

V6E = golden.CHART_DIR / "values" / "tpu-v6e-4x4.yaml"


def _objects(stdout: str) -> list[dict[str, object]]:
    return sorted(
        (doc for doc in yaml.load_all(stdout, Loader=YAML_LOADER) if doc),
        key=lambda doc: (str(doc["kind"]), str(doc["metadata"]["name"])),  # type: ignore[index]
    )


@pytest.mark.parametrize("mode", ["job", "queues"])
def test_global_values_render(helm: Helm, mode: str) -> None:
    done = helm("template", "job-1", str(golden.CHART_DIR), "-f", str(V6E), "--set", f"mode={mode}",
                "--set", "global.foo=1", "--set", "enabled=true")  # fmt: skip
    assert done.returncode == 0, done.stderr
    plain = helm("template", "job-1", str(golden.CHART_DIR), "-f", str(V6E), "--set", f"mode={mode}")
    assert _objects(done.stdout) == _objects(plain.stdout)  # planb reads neither


def test_enabled_is_a_switch(helm: Helm) -> None:
    done = helm("template", "job-1", str(golden.CHART_DIR), "--set-string", "enabled=yes")
    assert done.returncode != 0
    assert "/enabled" in done.stderr and "want boolean" in done.stderr


def _umbrella(tmp_path: Path, planb_values: dict[str, object]) -> Path:
    """A parent chart with planb as a condition-switched dependency, its copy under charts/ (no registry)."""
    parent = tmp_path / "umbrella"
    shutil.copytree(golden.CHART_DIR, parent / "charts" / "planb")
    chart = yaml.safe_load((golden.CHART_DIR / "Chart.yaml").read_text())
    (parent / "Chart.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v2",
                "name": "umbrella",
                "version": "0.1.0",
                "dependencies": [
                    {
                        "name": "planb",
                        "version": chart["version"],
                        "repository": "file://../planb",
                        "condition": "planb.enabled",
                    }
                ],
            }
        )
    )
    (parent / "values.yaml").write_text(yaml.safe_dump({"global": {"imageRegistry": "example"}, "planb": planb_values}))
    return parent


@pytest.mark.parametrize("mode", ["job", "queues"])
def test_a_nested_planb_renders_what_a_standalone_one_does(helm: Helm, tmp_path: Path, mode: str) -> None:
    profile = yaml.safe_load(V6E.read_text())
    parent = _umbrella(tmp_path, {**profile, "enabled": True, "mode": mode})
    nested = helm("template", "job-1", str(parent), "--set", "global.foo=1")
    assert nested.returncode == 0, nested.stderr
    alone = helm("template", "job-1", str(golden.CHART_DIR), "-f", str(V6E), "--set", f"mode={mode}")
    assert alone.returncode == 0, alone.stderr
    assert _objects(nested.stdout) == _objects(alone.stdout)


def test_the_condition_turns_planb_off(helm: Helm, tmp_path: Path) -> None:
    parent = _umbrella(tmp_path, {"enabled": False})
    done = helm("template", "job-1", str(parent))
    assert done.returncode == 0, done.stderr
    assert _objects(done.stdout) == []
