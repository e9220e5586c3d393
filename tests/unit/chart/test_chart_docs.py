"""charts/planb/README.md is helm-docs' render of README.md.gotmpl and values.yaml (`make chart-docs`), not stale."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from planb.build import chart_docs


def test_readme_is_the_fresh_render() -> None:
    """helm-docs renders into its stdout (--dry-run), a temporary place; README.md must hold exactly that."""
    assert chart_docs.render() == chart_docs.README.read_text(), f"{chart_docs.README} is stale: {chart_docs.FIX}"


def test_the_values_table_has_every_value_with_its_description() -> None:
    readme = chart_docs.README.read_text()
    rows = re.findall(r"^\| (\S+) \| (\w+) \| (.*) \| (.*) \|$", readme, flags=re.MULTILINE)
    keys = {key for key, *_ in rows}
    assert {"mode", "accelerator.topology", "queues.ladder", "failover.afterMinutes", "job.training.resume"} <= keys
    assert [key for key, _, _, description in rows if not description.strip()] == [], (
        "values without a `# --` description in values.yaml: document them, then run `make chart-docs`"
    )
    # The text around the table is the template's, and its facts come from Chart.yaml.
    assert "## Security" in readme and "Kueue v0.19.2 and KubeRay v1.6.2" in readme


def test_a_template_helm_docs_cannot_render_is_refused(tmp_path: Path) -> None:
    """helm-docs itself only warns and exits 0; render() turns its warning into an error that names the file."""
    chart = tmp_path / "planb"
    chart.mkdir()
    for name in ("Chart.yaml", "values.yaml"):
        shutil.copy(chart_docs.CHART_DIR / name, chart / name)
    (chart / chart_docs.TEMPLATE.name).write_text('# {{ template "chart.name" . }}\n{{ .NoSuchField }}\n')
    with pytest.raises(chart_docs.ChartDocsError, match=r"(?s)could not render .*README\.md\.gotmpl.*NoSuchField"):
        chart_docs.render(chart)
    (chart / chart_docs.TEMPLATE.name).write_text('# {{ template "chart.name" . }}\n')
    assert chart_docs.render(chart) == "# planb\n"
