"""docs/first-run.md's rule: every step an operator takes is either tested here, with the test named, or
marked Google-only; and every test it names exists."""

from __future__ import annotations

import re

from planb import paths

PAGE = paths.REPO / "docs" / "first-run.md"
MARKS = ("**Tested", "**Google-only")


def _sections() -> dict[str, str]:
    parts = re.split(r"^## ", PAGE.read_text(), flags=re.M)[1:]
    return {part.splitlines()[0]: part for part in parts}


def test_every_step_is_marked_tested_or_google_only() -> None:
    sections = _sections()
    assert len(sections) >= 10, sorted(sections)
    unmarked = [title for title, text in sections.items() if not any(mark in text for mark in MARKS)]
    assert unmarked == [], f"steps with neither {' nor '.join(MARKS)}: {unmarked}"


def test_every_gcloud_command_sits_in_a_step_that_says_what_is_google_only() -> None:
    """gcloud acts on a real project; the page says which of its effects no machine here can test."""
    offending = []
    for title, text in _sections().items():
        blocks = re.findall(r"^```[a-z]*\n(.*?)^```", text, flags=re.M | re.S)
        commands = [line for block in blocks for line in block.splitlines() if line.lstrip().startswith("gcloud ")]
        if commands and "**Google-only" not in text:
            offending.append((title, commands))
    assert offending == []


def test_every_test_the_page_names_exists() -> None:
    named = set(re.findall(r"`(tests/[\w/]+\.py)", PAGE.read_text()))
    assert named, "the page names no test"
    missing = sorted(path for path in named if not (paths.REPO / path).is_file())
    assert missing == []


def test_the_spot_notice_paragraph_is_the_catalog_s() -> None:
    """The 120 s Spot notice, its GKE version and its fields, as planb.catalog.versions holds
    them (the capacity simulator runs the same function)."""
    from planb.catalog import versions

    text = _sections()["10. The first job"]
    start = text.index("**A Spot plan's termination notice.**")
    paragraph = " ".join(text[start:].split())
    assert f"{versions.SPOT_SHUTDOWN_SECONDS} s after the preemption notice" in paragraph
    assert f"first {versions.SPOT_SHUTDOWN_SECONDS - versions.SPOT_CRITICAL_PODS_SECONDS} s" in paragraph
    assert f"extend that to {versions.SPOT_EXTENDED_SHUTDOWN_SECONDS} s" in paragraph
    assert f"GKE {versions.version_text(versions.SPOT_EXTENDED_SHUTDOWN_MIN)} or later" in paragraph
    assert versions.DOC_SPOT_TERMINATION in paragraph and versions.DOC_NODE_SYSTEM_CONFIG in paragraph
    assert f"shutdownGracePeriodSeconds: {versions.SPOT_EXTENDED_SHUTDOWN_SECONDS}" in paragraph
    assert f"shutdownGracePeriodCriticalPodsSeconds: {versions.SPOT_CRITICAL_PODS_SECONDS}" in paragraph
    assert versions.spot_shutdown_seconds(
        {"shutdownGracePeriodSeconds": 120, "shutdownGracePeriodCriticalPodsSeconds": 15},
        versions.version_text(versions.SPOT_EXTENDED_SHUTDOWN_MIN),
    ) == (120, 15)


def test_the_rights_step_names_the_quota_project_s_right() -> None:
    from ansible_collections.planb.gke.plugins.module_utils import iam

    text = " ".join(_sections()["3. Rights"].split())
    assert f"`{iam.QUOTA_PROJECT_RIGHT}` there (role `{iam.QUOTA_PROJECT_ROLE}`, {iam.DOC_QUOTA_PROJECT})" in text
    assert "`SERVICE_DISABLED`" in text and "any other 403 is reported in Google's words" in text
